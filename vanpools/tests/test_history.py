"""Every change to a roster record is in its history: who or what, which field, when."""

import datetime as dt
import importlib

import pytest
import time_machine
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Model
from rest_framework.test import APIClient

from caseloop.decisions import approve
from cases.models import PendingAction
from outreach.bounces import record_bounce
from poolpatrol.change_source import changes_by, current_source, door_of
from tests.factories import (
    CaseFactory,
    EmployeeFactory,
    LeaveFactory,
    MessageFactory,
    PendingActionFactory,
    RiderFactory,
    ShiftFactory,
    VanpoolFactory,
)
from vanpools.changes import changes_for_case
from vanpools.importing import import_data, import_file
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool
from vanpools.tests.files import write_json

pytestmark = pytest.mark.django_db

SINCE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def rows(model: type[Model], **lookups):
    return list(model.history.filter(**lookups).order_by("history_date", "history_id"))


def employee_row(**overrides):
    row = {
        "employee_id": "EMP-1003",
        "first_name": "Ana",
        "last_name": "Reyes",
        "email": "ana@example.com",
        "work_site": "Fremont Campus",
        "home_zip": "94536",
        "shift_id": "DAY",
        "vanpool_id": "VP-101",
    }
    return {**row, **overrides}


@pytest.fixture
def program(db):
    shift = ShiftFactory(shift_id="DAY")
    VanpoolFactory(vanpool_id="VP-101")
    VanpoolFactory(vanpool_id="VP-102")
    return shift


# --- Where a change comes from ------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "door"),
    [
        ("/admin/vanpools/employee/1/change/", "admin"),
        ("/api/employees", "api"),
        ("/anymail/postmark/tracking/", "email provider"),
        ("/cases/CASE-0000000A/", "dashboard"),
        ("/", "dashboard"),
    ],
)
def test_a_request_is_recorded_as_coming_through_its_door(path, door):
    assert door_of(path) == door


def test_outside_any_request_a_change_is_the_systems_and_a_block_can_say_otherwise():
    assert current_source().source == "system"
    with changes_by("roster import", "file x.csv"):
        assert current_source().detail == "file x.csv"
    assert current_source().source == "system"


def test_an_unknown_source_is_refused():
    with pytest.raises(ValueError, match="unknown change source"), changes_by("somewhere"):
        pass


# --- The roster import ----------------------------------------------------------------------


def test_an_import_records_each_changed_field_naming_the_file(program, tmp_path):
    import_data({"employees": [employee_row()]}, source="first.json")
    path = write_json(tmp_path, {"employees": [employee_row(home_zip="95376")]})

    with time_machine.travel("2026-11-25T10:00:00-08:00", tick=False):
        import_file(path)

    created, changed = rows(Employee, employee_id="EMP-1003")
    assert (created.history_type, created.home_zip) == ("+", "94536")
    assert created.history_change_reason == "file first.json"
    assert (changed.history_type, changed.home_zip) == ("~", "95376")
    assert changed.history_source == "roster import"
    assert changed.history_change_reason == f"file {path}"
    assert changed.history_user is None
    assert [c.field for c in changed.diff_against(created).changes] == ["home_zip"]


def test_the_imports_bulk_writes_are_recorded_seats_moved_and_leave_replaced(program):
    import_data({"employees": [employee_row(pto="2026-12-01..2026-12-05")]})
    employee = Employee.objects.get(employee_id="EMP-1003")
    old_seat = Rider.objects.get(employee=employee)

    import_data({"employees": [employee_row(vanpool_id="VP-102", pto="2026-12-21")]})

    cancelled = rows(Rider, id=old_seat.pk)[-1]
    assert (cancelled.history_type, cancelled.status) == ("~", "cancelled")
    assert cancelled.cancel_reason == "moved to VP-102 by roster import"
    new_seat = Rider.objects.get(employee=employee, status="active")
    assert [r.history_type for r in rows(Rider, id=new_seat.pk)] == ["+"]
    leave_rows = rows(Leave, employee_id=employee.pk)
    assert [(r.history_type, str(r.start_date)) for r in leave_rows] == [
        ("+", "2026-12-01"),
        ("-", "2026-12-01"),
        ("+", "2026-12-21"),
    ]
    assert {r.history_source for r in [cancelled, *leave_rows]} == {"roster import"}


def test_an_import_that_changes_a_vans_seats_and_miles_records_both(program):
    van = {"vanpool_id": "VP-101", "name": "Fremont 1", "work_site": "Fremont Campus"}
    import_data({"vanpools": [van | {"seats": 11, "miles_per_trip": 20.0}]})

    import_data({"vanpools": [van | {"seats": 12, "miles_per_trip": 24.5}]}, source="vans.csv")

    before, after = rows(Vanpool, vanpool_id="VP-101")[-2:]
    assert (after.seats, after.miles_per_trip) == (12, 24.5)
    assert sorted(c.field for c in after.diff_against(before).changes) == [
        "miles_per_trip",
        "seats",
    ]
    assert (after.history_source, after.history_change_reason) == ("roster import", "file vans.csv")


def test_an_unchanged_reimport_and_a_dry_run_record_nothing(program):
    data = {"employees": [employee_row()]}
    import_data(data)
    before = Employee.history.count() + Rider.history.count()

    import_data(data)
    import_data({"employees": [employee_row(home_zip="95376")]}, dry_run=True)

    assert Employee.history.count() + Rider.history.count() == before


def test_an_admin_upload_is_recorded_with_its_name_and_the_auditor(client, auditor, program):
    import_data({"employees": [employee_row()]})
    client.force_login(auditor)
    body = (
        b"employee_id,first_name,last_name,email,work_site,home_zip\n"
        b"EMP-1003,Ana,Reyes,ana@example.com,Fremont Campus,95376\n"
    )
    preview = client.post(
        "/admin/vanpools/employee/import/",
        {"roster": SimpleUploadedFile("november.csv", body), "kind": ""},
    )
    token = preview.context["token"]

    client.post("/admin/vanpools/employee/import/", {"confirm": "1", "token": token})

    latest = rows(Employee, employee_id="EMP-1003")[-1]
    assert latest.home_zip == "95376"
    assert latest.history_source == "roster import"
    assert latest.history_change_reason == "upload november.csv"
    assert latest.history_user == auditor


# --- People and processes -----------------------------------------------------------------


def test_an_edit_in_the_admin_is_recorded_with_the_person(client, auditor):
    employee = EmployeeFactory(employee_id="EMP-2001", home_zip="94536")
    client.force_login(auditor)
    page = client.get(f"/admin/vanpools/employee/{employee.pk}/change/")
    form = page.context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None}
    data |= {"home_zip": "94538", "shift": employee.shift_id}
    data |= {"leaves-TOTAL_FORMS": "0", "leaves-INITIAL_FORMS": "0"}

    response = client.post(f"/admin/vanpools/employee/{employee.pk}/change/", data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    latest = rows(Employee, employee_id="EMP-2001")[-1]
    assert (latest.home_zip, latest.history_source, latest.history_user) == (
        "94538",
        "admin",
        auditor,
    )


@pytest.mark.parametrize(("door", "path"), [("dashboard", None), ("api", "/api")])
def test_a_cancellation_approved_by_a_person_is_recorded_on_the_seat(
    client, coordinator, door, path
):
    seat = RiderFactory()
    case = CaseFactory(vanpool=seat.vanpool, status="pre_cancel")
    action = PendingActionFactory(
        kind=PendingAction.Kind.CANCEL_MEMBERSHIP,
        case=case,
        rider=seat,
        payload={"employee_id": seat.employee.employee_id},
    )
    with changes_by(door):
        approve(action, by=coordinator, edits={"override": True, "override_reason": "checked"})

    latest = rows(Rider, id=seat.pk)[-1]
    assert (latest.status, latest.history_source) == ("cancelled", door)


def test_an_api_decision_records_the_token_user_and_the_api(coordinator):
    seat = RiderFactory()
    case = CaseFactory(vanpool=seat.vanpool, status="pre_cancel")
    action = PendingActionFactory(
        kind=PendingAction.Kind.CANCEL_MEMBERSHIP,
        case=case,
        rider=seat,
        payload={"employee_id": seat.employee.employee_id},
    )
    client = APIClient()
    client.force_authenticate(coordinator)

    response = client.post(
        f"/api/pending-actions/{action.pk}/approve",
        {"edits": {"override": True, "override_reason": "checked"}},
        format="json",
    )

    assert response.status_code == 200, response.content
    latest = rows(Rider, id=seat.pk)[-1]
    assert (latest.status, latest.history_source, latest.history_user) == (
        "cancelled",
        "api",
        coordinator,
    )


def test_a_bounce_that_marks_an_address_undeliverable_is_recorded():
    employee = EmployeeFactory(email="rider@example.com")
    outbound = MessageFactory(employee=employee, direction="outbound", to=["rider@example.com"])

    with changes_by("email provider"):
        record_bounce(outbound, "rider@example.com", "mailbox full")

    latest = rows(Employee, id=employee.pk)[-1]
    assert latest.email_undeliverable_at is not None
    assert latest.history_source == "email provider"


def test_history_starts_with_a_row_for_each_record_already_stored():
    migration = importlib.import_module("vanpools.migrations.0013_history_baseline_and_permissions")
    shift = Shift.objects.bulk_create([Shift(shift_id="LATE", name="Late", schedule_text="x")])[0]

    migration.baseline(apps, None)

    (first,) = rows(Shift, id=shift.pk)
    assert (first.history_type, first.history_source, first.shift_id) == ("+", "system", "LATE")


# --- What a case page reads -----------------------------------------------------------------


def test_changes_that_matter_read_as_a_person_says_them(program):
    import_data({"employees": [employee_row()]}, source="october.json")
    with time_machine.travel("2026-11-30T09:00:00-08:00", tick=False):
        import_data(
            {"employees": [employee_row(home_zip="95376", pto="2026-12-21..2026-12-23")]},
            source="november.json",
        )

    changes = changes_for_case(
        ["EMP-1003"], "VP-101", since=dt.datetime(2026, 11, 25, tzinfo=dt.UTC), may_see_home=False
    )

    assert [c.text for c in changes] == [
        "home ZIP 94536 → 95376 on 2026-11-30, roster import (file november.json)",
        "PTO 2026-12-21 – 2026-12-23 added on 2026-11-30, roster import (file november.json)",
    ]
    assert {c.subject for c in changes} == {"EMP-1003"}


def test_home_street_and_coordinate_changes_are_for_the_home_address_permission_only():
    employee = EmployeeFactory(employee_id="EMP-3001", home_address="1 Elm St")
    with time_machine.travel("2026-11-30T09:00:00-08:00", tick=False):
        employee.home_address, employee.home_lat, employee.home_lng = "9 Oak Ave", 37.5, -122.0
        employee.save()
    since = dt.datetime(2026, 11, 25, tzinfo=dt.UTC)

    hidden = changes_for_case(["EMP-3001"], "VP-999", since=since, may_see_home=False)
    shown = changes_for_case(["EMP-3001"], "VP-999", since=since, may_see_home=True)

    assert [c.field for c in hidden] == []
    assert {c.field for c in shown} == {"home street address", "home latitude", "home longitude"}
    assert "1 Elm St → 9 Oak Ave" in " ".join(c.what for c in shown)


def test_seat_and_vanpool_changes_are_listed_and_a_seat_outside_the_readers_vanpools_is_not():
    seat = RiderFactory(vanpool__vanpool_id="VP-201", employee__employee_id="EMP-4001")
    other = VanpoolFactory(vanpool_id="VP-202")
    seat.status, seat.cancelled_at = "cancelled", dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
    seat.save()
    Rider.objects.create(vanpool=other, employee=seat.employee, joined=dt.date(2026, 11, 20))
    van = seat.vanpool
    van.pickup_zip = "94536"
    van.save()

    everything = changes_for_case(["EMP-4001"], "VP-201", since=SINCE, may_see_home=False)
    scoped = changes_for_case(
        ["EMP-4001"],
        "VP-201",
        since=SINCE,
        may_see_home=False,
        vanpools=Vanpool.objects.filter(vanpool_id="VP-201"),
    )

    texts = [c.what for c in everything]
    assert "seat on VP-201 active → cancelled" in texts
    assert "seat on VP-202 from 2026-11-20" in texts
    assert "pickup ZIP 94587 → 94536" in texts
    assert not any("VP-202" in c.what for c in scoped)


def test_a_case_page_reads_its_changes_in_the_same_queries_however_many(
    client, coordinator, django_assert_max_num_queries
):
    case = CaseFactory()
    client.force_login(coordinator)

    def flag(count: int, first: int) -> int:
        riders = [f"EMP-6{n:03d}" for n in range(first, first + count)]
        for rider in riders:
            employee = EmployeeFactory(employee_id=rider)
            RiderFactory(employee=employee, vanpool=case.vanpool)
            LeaveFactory(employee=employee)
            employee.home_zip = "94536"
            employee.save()
        case.meta = {"rider_flags": {rider: {"location": "fail"} for rider in riders}}
        case.save()
        with django_assert_max_num_queries(100) as captured:
            page = client.get(f"/cases/{case.case_id}/")
        assert page.content.decode().count("home ZIP 94587 → 94536") == count
        return len(captured)

    assert flag(1, first=0) == flag(12, first=100)
