import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from cases.lifecycle import ALLOWED_MOVES, IllegalTransition, open_case, transition
from cases.models import Case, CaseEvent
from tests.factories import CaseFactory, UserFactory, VanpoolFactory

pytestmark = pytest.mark.django_db
Status = Case.Status


def test_it_opens_a_case_with_meta_and_a_first_event():
    vanpool = VanpoolFactory()
    case, created = open_case(
        vanpool,
        actor="case_manager",
        reason="location_mismatch",
        failed_checks=["location"],
        details="EMP-1003 lives 314 miles from the pickup.",
    )
    assert created
    assert case.status == Status.OPEN
    assert case.meta["reason"] == "location_mismatch"
    assert case.meta["opened_by"] == "agent:case_manager"
    event = case.events.get()
    assert (event.from_status, event.to_status, event.actor) == ("", "open", "agent:case_manager")


def test_it_returns_the_existing_open_case_instead_of_a_second():
    vanpool = VanpoolFactory()
    first, _ = open_case(vanpool, actor="case_manager", reason="both", failed_checks=["shift"])
    again, created = open_case(
        vanpool, actor="case_manager", reason="both", failed_checks=["shift"]
    )
    assert (again.pk, created) == (first.pk, False)
    assert CaseEvent.objects.count() == 1


def test_it_refuses_an_unknown_reason():
    with pytest.raises(ValueError, match="unknown case reason"):
        open_case(VanpoolFactory(), actor="case_manager", reason="vibes", failed_checks=[])


def test_it_moves_a_case_and_records_who_and_why():
    case = CaseFactory()
    coordinator = UserFactory(username="dana")
    moved = transition(case, Status.PENDING_REPLY, actor=coordinator, note="emailed riders")
    assert moved.status == Status.PENDING_REPLY
    assert moved.meta["updated_by"] == "dana"
    event = CaseEvent.objects.get(case=case)
    assert (event.from_status, event.to_status, event.note) == (
        "open",
        "pending_reply",
        "emailed riders",
    )
    assert event.actor_user == coordinator


def test_it_closes_with_an_outcome_and_a_time():
    closed = transition(CaseFactory(), Status.CLOSED, actor="case_manager", outcome="resolved")
    assert closed.outcome == "resolved"
    assert closed.closed_at == timezone.now()


def test_a_case_that_waits_on_riders_again_gets_a_fresh_deadline(settings):
    settings.REPLY_WAIT_DAYS = 5
    case = CaseFactory(status=Status.PRE_CANCEL, reply_deadline=None)
    moved = transition(case, Status.PENDING_REPLY, actor="outreach")
    assert moved.reply_deadline == timezone.now() + dt.timedelta(days=5)


def test_a_deadline_cleared_on_purpose_stays_cleared():
    case = CaseFactory(status=Status.HITL_REVIEW, reply_deadline=None)
    moved = transition(case, Status.PENDING_REPLY, actor="outreach", reply_deadline=None)
    assert moved.reply_deadline is None


@pytest.mark.parametrize(
    ("to_status", "outcome", "message"),
    [
        (Status.CLOSED, "", "needs an outcome"),
        (Status.CLOSED, "forgotten", "needs an outcome"),
        (Status.HITL_REVIEW, "resolved", "only a closed case has an outcome"),
        ("archived", "", "unknown status"),
        (Status.OPEN, "", "cannot move from open to open"),
    ],
)
def test_it_refuses_an_illegal_move_and_changes_nothing(to_status, outcome, message):
    case = CaseFactory()
    with pytest.raises(IllegalTransition, match=message):
        transition(case, to_status, actor="case_manager", outcome=outcome)
    case.refresh_from_db()
    assert case.status == Status.OPEN
    assert not CaseEvent.objects.exists()


def test_it_checks_the_move_against_the_row_not_the_callers_copy():
    case = CaseFactory()
    stale_copy = Case.objects.get(pk=case.pk)
    transition(case, Status.CLOSED, actor="case_manager", outcome="dismissed")
    with pytest.raises(IllegalTransition, match="from closed"):
        transition(stale_copy, Status.PRE_CANCEL, actor="case_manager")


def test_it_never_reopens_a_closed_case():
    assert ALLOWED_MOVES[Status.CLOSED] == frozenset()


def test_it_lets_a_vanpool_have_a_new_case_after_the_old_one_closed():
    vanpool = VanpoolFactory()
    old, _ = open_case(vanpool, actor="case_manager", reason="both", failed_checks=["shift"])
    transition(old, Status.CLOSED, actor="case_manager", outcome="resolved")
    new, created = open_case(vanpool, actor="case_manager", reason="both", failed_checks=["shift"])
    assert created and new.pk != old.pk


def test_it_keeps_case_events_append_only():
    transition(CaseFactory(), Status.HITL_REVIEW, actor="case_manager")
    event = CaseEvent.objects.get()
    event.note = "rewritten history"
    with pytest.raises(ValidationError, match="append-only"):
        event.save()
    with pytest.raises(ValidationError, match="append-only"):
        event.delete()
