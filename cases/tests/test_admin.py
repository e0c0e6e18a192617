"""The Django admin: who may do what, constant query counts, readable evidence."""

import datetime as dt
import itertools
from collections.abc import Callable

import pytest
from django.contrib import admin
from django.db import connection
from django.db.models import Model
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agents.models import AgentRun
from cases.lifecycle import transition
from cases.models import Case, CaseEvent, PendingAction, Verification
from outreach.models import EmailThread, Message
from tests.factories import (
    AgentRunFactory,
    CaseEventFactory,
    CaseFactory,
    EmailThreadFactory,
    EmployeeFactory,
    LeaveFactory,
    MessageFactory,
    PendingActionFactory,
    RiderFactory,
    UserFactory,
    VanpoolFactory,
    VerificationFactory,
)
from vanpools.models import (
    BadgeSwipe,
    DataCoverage,
    Employee,
    Holiday,
    Leave,
    ParkingPermit,
    RideDay,
    Rider,
    Shift,
    Trip,
    Vanpool,
    VanpoolMonth,
)

pytestmark = pytest.mark.django_db


def admin_url(model: type[Model], view: str, *args: object) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def closed_case(vanpool: Vanpool) -> Case:
    return CaseFactory(
        vanpool=vanpool, status="closed", outcome="resolved", closed_at=timezone.now()
    )


# One row per model with every relation its list columns show filled in, so a
# column that queries per row shows up as a growing query count.
def make_shift() -> Shift:
    return EmployeeFactory().shift


def make_vanpool() -> Vanpool:
    vanpool = VanpoolFactory()
    RiderFactory.create_batch(2, vanpool=vanpool)
    CaseFactory(vanpool=vanpool)
    return vanpool


def make_employee() -> Employee:
    employee = RiderFactory().employee
    LeaveFactory(employee=employee)
    return employee


def make_case() -> Case:
    return EmailThreadFactory().case


def make_case_event() -> CaseEvent:
    return CaseEventFactory(actor_user=UserFactory(), actor_agent="")


def make_pending_action() -> PendingAction:
    rider = RiderFactory()
    return PendingActionFactory(
        case=CaseFactory(vanpool=rider.vanpool),
        rider=rider,
        status="approved",
        decided_by=UserFactory(),
        decided_at=timezone.now(),
        payload={"employee_id": rider.employee.employee_id},
    )


def make_thread() -> EmailThread:
    return MessageFactory().thread


def make_message() -> Message:
    return MessageFactory(bucket="question", bucket_confidence=0.82)


def make_agent_run() -> AgentRun:
    case = CaseFactory()
    return AgentRunFactory(case=case, vanpool=case.vanpool, parent=AgentRunFactory())


NUMBERS = itertools.count(1)


def make_trip() -> Trip:
    rider = RiderFactory()
    return Trip.objects.create(
        vanpool=rider.vanpool,
        date=dt.date(2026, 10, 1),
        trip_ref=f"T-{next(NUMBERS)}",
        driver=rider.employee,
        passengers=3,
    )


def make_ride_day() -> RideDay:
    rider = RiderFactory()
    return RideDay.objects.create(
        employee=rider.employee, vanpool=rider.vanpool, date=dt.date(2026, 10, 1),
        source="trip", ref=f"T-{next(NUMBERS)}",
    )  # fmt: skip


def make_badge_swipe() -> BadgeSwipe:
    return BadgeSwipe.objects.create(
        employee=EmployeeFactory(), date=dt.date(2026, 10, 1), time=dt.time(6, 50), site="S"
    )


def make_coverage() -> DataCoverage:
    return DataCoverage.objects.create(
        kind="trips",
        vanpool=VanpoolFactory(),
        start=dt.date(2026, 10, 1),
        end=dt.date(2026, 10, 31),
    )


def make_permit() -> ParkingPermit:
    return ParkingPermit.objects.create(
        permit_id=f"P-{next(NUMBERS)}", employee=EmployeeFactory(), lot="Garage B",
        valid_from=dt.date(2026, 9, 1),
    )  # fmt: skip


def make_vanpool_month() -> VanpoolMonth:
    return VanpoolMonth.objects.create(
        vanpool=VanpoolFactory(), month=dt.date(2026, 10, 1), seats=7
    )


def make_holiday() -> Holiday:
    day = dt.date(2026, 1, 1) + dt.timedelta(days=next(NUMBERS))
    return Holiday.objects.create(date=day, name="Holiday")


MAKERS: dict[type[Model], Callable[[], Model]] = {
    Shift: make_shift,
    Vanpool: make_vanpool,
    Employee: make_employee,
    Leave: LeaveFactory,
    Rider: RiderFactory,
    Case: make_case,
    Verification: VerificationFactory,
    CaseEvent: make_case_event,
    PendingAction: make_pending_action,
    EmailThread: make_thread,
    Message: make_message,
    AgentRun: make_agent_run,
    Trip: make_trip,
    RideDay: make_ride_day,
    BadgeSwipe: make_badge_swipe,
    DataCoverage: make_coverage,
    ParkingPermit: make_permit,
    VanpoolMonth: make_vanpool_month,
    Holiday: make_holiday,
}
EVERY_MODEL = pytest.mark.parametrize("model", list(MAKERS), ids=lambda m: m.__name__)
# The audit trail, and the ride logs the audit cites (imports replace them, no one edits them).
TRAIL = pytest.mark.parametrize(
    "model", [CaseEvent, AgentRun, Trip, RideDay, BadgeSwipe], ids=lambda m: m.__name__
)


@pytest.fixture
def superuser(db):
    return UserFactory(username="root", is_staff=True, is_superuser=True)


@pytest.fixture
def auditor_client(client: Client, auditor) -> Client:
    client.force_login(auditor)
    return client


def count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def management_data(response) -> dict[str, object]:
    """The inline formsets' management fields, as the rendered page would post them."""
    data: dict[str, object] = {}
    for inline in response.context["inline_admin_formsets"]:
        form = inline.formset.management_form
        data.update({f"{form.prefix}-{key}": value for key, value in form.initial.items()})
    return data


def test_it_registers_every_model():
    assert set(MAKERS) <= set(admin.site._registry)


@EVERY_MODEL
def test_it_renders_changelist_and_change_form_for_an_auditor(auditor_client, model):
    row = MAKERS[model]()
    assert auditor_client.get(admin_url(model, "changelist")).status_code == 200
    assert auditor_client.get(admin_url(model, "change", row.pk)).status_code == 200


@EVERY_MODEL
def test_it_sends_an_outsider_to_the_login_page(client, outsider, model):
    client.force_login(outsider)
    response = client.get(admin_url(model, "changelist"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))


@EVERY_MODEL
def test_it_lets_a_coordinator_read_but_not_add_or_change(client, coordinator, model):
    row = MAKERS[model]()
    client.force_login(coordinator)
    assert client.get(admin_url(model, "changelist")).status_code == 200
    assert client.get(admin_url(model, "change", row.pk)).status_code == 200
    assert client.get(admin_url(model, "add")).status_code == 403
    assert client.post(admin_url(model, "change", row.pk), {}).status_code == 403


@EVERY_MODEL
def test_it_lists_more_rows_with_the_same_number_of_queries(auditor_client, model):
    url = admin_url(model, "changelist")
    for _ in range(3):
        MAKERS[model]()
    few = count_queries(auditor_client, url)
    for _ in range(6):
        MAKERS[model]()
    response = auditor_client.get(url)
    assert len(response.context["cl"].result_list) >= 9
    assert count_queries(auditor_client, url) == few


def add_riders_and_cases(vanpool: Vanpool, n: int) -> None:
    RiderFactory.create_batch(n, vanpool=vanpool)
    for _ in range(n):
        closed_case(vanpool)


def add_case_records(case: Case, n: int) -> None:
    for _ in range(n):
        VerificationFactory(case=case)
        CaseEventFactory(case=case, actor_user=UserFactory(), actor_agent="")
        PendingActionFactory(case=case, rider=RiderFactory(vanpool=case.vanpool))


def add_leave(employee: Employee, n: int) -> None:
    first = employee.leaves.count()
    for day in range(first, first + n):
        start = dt.date(2026, 12, 1) + dt.timedelta(days=day)
        LeaveFactory(employee=employee, start_date=start, end_date=start)
        RiderFactory(employee=employee, status="cancelled", cancelled_at=timezone.now())


def add_messages(thread: EmailThread, n: int) -> None:
    MessageFactory.create_batch(n, thread=thread)


CHANGE_FORMS = pytest.mark.parametrize(
    ("make", "add_children"),
    [
        (VanpoolFactory, add_riders_and_cases),
        (CaseFactory, add_case_records),
        (EmployeeFactory, add_leave),
        (EmailThreadFactory, add_messages),
    ],
    ids=["vanpool", "case", "employee", "thread"],
)


@CHANGE_FORMS
def test_it_renders_change_forms_with_the_same_number_of_queries(
    auditor_client, make, add_children
):
    parent = make()
    url = admin_url(type(parent), "change", parent.pk)
    add_children(parent, 3)
    few = count_queries(auditor_client, url)
    add_children(parent, 6)
    assert count_queries(auditor_client, url) == few


def test_it_shows_active_riders_and_the_open_case_on_the_vanpool_list(auditor_client):
    vanpool = VanpoolFactory(max_commute_miles=None)
    RiderFactory.create_batch(2, vanpool=vanpool)
    RiderFactory(vanpool=vanpool, status="cancelled", cancelled_at=timezone.now())
    closed_case(vanpool)
    case = CaseFactory(vanpool=vanpool, status="pending_reply")
    content = auditor_client.get(admin_url(Vanpool, "changelist")).content.decode()
    assert "2 / 12" in content
    assert (
        f'href="{admin_url(Case, "change", case.pk)}">{case.case_id}</a> (pending reply)' in content
    )
    assert "50 (default)" in content


def test_it_renders_evidence_as_an_escaped_table(auditor_client):
    verification = VerificationFactory(
        evidence=[
            {"employee_id": "EMP-1000", "miles": 314.2, "quote": "<script>alert(1)</script>"},
            {"employee_id": "EMP-1001", "threshold_miles": 50},
        ],
        rider_flags={"EMP-1000": "fail", "EMP-1001": "pass"},
    )
    for url in (
        admin_url(Verification, "change", verification.pk),
        admin_url(Case, "change", verification.case.pk),
    ):
        content = auditor_client.get(url).content.decode()
        assert '<th scope="col">threshold miles</th>' in content
        assert "<td>314.2</td>" in content
        assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in content
        assert "<script>alert(1)" not in content
        assert '<th scope="row">EMP-1001</th><td>pass</td>' in content


def test_it_renders_case_meta_as_a_table_with_rider_flags(auditor_client):
    case = CaseFactory(
        meta={
            "reason": "both",
            "failed_checks": ["shift", "location"],
            "rider_flags": {"EMP-1000": {"location": "fail", "note": "<b>moved</b>"}},
        }
    )
    content = auditor_client.get(admin_url(Case, "change", case.pk)).content.decode()
    assert '<th scope="row">failed checks</th><td>shift, location</td>' in content
    assert '<th scope="row">location</th><td>fail</td>' in content
    assert "&lt;b&gt;moved&lt;/b&gt;" in content


def test_it_pretty_prints_agent_run_input_and_output(auditor_client):
    run = AgentRunFactory(output={"verdict": "fail", "reasoning": "<i>far</i>"}, error="timeout")
    content = auditor_client.get(admin_url(AgentRun, "change", run.pk)).content.decode()
    assert '<pre class="pp-json">{\n  &quot;verdict&quot;: &quot;fail&quot;' in content
    assert "&lt;i&gt;far&lt;/i&gt;" in content


@TRAIL
def test_it_allows_no_add_change_or_delete_of_the_trail_even_for_a_superuser(
    client, superuser, model
):
    row = MAKERS[model]()
    model_admin = admin.site._registry[model]
    request = RequestFactory().get("/")
    request.user = superuser
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, row)
    assert not model_admin.has_delete_permission(request, row)
    client.force_login(superuser)
    assert client.get(admin_url(model, "change", row.pk)).status_code == 200
    assert client.get(admin_url(model, "delete", row.pk)).status_code == 403
    assert client.post(admin_url(model, "delete", row.pk), {"post": "yes"}).status_code == 403
    assert client.get(admin_url(model, "add")).status_code == 403
    assert client.post(admin_url(model, "change", row.pk), {}).status_code == 403
    assert model.objects.filter(pk=row.pk).exists()


def test_it_never_deletes_a_rider(client, superuser):
    rider = RiderFactory()
    client.force_login(superuser)
    assert client.post(admin_url(Rider, "delete", rider.pk), {"post": "yes"}).status_code == 403
    assert Rider.objects.filter(pk=rider.pk).exists()


def test_it_keeps_stored_verifications_unchanged(client, superuser):
    verification = VerificationFactory()
    client.force_login(superuser)
    url = admin_url(Verification, "change", verification.pk)
    assert client.post(url, {"verdict": "pass"}).status_code == 403


_replies = itertools.count()


def make_reply() -> Message:
    n = next(_replies)
    return MessageFactory(
        direction="inbound",
        status="received",
        from_email=f"rider{n}@home.example",
        rfc_message_id=f"<reply{n}@mail.example>",
        provider_message_id=f"esp-{n}",
    )


def find(client: Client, model: type[Model], query: str) -> list[Model]:
    response = client.get(admin_url(model, "changelist"), {"q": query})
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


@pytest.mark.parametrize(
    ("make", "query"),
    [
        (VanpoolFactory, lambda v: v.vanpool_id),
        (lambda: RiderFactory().vanpool, lambda v: v.riders.get().employee.employee_id),
        (EmployeeFactory, lambda e: e.employee_id),
        (EmployeeFactory, lambda e: e.email),
        (RiderFactory, lambda r: r.employee.email),
        (CaseFactory, lambda c: c.case_id),
        (CaseFactory, lambda c: c.vanpool.vanpool_id),
        (EmailThreadFactory, lambda t: t.thread_id),
        (MessageFactory, lambda m: m.message_id),
        (make_reply, lambda m: m.rfc_message_id),
        (make_reply, lambda m: m.provider_message_id),
        (make_reply, lambda m: m.from_email),
    ],
    ids=[
        "vanpool-id",
        "vanpool-rider-id",
        "employee-id",
        "employee-email",
        "rider-email",
        "case-id",
        "case-vanpool-id",
        "thread-id",
        "message-id",
        "message-rfc-id",
        "message-provider-id",
        "message-from",
    ],
)
def test_it_finds_a_row_by_id_or_email(auditor_client, make, query):
    target, other = make(), make()
    assert find(auditor_client, type(target), query(target)) == [target]
    assert other not in find(auditor_client, type(target), query(target))


def test_it_filters_cases_by_reason(auditor_client):
    shift = CaseFactory(meta={"reason": "shift_mismatch", "failed_checks": ["shift"]})
    CaseFactory(meta={"reason": "location_mismatch", "failed_checks": ["location"]})
    response = auditor_client.get(admin_url(Case, "changelist"), {"reason": "shift_mismatch"})
    assert list(response.context["cl"].result_list) == [shift]


def test_it_filters_agent_runs_with_errors(auditor_client):
    failed = AgentRunFactory(error="openai: 503 after 3 retries")
    AgentRunFactory()
    response = auditor_client.get(admin_url(AgentRun, "changelist"), {"error": "yes"})
    assert list(response.context["cl"].result_list) == [failed]
    assert 'title="openai: 503 after 3 retries">yes</span>' in response.content.decode()


def test_it_opens_a_case_through_the_lifecycle(auditor_client, auditor):
    vanpool = VanpoolFactory()
    response = auditor_client.post(
        admin_url(Case, "add"),
        {
            "vanpool": vanpool.pk,
            "reason": "shift_mismatch",
            "failed_checks": ["shift"],
            "details": "Night shift rider on a day van.",
        },
    )
    case = Case.objects.get(vanpool=vanpool)
    assert response.status_code == 302
    assert response.url == admin_url(Case, "changelist")
    assert case.meta["opened_by"] == "auditor"
    assert case.failed_checks == ["shift"]
    event = case.events.get()
    assert (event.actor_user, event.to_status) == (auditor, "open")


def test_it_refuses_a_second_open_case_for_a_vanpool(auditor_client):
    existing = CaseFactory()
    response = auditor_client.post(
        admin_url(Case, "add"),
        {"vanpool": existing.vanpool.pk, "reason": "both", "failed_checks": ["shift"]},
    )
    assert response.status_code == 200
    assert f"already has an open case, {existing.case_id}" in response.content.decode()
    assert Case.objects.count() == 1


def test_it_changes_the_reply_deadline_but_never_the_status(auditor_client):
    case = CaseFactory()
    VerificationFactory(case=case)
    url = admin_url(Case, "change", case.pk)
    data = management_data(auditor_client.get(url))
    data.update(
        {
            "reply_deadline_0": "2026-12-01",
            "reply_deadline_1": "09:00:00",
            "status": "closed",
            "outcome": "dismissed",
        }
    )
    response = auditor_client.post(url, data)
    case.refresh_from_db()
    assert response.status_code == 302
    assert case.status == "open"
    assert case.outcome == ""
    assert timezone.localtime(case.reply_deadline).isoformat() == "2026-12-01T09:00:00-08:00"


def test_it_refuses_a_second_active_seat(auditor_client):
    seated = RiderFactory()
    response = auditor_client.post(
        admin_url(Rider, "add"),
        {"vanpool": VanpoolFactory().pk, "employee": seated.employee.pk, "joined": "2026-11-01"},
    )
    assert response.status_code == 200
    content = response.content.decode()
    assert f"{seated.employee.employee_id} already has an active seat in" in content
    assert Rider.objects.count() == 1


def test_it_records_who_asked_for_a_pending_action_added_by_hand(auditor_client):
    case = CaseFactory()
    response = auditor_client.post(
        admin_url(PendingAction, "add"),
        {"kind": "label_reply", "case": case.pk, "payload": "{}", "note": "check this reply"},
    )
    assert response.status_code == 302
    assert PendingAction.objects.get().requested_by == "auditor"


def test_it_refuses_leave_that_ends_before_it_starts(auditor_client):
    employee = EmployeeFactory()
    response = auditor_client.post(
        admin_url(Leave, "add"),
        {
            "employee": employee.pk,
            "kind": "pto",
            "start_date": "2026-12-05",
            "end_date": "2026-12-01",
        },
    )
    assert response.status_code == 200
    assert "The leave ends before it starts." in response.content.decode()
    assert not Leave.objects.exists()


def test_it_serves_the_admin_stylesheet(auditor_client):
    content = auditor_client.get(admin_url(Vanpool, "changelist")).content.decode()
    assert "css/admin.css" in content


@pytest.mark.parametrize(
    ("model", "field", "make", "term"),
    [
        (Case, "vanpool", VanpoolFactory, lambda v: v.vanpool_id),
        (Rider, "employee", EmployeeFactory, lambda e: e.email),
        (PendingAction, "rider", RiderFactory, lambda r: r.employee.employee_id),
        (Message, "thread", EmailThreadFactory, lambda t: t.thread_id),
    ],
    ids=["case-vanpool", "rider-employee", "action-rider", "message-thread"],
)
def test_it_autocompletes_related_rows_by_id_or_email(auditor_client, model, field, make, term):
    target, _other = make(), make()
    opts = model._meta
    response = auditor_client.get(
        reverse("admin:autocomplete"),
        {
            "app_label": opts.app_label,
            "model_name": opts.model_name,
            "field_name": field,
            "term": term(target),
        },
    )
    assert response.status_code == 200
    assert [row["id"] for row in response.json()["results"]] == [str(target.pk)]


def test_it_keeps_a_status_change_made_while_the_form_was_open(auditor_client, monkeypatch):
    case = CaseFactory()
    url = admin_url(Case, "change", case.pk)
    data = management_data(auditor_client.get(url))
    stale = Case.objects.get(pk=case.pk)
    transition(case, Case.Status.PENDING_REPLY, actor="outreach")
    # The admin saves the copy it read; an agent moved the case since.
    monkeypatch.setattr(admin.site._registry[Case], "get_object", lambda *args, **kw: stale)
    data.update({"reply_deadline_0": "2026-12-01", "reply_deadline_1": "09:00:00"})
    assert auditor_client.post(url, data).status_code == 302
    case.refresh_from_db()
    assert case.status == Case.Status.PENDING_REPLY
    assert case.meta["updated_by"] == "agent:outreach"
    assert case.reply_deadline is not None


def test_it_shows_evidence_citations_as_short_text():
    from poolpatrol.admin_display import records_table

    html = records_table(
        [
            {
                "type": "distance_check",
                "cites": [{"record": "employee", "id": "EMP-1", "field": "home_zip"}],
            }
        ]
    )
    assert "employee EMP-1 · home_zip" in html
    assert "&quot;record&quot;" not in html
