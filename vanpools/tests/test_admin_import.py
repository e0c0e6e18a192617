"""The auditors' roster import in the admin: upload, preview, confirm."""

import datetime as dt
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from tests.factories import UserFactory
from vanpools import admin_import
from vanpools.importing import import_data
from vanpools.models import Employee, Rider, RosterUpload, Shift, Vanpool

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
URL = "/admin/vanpools/employee/import/"


def upload(name: str, content: bytes | None = None) -> SimpleUploadedFile:
    data = content if content is not None else (EXAMPLES / name).read_bytes()
    return SimpleUploadedFile(name, data)


def preview(client, roster: SimpleUploadedFile, mapping: SimpleUploadedFile | None = None):
    data = {"roster": roster, "kind": ""}
    if mapping is not None:
        data["mapping"] = mapping
    return client.post(URL, data)


def uploads() -> list[str]:
    return sorted(RosterUpload.objects.values_list("roster_name", flat=True))


def test_the_import_url_is_the_named_admin_route():
    assert reverse("admin:vanpools_roster_import") == URL


def test_the_roster_lists_offer_the_import_to_an_auditor(client, auditor):
    client.force_login(auditor)
    for model in ("employee", "vanpool", "shift"):
        page = client.get(f"/admin/vanpools/{model}/")
        assert f'href="{URL}"' in page.content.decode(), model


def test_a_coordinator_cannot_import(client, coordinator):
    client.force_login(coordinator)
    assert client.get(URL).status_code == 403
    assert client.post(URL, {"roster": upload("vendor-program.json")}).status_code == 403


def test_someone_logged_out_is_sent_to_log_in(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_a_preview_shows_what_would_change_and_saves_nothing(client, auditor):
    client.force_login(auditor)
    response = preview(client, upload("vendor-program.json"), upload("vendor-mapping.yaml"))
    page = response.content.decode()
    assert response.status_code == 200
    assert "Preview of vendor-program.json" in page
    assert '<th scope="row">employees</th><td>7</td><td>0</td><td>0</td>' in page
    assert "HR-1042: new; seat VP-301" in page
    assert "HR-1518 on VP-303 (suspended)" in page
    assert 'name="confirm"' in page
    assert (Shift.objects.count(), Vanpool.objects.count(), Employee.objects.count()) == (0, 0, 0)
    assert len(uploads()) == 1


def test_confirming_imports_the_previewed_file_and_deletes_it(client, auditor):
    client.force_login(auditor)
    page = preview(client, upload("vendor-program.json"), upload("vendor-mapping.yaml"))
    token = page.context["token"]

    response = client.post(URL, {"confirm": "Import", "token": token, "kind": ""}, follow=True)

    assert response.redirect_chain[-1][0] == "/admin/vanpools/employee/"
    shown = [str(message) for message in response.context["messages"]]
    assert shown[0].startswith("Imported: shifts 3 created")
    assert any("HR-1620" in message for message in shown)  # the warnings come along
    assert (Shift.objects.count(), Vanpool.objects.count(), Employee.objects.count()) == (3, 3, 7)
    assert Rider.objects.filter(vanpool__vanpool_id="VP-301").count() == 3
    assert uploads() == []


def test_confirming_the_same_upload_twice_imports_once(client, auditor):
    client.force_login(auditor)
    token = preview(client, upload("vendor-program.json"), upload("vendor-mapping.yaml")).context[
        "token"
    ]
    client.post(URL, {"confirm": "Import", "token": token}, follow=True)

    again = client.post(URL, {"confirm": "Import", "token": token}, follow=True)

    shown = [str(message) for message in again.context["messages"]]
    assert shown == ["That upload is no longer here: upload the file again."]
    assert Employee.objects.count() == 7


@pytest.mark.parametrize("token", ["../../etc", "short", "a" * 80, ""])
def test_a_forged_token_is_refused_plainly(client, auditor, token):
    client.force_login(auditor)
    response = client.post(URL, {"confirm": "Import", "token": token}, follow=True)
    assert response.status_code == 200
    shown = [str(message) for message in response.context["messages"]]
    assert shown == ["That upload is no longer here: upload the file again."]


def test_a_file_with_errors_lists_them_and_offers_no_import(client, auditor):
    client.force_login(auditor)
    content = (
        b"employee_id,first_name,last_name,email,work_site,home_zip\nE-1,Ana,Reyes,x,Site,9453x\n"
    )
    page = preview(client, upload("roster.csv", content)).content.decode()
    assert "home_zip: &#x27;9453x&#x27; is not a US ZIP code" in page
    assert "line 2, email" in page
    assert 'name="confirm"' not in page
    assert uploads() == []  # nothing to confirm, nothing kept


def test_a_dry_run_with_errors_still_shows_the_counts_of_the_good_rows(client, auditor):
    client.force_login(auditor)
    content = (
        b"employee_id,first_name,last_name,email,work_site,home_zip\n"
        b"E-1,Ana,Reyes,ana@example.com,Site,94538\n"
        b"E-2,Bo,Chen,bo@example.com,Site,nope\n"
    )
    response = preview(client, upload("roster.csv", content))
    assert response.context["preview"].counts["employees"]["created"] == 1
    assert response.context["preview"].refused["employees"] == 1


def test_an_export_without_a_mapping_is_told_it_needs_one(client, auditor):
    client.force_login(auditor)
    page = preview(client, upload("hr-export.csv")).content.decode()
    assert "none of Employee ID, Legal Name" in page
    assert "mapping file" in page


@pytest.mark.parametrize(
    ("field", "name", "expected"),
    [
        ("roster", "roster.xlsx", "&#x27;roster.xlsx&#x27; is not a .csv or .json file."),
        ("mapping", "map.ini", "&#x27;map.ini&#x27; is not a .toml or .yaml or .yml file."),
    ],
)
def test_a_file_of_the_wrong_type_is_a_form_error(client, auditor, field, name, expected):
    client.force_login(auditor)
    data = {"roster": upload("vendor-program.json"), field: upload(name, b"x")}
    page = client.post(URL, data).content.decode()
    assert expected in page
    assert 'name="confirm"' not in page


def test_a_bad_mapping_file_is_named_in_the_errors(client, auditor):
    client.force_login(auditor)
    bad = upload("map.toml", b"[employees.columns]\nemployee_id = { form = 'ID' }\n")
    page = preview(client, upload("vendor-program.json"), bad).content.decode()
    assert "employees.columns.employee_id" in page
    assert Employee.objects.count() == 0


def test_a_preview_clears_uploads_left_unconfirmed_for_a_day(client, auditor):
    client.force_login(auditor)
    stale = RosterUpload.objects.create(token="s" * 32, roster_name="old.csv", roster=b"x")
    day_ago = timezone.now() - dt.timedelta(seconds=admin_import.UPLOAD_MAX_AGE_SECONDS + 60)
    RosterUpload.objects.filter(pk=stale.pk).update(created_at=day_ago)

    preview(client, upload("vendor-program.json"), upload("vendor-mapping.yaml"))

    assert uploads() == ["vendor-program.json"]


def test_only_the_uploader_can_confirm_an_upload(client, auditor):
    client.force_login(auditor)
    page = preview(client, upload("vendor-program.json"), upload("vendor-mapping.yaml"))
    other = UserFactory(username="auditor2", is_staff=True, groups=["Auditors"])
    client.force_login(other)

    response = client.post(URL, {"confirm": "Import", "token": page.context["token"]}, follow=True)

    shown = [str(message) for message in response.context["messages"]]
    assert shown == ["That upload is no longer here: upload the file again."]
    assert Employee.objects.count() == 0
    assert uploads() == ["vendor-program.json"]


def test_a_preview_naming_unknown_shifts_offers_no_import(client, auditor):
    client.force_login(auditor)
    page = preview(client, upload("hr-export.csv"), upload("hr-mapping.toml")).content.decode()
    assert "no shift &#x27;DAY&#x27; in this file or already stored" in page
    assert 'name="confirm"' not in page


def test_a_confirm_that_now_fails_shows_the_errors_and_saves_nothing(client, auditor):
    import_data(
        {
            "shifts": [
                {"shift_id": "DAY", "name": "Day", "schedule": "Mon-Fri 06:00-14:30"},
                {"shift_id": "4X10", "name": "4x10", "schedule": "Mon-Thu 07:00-17:30"},
            ],
            "vanpools": [
                {"vanpool_id": "VP-101", "name": "Fremont", "work_site": "Fremont Campus"}
            ],
        }
    )
    client.force_login(auditor)
    page = preview(client, upload("hr-export.csv"), upload("hr-mapping.toml"))
    assert 'name="confirm"' in page.content.decode()
    Vanpool.objects.filter(vanpool_id="VP-101").delete()  # changed since the preview

    response = client.post(URL, {"confirm": "Import", "token": page.context["token"]})

    assert "no vanpool &#x27;VP-101&#x27;" in response.content.decode()
    assert Employee.objects.count() == 0
    assert uploads() == []
