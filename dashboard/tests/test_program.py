"""The program page and its metrics, each defined in cases/program.py."""

import datetime as dt
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from caseloop.fanout import run_audit_chunk, start_audit_run
from caseloop.models import AuditChunk
from dashboard import program
from tests.factories import (
    AgentRunFactory,
    CaseEventFactory,
    CaseFactory,
    PendingActionFactory,
    RiderFactory,
    VanpoolFactory,
    VerificationFactory,
)

pytestmark = pytest.mark.django_db

NOW = timezone.now


def closed(outcome="resolved", opened_days_ago=3, took=dt.timedelta(days=2), **kwargs):
    case = CaseFactory(**kwargs)
    created = NOW() - dt.timedelta(days=opened_days_ago)
    type(case).objects.filter(pk=case.pk).update(
        created_at=created, status="closed", outcome=outcome, closed_at=created + took
    )
    case.refresh_from_db()
    return case


def opened(days_ago, status="pending_reply"):
    case = CaseFactory(status=status)
    type(case).objects.filter(pk=case.pk).update(created_at=NOW() - dt.timedelta(days=days_ago))
    return case


def test_open_cases_are_counted_by_status():
    opened(1, "pending_reply")
    opened(1, "pending_reply")
    opened(1, "hitl_review")
    closed()

    counts = program.open_cases_by_status()

    assert counts == {"open": 0, "pending_reply": 2, "hitl_review": 1, "pre_cancel": 0}


def test_open_cases_fall_into_age_buckets_by_whole_days():
    for days in (0, 7, 8, 14, 15, 30, 31, 90):
        opened(days)

    assert program.open_cases_by_age() == {
        "0–7 days": 2,
        "8–14 days": 2,
        "15–30 days": 2,
        "over 30 days": 2,
    }


def test_median_time_to_resolution_is_the_middle_of_closed_cases():
    for hours in (1, 5, 30):
        closed(took=dt.timedelta(hours=hours))
    assert program.median_time_to_resolution() == dt.timedelta(hours=5)
    closed(took=dt.timedelta(hours=7))
    assert program.median_time_to_resolution() == dt.timedelta(hours=6)


def test_median_is_none_without_closed_cases():
    opened(2)
    assert program.median_time_to_resolution() is None


def test_automation_counts_cases_closed_without_any_human_decision(coordinator):
    closed()  # automated: agents only
    decided = closed(outcome="cancelled")
    PendingActionFactory(case=decided, status="approved", decided_by=coordinator, decided_at=NOW())
    by_hand = closed(outcome="dismissed")
    CaseEventFactory(case=by_hand, actor_user=coordinator, actor_agent="", to_status="closed")
    expired = closed()
    # An action that expired or was superseded was decided by no one.
    PendingActionFactory(case=expired, status="superseded", decided_at=NOW())

    stats = program.closed_cases()

    assert (stats.closed, stats.automated) == (4, 2)
    assert stats.automation_rate == 0.5
    assert stats.dismissal_rate == 0.25


def test_a_cancellation_is_false_when_the_seat_is_given_back(coordinator):
    def cancelled_seat():
        seat = RiderFactory(status="cancelled", cancelled_at=NOW())
        PendingActionFactory(
            rider=seat,
            case=closed(outcome="cancelled", vanpool=seat.vanpool),
            status="approved",
            decided_by=coordinator,
            decided_at=NOW() - dt.timedelta(days=3),
        )
        return seat

    kept = cancelled_seat()
    reinstated = cancelled_seat()
    type(reinstated).objects.filter(pk=reinstated.pk).update(status="active", cancelled_at=None)
    rejoined = cancelled_seat()
    RiderFactory(employee=rejoined.employee, vanpool=rejoined.vanpool, joined=NOW().date())
    moved = cancelled_seat()
    RiderFactory(employee=moved.employee, joined=NOW().date())  # another vanpool: not a reversal

    stats = program.cancellations()

    assert (stats.cancelled, stats.reversed) == (4, 2)
    assert stats.false_cancel_rate == 0.5
    assert kept.status == "cancelled"


def test_model_calls_and_cost_are_per_distinct_audited_vanpool():
    first, second = VanpoolFactory(), VanpoolFactory()
    for vanpool in (first, first, second):  # first was audited twice
        root = AgentRunFactory(agent="case_manager", vanpool=vanpool)
        AgentRunFactory(agent="location", parent=root, vanpool=vanpool)  # rules: no model
    AgentRunFactory(
        agent="shift",
        backend="openai",
        model="gpt-4.1-mini",
        tokens_in=100,
        tokens_out=20,
        cost_usd=Decimal("0.003"),
        vanpool=first,
    )

    use = program.model_use()

    assert (use.audits, use.audited_vanpools, use.model_calls, use.tokens) == (3, 2, 1, 120)
    assert use.calls_per_vanpool == 0.5
    assert use.cost_per_vanpool == Decimal("0.0015")


def test_hours_saved_subtract_decision_time_and_never_go_negative():
    assert program.hours_saved(4, 0, manual_audit_minutes=45) == 3.0
    assert program.hours_saved(4, 6, manual_audit_minutes=45) == 2.5
    assert program.hours_saved(0, 6, manual_audit_minutes=45) == 0.0


def test_rates_with_nothing_to_divide_are_none_not_an_error():
    assert program.closed_cases().automation_rate is None
    assert program.cancellations().false_cancel_rate is None
    assert program.model_use().cost_per_vanpool is None


def test_the_page_shows_the_metrics_with_their_definitions(client, coordinator, settings):
    settings.MANUAL_AUDIT_MINUTES = 60
    opened(40, "pre_cancel")
    closed(outcome="dismissed")
    AgentRunFactory(agent="case_manager", vanpool=VanpoolFactory())
    client.force_login(coordinator)

    html = client.get(reverse("program")).content.decode()

    assert "Open cases by status" in html and "over 30 days" in html
    assert "Automation rate" in html or "automation rate" in html
    assert "100%" in html  # dismissal rate: 1 of 1
    assert "1.0 h" in html  # 1 audit × 60 minutes
    assert "False-cancel rate" in html and "How these are counted" in html
    assert 'class="chart bars"' in html


def test_an_empty_program_renders(client, auditor):
    client.force_login(auditor)
    response = client.get(reverse("program"))
    assert response.status_code == 200
    assert "—" in response.content.decode()


@pytest.mark.parametrize("size", [2, 20])
def test_the_program_page_queries_do_not_grow_with_cases(
    client, coordinator, django_assert_max_num_queries, size
):
    for _ in range(size):
        closed()
        opened(3)
        AgentRunFactory(agent="case_manager", vanpool=VanpoolFactory())
        VerificationFactory(case=None, vanpool=VanpoolFactory(), check_type="ridership")
    start_audit_run([VanpoolFactory().vanpool_id for _ in range(size)], chunk_size=1, queue="q")
    client.force_login(coordinator)

    # 15 for the figures, 2 for the weekly trend (opened, closed), 2 for the review
    # desk (time to decide; waiting, overdue and reasons), 1 for each van's newest
    # ridership, parking and vanpool-rules verifications: none per case or van.
    with django_assert_max_num_queries(20):
        assert client.get(reverse("program")).status_code == 200


def test_the_program_page_shows_how_far_the_last_audit_run_has_got(client, coordinator, run):
    ids = [VanpoolFactory().vanpool_id for _ in range(3)]
    audit_run = start_audit_run(ids, chunk_size=1, queue="workers")  # no worker takes them here
    first = AuditChunk.objects.filter(run=audit_run).order_by("number").first()
    run(run_audit_chunk, first.pk)
    client.force_login(coordinator)

    html = client.get(reverse("program")).content.decode()

    assert f"Audit run {audit_run.pk}" in html
    assert "1 of 3 chunks done, 0 failed, 0 running, 2 waiting" in html


def test_the_median_time_to_resolution_is_read_through_its_index():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "sqlite":
        pytest.skip("the query plan checked is SQLite's")  # PostgreSQL plans by table size
    for days in (1, 3, 8):
        closed(took=dt.timedelta(days=days))
    with CaptureQueriesContext(connection) as captured:
        program.median_time_to_resolution()
    middle = captured.captured_queries[-1]["sql"]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {middle}")
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "case_resolution_time_idx" in plan
    assert "TEMP B-TREE" not in plan
