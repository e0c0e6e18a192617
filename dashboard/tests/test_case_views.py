"""The case list (filters, counts, constant queries) and the case page (evidence, thread, runs)."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from caseloop.audits import audit_vanpool
from cases.models import Case
from outreach.models import EmailThread
from tests.factories import (
    DAY_SCHEDULE,
    AgentRunFactory,
    CaseEventFactory,
    CaseFactory,
    EmployeeFactory,
    MessageFactory,
    PendingActionFactory,
    RiderFactory,
    ShiftFactory,
    VanpoolFactory,
    VerificationFactory,
)

pytestmark = pytest.mark.django_db

FAR_ZIP = "90026"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def audited(django_capture_on_commit_callbacks):
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Nadia", home_zip="94587"))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Farid", home_zip=FAR_ZIP))
    with django_capture_on_commit_callbacks(execute=True):
        audit_vanpool(vanpool.vanpool_id)
    return Case.objects.get(vanpool=vanpool)


def make_cases(n: int) -> None:
    for i in range(n):
        CaseFactory(
            vanpool=VanpoolFactory(work_site="Reno Plant" if i % 2 else "Fremont Campus"),
            status=[Case.Status.OPEN, Case.Status.PENDING_REPLY, Case.Status.PRE_CANCEL][i % 3],
            meta={"reason": ["shift_mismatch", "both", "location_mismatch"][i % 3],
                  "failed_checks": ["shift"], "rider_flags": {"EMP-1": {"shift": "fail"}}},
        )  # fmt: skip


# --- List ----------------------------------------------------------------------------------


def test_the_list_counts_cases_per_status(client, coordinator):
    make_cases(6)
    client.force_login(coordinator)
    html = client.get(reverse("case-list")).content.decode()
    assert 'All <span class="chip-count">6</span>' in html
    assert 'Pre-cancel <span class="chip-count">2</span>' in html


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"status": "pre_cancel"}, 2),
        ({"status": "active"}, 6),
        ({"reason": "shift"}, 4),  # shift_mismatch and both
        ({"reason": "location"}, 4),  # location_mismatch and both
        ({"reason": "both"}, 2),
        ({"site": "Reno Plant"}, 3),
        ({"age": "week"}, 6),
        ({"age": "older"}, 0),
    ],
    ids=str,
)
def test_the_list_filters(client, coordinator, query, expected):
    make_cases(6)
    client.force_login(coordinator)
    response = client.get(reverse("case-list"), query)
    assert response.status_code == 200
    assert response.content.decode().count('<a href="/cases/CASE-') == expected


def test_age_counts_from_when_the_case_was_opened(client, coordinator):
    old = CaseFactory()
    Case.objects.filter(pk=old.pk).update(created_at=timezone.now() - dt.timedelta(days=45))
    CaseFactory()
    client.force_login(coordinator)
    html = client.get(reverse("case-list"), {"age": "older"}).content.decode()
    assert old.case_id in html and html.count('<a href="/cases/CASE-') == 1


@pytest.mark.parametrize(
    "query", ["status=lost", "reason=vibes", "site=Atlantis", "age=ancient", "page=-1"]
)
def test_bad_list_filters_are_a_400(client, coordinator, query):
    client.force_login(coordinator)
    assert client.get(reverse("case-list") + "?" + query).status_code == 400


def test_htmx_gets_only_the_table(client, coordinator):
    make_cases(2)
    client.force_login(coordinator)
    html = client.get(reverse("case-list"), **HTMX).content.decode()
    assert html.lstrip().startswith('<section id="case-table"') and "<html" not in html


@pytest.mark.parametrize("rows", [3, 30])
def test_the_list_takes_the_same_number_of_queries_however_long_it_is(
    client, coordinator, django_assert_max_num_queries, rows
):
    make_cases(rows)
    client.force_login(coordinator)
    with django_assert_max_num_queries(9):
        assert client.get(reverse("case-list")).status_code == 200


def test_the_list_is_paginated(client, coordinator):
    make_cases(55)
    client.force_login(coordinator)
    first = client.get(reverse("case-list")).content.decode()
    assert first.count('<a href="/cases/CASE-') == 50 and "Page 1 of 2" in first
    second = client.get(reverse("case-list"), {"page": 2}).content.decode()
    assert second.count('<a href="/cases/CASE-') == 5


# --- Case page -----------------------------------------------------------------------------


def test_the_case_page_summarises_the_case_in_one_line(client, coordinator, audited):
    client.force_login(coordinator)
    html = client.get(reverse("case-detail", args=[audited.case_id])).content.decode()
    far = audited.meta["rider_flags"]
    assert "Location mismatch on" in html and "1 rider flagged" in html
    assert all(employee_id in html for employee_id in far)


def test_evidence_cites_the_records_it_came_from(client, coordinator, audited):
    client.force_login(coordinator)
    html = client.get(reverse("case-detail", args=[audited.case_id])).content.decode()
    (employee_id,) = audited.meta["rider_flags"]
    assert f'href="{reverse("employee-detail", args=[employee_id])}"' in html
    assert f'href="{reverse("vanpool-detail", args=[audited.vanpool.vanpool_id])}"' in html
    assert "commute mi" in html and "Location check" in html


def test_shift_evidence_lists_the_days_a_rider_works_and_the_van_does_not_run(
    client, coordinator, django_capture_on_commit_callbacks
):
    vanpool = VanpoolFactory(schedule=DAY_SCHEDULE)
    weekend = ShiftFactory(
        schedule=[{"day": day, "start": "07:00", "end": "16:00"} for day in ("Sat", "Sun")]
    )
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip="94587"))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip="94587", shift=weekend))
    with django_capture_on_commit_callbacks(execute=True):
        audit_vanpool(vanpool.vanpool_id)
    case = Case.objects.get(vanpool=vanpool)
    client.force_login(coordinator)
    html = client.get(reverse("case-detail", args=[case.case_id])).content.decode()
    assert "Works on 2 days the van does not run" in html
    assert "2026-11-28, 2026-11-29" in html


def test_distance_evidence_says_when_junk_coordinates_gave_way_to_the_zip(
    client, coordinator, django_capture_on_commit_callbacks
):
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip="94587"))
    junk = EmployeeFactory(home_zip=FAR_ZIP, home_lat=0, home_lng=0)  # (0, 0): no place
    RiderFactory(vanpool=vanpool, employee=junk)
    with django_capture_on_commit_callbacks(execute=True):
        audit_vanpool(vanpool.vanpool_id)
    case = Case.objects.get(vanpool=vanpool)
    assert case.meta["rider_flags"][junk.employee_id]["location"] == "fail"  # measured by ZIP
    client.force_login(coordinator)
    html = client.get(reverse("case-detail", args=[case.case_id])).content.decode()
    assert "the stored home coordinates are not a real location" in html
    assert "(0.0, 0.0)" not in html  # junk is often a real home, swapped: never quoted


def test_email_bodies_are_escaped_inside_an_inert_element(client, coordinator):
    case = CaseFactory()
    thread = EmailThread.objects.create(case=case, subject="Seat")
    MessageFactory(
        thread=thread,
        direction="inbound",
        text_body="",
        html_body='<p>Hi</p><img src=x onerror="alert(1)"><a hx-get="/admin/">click</a>',
    )
    MessageFactory(thread=thread, text_body='<b hx-post="/x">bold</b>')
    client.force_login(coordinator)
    html = client.get(reverse("case-detail", args=[case.case_id])).content.decode()
    assert "onerror" not in html and 'hx-get="/admin/"' not in html
    assert "&lt;b hx-post=&quot;/x&quot;&gt;bold&lt;/b&gt;" in html
    assert "Hi" in html and "click" in html  # the HTML body shown as text
    thread_section = html.split('id="thread-h"')[1]
    assert "<div hx-disable>" in thread_section


def test_the_timeline_and_the_agent_run_tree_are_shown(client, coordinator):
    case = CaseFactory()
    CaseEventFactory(case=case, note="opened by the audit")
    root = AgentRunFactory(agent="case_manager", case=case)
    AgentRunFactory(
        agent="location",
        case=case,
        parent=root,
        backend="openai",
        model="gpt-4.1-mini",
        tokens_in=812,
        tokens_out=95,
        cost_usd="0.000476",
        latency_ms=1234,
        error="ModelTimeout: the model did not answer in time",
    )
    client.force_login(coordinator)
    html = client.get(reverse("case-detail", args=[case.case_id])).content.decode()
    assert "opened by the audit" in html
    assert html.index("case_manager") < html.index("└ <strong>location")
    assert "gpt-4.1-mini" in html and "812 / 95" in html and "1234 ms" in html
    assert "0.0005" in html and "ModelTimeout" in html


def test_pending_actions_on_the_case_link_to_their_cards(client, coordinator):
    action = PendingActionFactory(payload={"employee_id": "EMP-1"})
    client.force_login(coordinator)
    html = client.get(reverse("case-detail", args=[action.case.case_id])).content.decode()
    assert reverse("action-card", args=[action.pk]) in html


def test_an_unknown_case_is_404(client, coordinator):
    client.force_login(coordinator)
    assert client.get(reverse("case-detail", args=["CASE-00000000"])).status_code == 404


@pytest.mark.parametrize("size", [1, 8])
def test_the_case_page_takes_the_same_number_of_queries_however_much_happened(
    client, coordinator, django_assert_max_num_queries, size
):
    case = CaseFactory()
    thread = EmailThread.objects.create(case=case, subject="Seat")
    for _ in range(size):
        employee = EmployeeFactory()
        MessageFactory(thread=thread, employee=employee)
        CaseEventFactory(case=case)
        VerificationFactory(case=case)
        AgentRunFactory(case=case)
        PendingActionFactory(case=case)
    client.force_login(coordinator)
    # 15: the record changes beside the evidence (vanpools/changes.py) add one read.
    with django_assert_max_num_queries(15):
        assert client.get(reverse("case-detail", args=[case.case_id])).status_code == 200


def test_outsiders_cannot_see_a_case(client, outsider):
    case = CaseFactory()
    client.force_login(outsider)
    assert client.get(reverse("case-detail", args=[case.case_id])).status_code == 403
