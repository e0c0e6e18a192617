"""Reading through the API: shapes, filters, home-address minimisation, pages, errors."""

import datetime as dt

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from cases.models import Case
from tests.factories import (
    CaseEventFactory,
    CaseFactory,
    EmailThreadFactory,
    EmployeeFactory,
    LeaveFactory,
    MessageFactory,
    PendingActionFactory,
    RiderFactory,
    ShiftFactory,
    VanpoolFactory,
    VerificationFactory,
)
from vanpools.models import Employee, Rider

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(coordinator):
    client = APIClient()
    client.force_login(coordinator)
    return client


@pytest.fixture
def auditor_api(auditor):
    client = APIClient()
    client.force_login(auditor)
    return client


def ids(response, key):
    assert response.status_code == 200, response.content[:300]
    return [row[key] for row in response.json()["results"]]


# --- Shapes ----------------------------------------------------------------------------------


def test_it_shows_a_vanpool_with_its_active_riders_and_open_case(api):
    vanpool = VanpoolFactory(vanpool_id="VP-101", max_commute_miles=None)
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(employee_id="EMP-1002"))
    RiderFactory(
        vanpool=vanpool,
        employee=EmployeeFactory(employee_id="EMP-1001"),
        status=Rider.Status.CANCELLED,
        cancelled_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    )
    case = CaseFactory(vanpool=vanpool)
    body = api.get("/api/vanpools/VP-101").json()
    assert body["open_case"] == case.case_id
    assert body["active_riders"] == 1
    assert body["max_commute_miles"] == 50  # the program default
    assert body["pickup"] == {"lat": 37.5906, "lng": -122.0172}
    assert [r["employee_id"] for r in body["riders"]] == ["EMP-1002"]


def test_it_lists_every_seat_on_a_vanpool_and_filters_them_by_status(api):
    vanpool = VanpoolFactory(vanpool_id="VP-101")
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(employee_id="EMP-1002"))
    RiderFactory(
        vanpool=vanpool,
        employee=EmployeeFactory(employee_id="EMP-1001"),
        status=Rider.Status.CANCELLED,
        cancelled_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
        cancel_reason="CASE-1: location check failed",
    )
    assert ids(api.get("/api/vanpools/VP-101/riders"), "employee_id") == ["EMP-1001", "EMP-1002"]
    cancelled = api.get("/api/vanpools/VP-101/riders?status=cancelled").json()["results"]
    assert [(r["employee_id"], r["cancel_reason"]) for r in cancelled] == [
        ("EMP-1001", "CASE-1: location check failed")
    ]


def test_it_shows_a_case_with_its_verifications_evidence_and_trail(api):
    case = CaseFactory(meta={"reason": "location_mismatch", "failed_checks": ["location"]})
    VerificationFactory(case=case)
    CaseEventFactory(case=case, note="opened by the audit")
    EmailThreadFactory(case=case)
    body = api.get(f"/api/cases/{case.case_id}").json()
    assert body["reason"] == "location_mismatch"
    assert body["thread"] == case.thread.thread_id
    (verification,) = body["verifications"]
    assert verification["verdict"] == "fail"
    assert verification["evidence"][0]["miles"] == 314.2
    assert [e["note"] for e in body["events"]] == ["opened by the audit"]
    assert body["events"][0]["actor"] == "agent:case_manager"


def test_it_lists_a_cases_emails_and_a_threads_messages(api):
    thread = EmailThreadFactory()
    first = MessageFactory(thread=thread, subject="first")
    MessageFactory(thread=thread, subject="second", direction="inbound", status="processed")
    MessageFactory(subject="another case")
    emails = api.get(f"/api/cases/{thread.case.case_id}/emails").json()
    assert [m["subject"] for m in emails["results"]] == ["first", "second"]
    assert emails["results"][0]["message_id"] == first.message_id
    detail = api.get(f"/api/emails/threads/{thread.thread_id}").json()
    assert detail["message_count"] == 2
    assert [m["direction"] for m in detail["messages"]] == ["outbound", "inbound"]


def test_it_shows_an_employees_shift_and_leave(api):
    shift = ShiftFactory(shift_id="DAY", name="Day")
    employee = EmployeeFactory(employee_id="EMP-1001", shift=shift)
    LeaveFactory(employee=employee)
    RiderFactory(employee=employee, vanpool=VanpoolFactory(vanpool_id="VP-101"))
    body = api.get("/api/employees/EMP-1001").json()
    assert body["shift"] == {"shift_id": "DAY", "name": "Day"}
    assert body["vanpool"] == "VP-101"
    assert body["leave"] == [
        {"kind": "pto", "start_date": "2026-11-23", "end_date": "2026-11-27", "note": ""}
    ]
    shifts = api.get("/api/employees/EMP-1001/shifts").json()["results"]
    assert [(s["shift_id"], s["summary"]) for s in shifts] == [("DAY", "Mon–Fri 07:00–16:00")]


# --- Home addresses: only with the permission, as on the dashboard ---------------------------


def test_coordinators_see_the_zip_but_never_the_street_or_coordinates(api):
    EmployeeFactory(
        employee_id="EMP-1001", home_address="12 Elm St", home_lat=37.6, home_lng=-122.0
    )
    for body in (
        api.get("/api/employees/EMP-1001").json(),
        api.get("/api/employees").json()["results"][0],
    ):
        assert body["home_zip"] == "94587"
        assert body["home_address"] is None
        assert body["home"] is None
    assert "12 Elm St" not in api.get("/api/employees").content.decode()


def test_auditors_see_the_street_address_and_coordinates(auditor_api):
    EmployeeFactory(
        employee_id="EMP-1001", home_address="12 Elm St", home_lat=37.6, home_lng=-122.0
    )
    body = auditor_api.get("/api/employees/EMP-1001").json()
    assert body["home_address"] == "12 Elm St"
    assert body["home"] == {"lat": 37.6, "lng": -122.0}


# --- Filters ---------------------------------------------------------------------------------


def test_it_filters_employees_by_site_status_shift_and_vanpool(api):
    night = ShiftFactory(shift_id="NIGHT")
    EmployeeFactory(employee_id="EMP-1", work_site="Reno DC")
    EmployeeFactory(employee_id="EMP-2", status=Employee.Status.ON_LEAVE)
    EmployeeFactory(employee_id="EMP-3", shift=night)
    van = VanpoolFactory(vanpool_id="VP-101")
    RiderFactory(vanpool=van, employee=EmployeeFactory(employee_id="EMP-4"))
    RiderFactory(
        vanpool=van,
        employee=EmployeeFactory(employee_id="EMP-5"),
        status=Rider.Status.CANCELLED,
        cancelled_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    )
    assert ids(api.get("/api/employees?site=Reno DC"), "employee_id") == ["EMP-1"]
    assert ids(api.get("/api/employees?status=on_leave"), "employee_id") == ["EMP-2"]
    assert ids(api.get("/api/employees?shift=NIGHT"), "employee_id") == ["EMP-3"]
    assert ids(api.get("/api/employees?vanpool=VP-101"), "employee_id") == ["EMP-4"]


def test_it_filters_cases_by_status_vanpool_reason_and_opening_date(api):
    with time_machine.travel(dt.datetime(2026, 10, 1, 12, tzinfo=dt.UTC), tick=False):
        old = CaseFactory(vanpool=VanpoolFactory(vanpool_id="VP-1"))
    shift = CaseFactory(
        vanpool=VanpoolFactory(vanpool_id="VP-2"),
        meta={"reason": "shift_mismatch", "failed_checks": ["shift"]},
        status=Case.Status.PENDING_REPLY,
    )
    closed = CaseFactory(
        vanpool=VanpoolFactory(vanpool_id="VP-3"),
        status=Case.Status.CLOSED,
        outcome=Case.Outcome.RESOLVED,
        closed_at=dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
    )
    assert ids(api.get("/api/cases?status=pending_reply"), "case_id") == [shift.case_id]
    assert ids(api.get("/api/cases?vanpool=VP-1"), "case_id") == [old.case_id]
    assert ids(api.get("/api/cases?reason=shift_mismatch"), "case_id") == [shift.case_id]
    assert ids(api.get("/api/cases?outcome=resolved"), "case_id") == [closed.case_id]
    since = ids(api.get("/api/cases?opened_since=2026-11-01"), "case_id")
    assert sorted(since) == sorted([shift.case_id, closed.case_id])


def test_it_filters_vanpools_threads_and_pending_actions(api):
    VanpoolFactory(vanpool_id="VP-1", work_site="Reno DC")
    VanpoolFactory(vanpool_id="VP-2", status="suspended")
    thread = EmailThreadFactory(case=CaseFactory(vanpool=VanpoolFactory(vanpool_id="VP-3")))
    EmailThreadFactory()
    pending = PendingActionFactory(case=thread.case)
    PendingActionFactory(kind="label_reply")
    assert ids(api.get("/api/vanpools?site=Reno DC"), "vanpool_id") == ["VP-1"]
    assert ids(api.get("/api/vanpools?status=suspended"), "vanpool_id") == ["VP-2"]
    assert ids(api.get("/api/emails/threads?vanpool=VP-3"), "thread_id") == [thread.thread_id]
    assert ids(api.get(f"/api/emails/threads?case={thread.case.case_id}"), "thread_id") == [
        thread.thread_id
    ]
    assert ids(api.get("/api/pending-actions?kind=cancel_membership"), "id") == [pending.pk]
    assert ids(api.get(f"/api/pending-actions?case={thread.case.case_id}"), "id") == [pending.pk]
    assert len(ids(api.get("/api/pending-actions?status=pending"), "id")) == 2


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("status=nonsense", "status"),
        ("status=", "status"),
        ("vanpool=", "vanpool"),
        ("opened_since=yesterday", "opened_since"),
        ("reason=ghost", "reason"),
        ("page_size=0", "page_size"),
        ("page_size=201", "page_size"),
        ("page_size=ten", "page_size"),
    ],
)
def test_a_bad_filter_is_a_400_naming_the_field(api, query, field):
    response = api.get(f"/api/cases?{query}")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert list(error["fields"]) == [field]
    assert error["message"].startswith(f"{field}: ")


def test_a_detail_url_ignores_list_filters(api):
    VanpoolFactory(vanpool_id="VP-101")
    assert api.get("/api/vanpools/VP-101?status=inactive").status_code == 200


# --- Pages and query counts ------------------------------------------------------------------


def test_pages_have_count_and_links(api):
    for n in range(5):
        VanpoolFactory(vanpool_id=f"VP-{n}")
    body = api.get("/api/vanpools?page_size=2&page=2").json()
    assert body["count"] == 5
    assert [v["vanpool_id"] for v in body["results"]] == ["VP-2", "VP-3"]
    assert body["next"].endswith("/api/vanpools?page=3&page_size=2")
    assert body["previous"].endswith("/api/vanpools?page_size=2")


def test_a_page_past_the_end_is_a_json_404(api):
    response = api.get("/api/vanpools?page=9")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def _seed_everything(n: int) -> None:
    for i in range(n):
        vanpool = VanpoolFactory(coordinator=None)
        employee = EmployeeFactory()
        RiderFactory(vanpool=vanpool, employee=employee)
        LeaveFactory(employee=employee)
        case = CaseFactory(vanpool=vanpool)
        VerificationFactory(case=case)
        CaseEventFactory(case=case)
        thread = EmailThreadFactory(case=case)
        MessageFactory(thread=thread, employee=employee)
        PendingActionFactory(case=case, rider=Rider.objects.get(employee=employee))
        if i == 0:
            big = VanpoolFactory(vanpool_id="VP-999")
            for _ in range(n):
                RiderFactory(vanpool=big)


def _queries(client: APIClient, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


LISTS = [
    "/api/vanpools",
    "/api/vanpools/VP-999/riders",
    "/api/employees",
    "/api/cases",
    "/api/emails/threads",
    "/api/pending-actions",
]


def test_a_page_costs_the_same_queries_whatever_its_size(
    auditor_api, django_assert_max_num_queries
):
    _seed_everything(8)
    case_id = Case.objects.first().case_id
    for url in [*LISTS, f"/api/cases/{case_id}/emails"]:
        small = _queries(auditor_api, f"{url}?page_size=1")
        large = _queries(auditor_api, f"{url}?page_size=8")
        assert small == large, url
        with django_assert_max_num_queries(10):
            auditor_api.get(f"{url}?page_size=8")


def test_a_detail_costs_the_same_queries_whatever_it_holds(auditor_api):
    small, large = VanpoolFactory(vanpool_id="VP-1"), VanpoolFactory(vanpool_id="VP-2")
    RiderFactory(vanpool=small)
    for _ in range(6):
        RiderFactory(vanpool=large)
    few, many = CaseFactory(vanpool=small), CaseFactory(vanpool=large)
    VerificationFactory(case=few)
    CaseEventFactory(case=few)
    for _ in range(5):
        VerificationFactory(case=many)
        CaseEventFactory(case=many)
    short, long = EmailThreadFactory(case=few), EmailThreadFactory(case=many)
    MessageFactory(thread=short)
    for _ in range(5):
        MessageFactory(thread=long)
    pairs = [
        ("/api/vanpools/VP-1", "/api/vanpools/VP-2"),
        (f"/api/cases/{few.case_id}", f"/api/cases/{many.case_id}"),
        (f"/api/emails/threads/{short.thread_id}", f"/api/emails/threads/{long.thread_id}"),
    ]
    for one, other in pairs:
        assert _queries(auditor_api, one) == _queries(auditor_api, other), one


# --- Unknown things --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/vanpools/VP-404",
        "/api/employees/EMP-404",
        "/api/employees/EMP-404/shifts",
        "/api/cases/CASE-00000404",
        "/api/cases/CASE-00000404/emails",
        "/api/emails/threads/THREAD-00000404",
        "/api/pending-actions/404",
        "/api/pending-actions/99999999999999999",
        "/api/vanpools/VP-404/riders",
        "/api/vanpools/%00",
        "/api/cases/not-a-case",
        "/api/nowhere",
    ],
)
def test_unknown_identifiers_and_paths_are_json_404s(api, path):
    response = api.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "not_found"


def test_a_trailing_slash_is_redirected_keeping_the_method(api):
    response = api.get("/api/vanpools/?status=active")
    assert response.status_code == 308
    assert response["Location"] == "/api/vanpools?status=active"
    assert api.post("/api/cases/", {}, format="json").status_code == 308


def test_the_schema_and_docs_are_served_without_a_cdn(api):
    schema = api.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/cases/{case_id}/emails" in schema.content
    for page in ("/api/docs/", "/api/redoc/"):
        html = api.get(page).content.decode()
        assert "/static/drf_spectacular_sidecar/" in html
        assert "https://" not in html and "<script>" not in html
    script = api.get("/api/docs/?script=")
    assert script.status_code == 200 and b"SwaggerUIBundle" in script.content
