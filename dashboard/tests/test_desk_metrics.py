"""The review desk on the program page: time to decide per kind, overdue counts, reasons counted."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from caseloop.kinds.base import OTHER
from cases.models import Case, PendingAction
from dashboard.desk_metrics import desk_by_kind, nearest_rank, time_to_decide
from tests.factories import CaseFactory, PendingActionFactory, UserFactory, VanpoolFactory

pytestmark = pytest.mark.django_db


def decided(kind, *, hours, by, status="approved", reason="", case=None):
    case = case or CaseFactory(status=Case.Status.HITL_REVIEW)
    action = PendingActionFactory(kind=kind, case=case)
    asked = timezone.now() - dt.timedelta(days=30)
    PendingAction.objects.filter(pk=action.pk).update(
        created_at=asked,
        decided_at=asked + dt.timedelta(hours=hours),
        decided_by=by,
        status=status,
        reason=reason,
    )


@pytest.mark.parametrize(
    ("count", "share", "rank"),
    [(1, 0.5, 1), (10, 0.5, 5), (10, 0.9, 9), (11, 0.9, 10), (3, 0.9, 3)],
)
def test_nearest_rank(count, share, rank):
    assert nearest_rank(count, share) == rank


def test_time_to_decide_is_the_p50_and_p90_of_each_kind_by_nearest_rank(coordinator):
    for hours in range(1, 11):  # 1 … 10 hours
        decided("review_email", hours=hours, by=coordinator)
    decided("match_inbound", hours=30, by=coordinator, status="rejected")
    # Expired and superseded cards have no decider: not a person's time.
    PendingActionFactory(kind="review_email", status="expired", decided_at=timezone.now())
    timings = time_to_decide()
    assert timings["review_email"] == {
        "p50": dt.timedelta(hours=5),
        "p90": dt.timedelta(hours=9),
    }
    assert timings["match_inbound"] == {
        "p50": dt.timedelta(hours=30),
        "p90": dt.timedelta(hours=30),
    }
    assert "cancel_membership" not in timings


def test_the_program_page_shows_time_to_decide_overdue_and_reasons(client, coordinator):
    for hours in (2, 4, 6):
        decided("match_inbound", hours=hours, by=coordinator, status="rejected", reason="unrelated")
    late = PendingActionFactory(
        kind="match_inbound", case=CaseFactory(status=Case.Status.HITL_REVIEW)
    )
    PendingAction.objects.filter(pk=late.pk).update(
        created_at=timezone.now() - dt.timedelta(hours=49)
    )
    row = next(row for row in desk_by_kind() if row.kind == "match_inbound")
    assert (row.decided, row.waiting, row.overdue) == (3, 1, 1)
    assert row.reasons == [("rejected", "Not about any case", 3)]
    client.force_login(coordinator)
    html = client.get(reverse("program")).content.decode()
    assert "The review desk" in html
    assert "4.0 h" in html and "6.0 h" in html
    assert "Not about any case (3)" in html


def test_the_desk_on_the_program_page_reads_a_fixed_number_of_queries(
    coordinator, django_assert_max_num_queries
):
    other = UserFactory(username="other", is_staff=True)
    for n in range(3):
        decided("review_email", hours=n + 1, by=coordinator, reason="as_drafted")
    with django_assert_max_num_queries(2):
        desk_by_kind()
    for n in range(30):
        decided("label_reply", hours=n + 1, by=other, status="rejected", reason="not_a_reply")
    with django_assert_max_num_queries(2):
        desk_by_kind()


def test_time_to_decide_agrees_with_sorting_every_card_by_hand(coordinator):
    hours = [7, 3, 3, 12, 1, 9, 3, 40, 2, 5, 5, 26, 8]  # ties included
    for value in hours:
        decided("review_email", hours=value, by=coordinator)
    ranked = sorted(hours)
    expected = {
        share: dt.timedelta(hours=ranked[nearest_rank(len(ranked), fraction) - 1])
        for share, fraction in (("p50", 0.5), ("p90", 0.9))
    }
    assert time_to_decide() == {"review_email": expected}
    assert time_to_decide({"review_email": len(hours)}) == {"review_email": expected}


def test_time_to_decide_is_read_through_its_index_not_by_sorting_the_cards(coordinator):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "sqlite":
        pytest.skip("the query plan checked is SQLite's")  # PostgreSQL plans by table size
    for value in range(1, 6):
        decided("review_email", hours=value, by=coordinator)
    with CaptureQueriesContext(connection) as captured:
        time_to_decide({"review_email": 5})
    (query,) = captured.captured_queries
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {query['sql']}")
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "action_decided_time_idx" in plan
    assert "TEMP B-TREE" not in plan


def test_under_site_scope_the_desk_counts_only_the_coordinators_cards(
    client, coordinator, auditor, settings
):
    """Time to decide, waiting, overdue and reasons: of the vanpools they coordinate only."""
    settings.COORDINATOR_SCOPE = "sites"
    theirs = CaseFactory(vanpool=VanpoolFactory(coordinator=coordinator), status="hitl_review")
    elsewhere = CaseFactory(status="hitl_review")
    for hours in (2, 4):
        decided(
            "match_inbound",
            hours=hours,
            by=auditor,
            status="rejected",
            reason="unrelated",
            case=theirs,
        )
    for hours in (40, 50, 60):
        decided("match_inbound", hours=hours, by=auditor, reason=OTHER, case=elsewhere)
    for case in (theirs, elsewhere, elsewhere):
        late = PendingActionFactory(kind="match_inbound", case=case)
        PendingAction.objects.filter(pk=late.pk).update(
            created_at=timezone.now() - dt.timedelta(hours=49)
        )
    mine = next(row for row in desk_by_kind(user=coordinator) if row.kind == "match_inbound")
    assert (mine.decided, mine.waiting, mine.overdue) == (2, 1, 1)
    assert (mine.p50, mine.p90) == (dt.timedelta(hours=2), dt.timedelta(hours=4))
    assert mine.reasons == [("rejected", "Not about any case", 2)]
    every = next(row for row in desk_by_kind(user=auditor) if row.kind == "match_inbound")
    assert (every.decided, every.waiting, every.overdue) == (5, 3, 3)
    client.force_login(coordinator)
    page = client.get(reverse("program"))
    (row,) = [row for row in page.context["desk"] if row.kind == "match_inbound"]
    assert (row.decided, row.waiting, row.overdue) == (2, 1, 1)
    assert "60.0 h" not in page.content.decode()
