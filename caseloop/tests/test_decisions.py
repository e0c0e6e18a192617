"""Approving a cancellation after the supervisor's review: an override when the review failed."""

import datetime as dt

import pytest
from django.core import mail

from caseloop import decisions
from caseloop.audits import audit_vanpool
from caseloop.decisions import AlreadyDecided, InvalidDecision
from caseloop.loop.deadlines import process_timeouts
from caseloop.loop.reaudit import enter_pre_cancel
from caseloop.supervisor.review import latest_pre_cancel_event
from caseloop.tests.test_loop import FAR_ZIP, NEAR_ZIP, pre_cancelled
from cases.models import Case, CaseEvent, CaseReview, PendingAction
from tests.factories import EmployeeFactory, RiderFactory, VanpoolFactory
from vanpools.models import Rider

pytestmark = pytest.mark.django_db
Status = Case.Status


@pytest.fixture
def van():
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=FAR_ZIP))
    return vanpool


@pytest.fixture
def case(van, run, _frozen_time):
    """Written to, no reply by the deadline, still failing: pre_cancel, reviewed (passed)."""
    run(audit_vanpool, van.vanpool_id)
    return pre_cancelled(Case.objects.get(vanpool=van), run, _frozen_time)


@pytest.fixture
def failed_case(van, run):
    """Pre-cancelled at once, before any waiting period or re-audit: the review fails."""
    run(audit_vanpool, van.vanpool_id)
    case = run(enter_pre_cancel, Case.objects.get(vanpool=van), why="by hand")
    assert not CaseReview.objects.get(case=case).passed
    return case


def cancellation(case: Case) -> PendingAction:
    return PendingAction.objects.get(case=case, kind="cancel_membership")


def test_a_passed_review_needs_no_override(case, van, run, coordinator):
    review = CaseReview.objects.get(case=case)
    assert review.passed
    action = run(decisions.approve, cancellation(case), by=coordinator)
    assert action.status == "approved"
    assert action.result["review"] == review.pk
    assert (action.result["review_passed"], action.result["override"]) == (True, False)
    assert Rider.objects.get(pk=action.rider_id).status == Rider.Status.CANCELLED
    assert not CaseEvent.objects.filter(case=case, data__override=True).exists()


def test_a_failed_review_refuses_an_approval_without_an_override(failed_case, coordinator):
    action = cancellation(failed_case)
    with pytest.raises(InvalidDecision, match="explicit override with a reason") as refused:
        decisions.approve(action, by=coordinator)
    assert "waiting period" in str(refused.value) or "re-audited" in str(refused.value)
    action.refresh_from_db()
    assert (action.status, action.decided_by) == ("pending", None)
    assert Rider.objects.get(pk=action.rider_id).status == Rider.Status.ACTIVE
    assert Case.objects.get(pk=failed_case.pk).status == Status.PRE_CANCEL
    assert CaseReview.objects.filter(case=failed_case).count() == 1


@pytest.mark.parametrize(
    "edits",
    [
        {"override": True},
        {"override": True, "override_reason": "   "},
        {"override_reason": "HR confirmed the move"},
        {"override": False, "override_reason": "HR confirmed the move"},
    ],
)
def test_an_override_needs_both_the_flag_and_a_reason(failed_case, coordinator, edits):
    action = cancellation(failed_case)
    with pytest.raises(InvalidDecision):
        decisions.approve(action, by=coordinator, edits=edits)
    assert PendingAction.objects.get(pk=action.pk).status == "pending"


def test_an_override_with_a_reason_cancels_and_is_on_the_record(failed_case, van, run, coordinator):
    action = cancellation(failed_case)
    review = CaseReview.objects.get(case=failed_case)
    edits = {"override": True, "override_reason": "HR confirmed the move to Los Angeles."}
    decided = run(decisions.approve, action, by=coordinator, note="ok", edits=edits)
    assert decided.status == "approved"
    assert decided.result["override"] is True
    assert decided.result["override_reason"] == "HR confirmed the move to Los Angeles."
    assert (decided.result["review"], decided.result["review_passed"]) == (review.pk, False)
    event = CaseEvent.objects.get(case=failed_case, data__override=True)
    assert event.actor_user == coordinator
    assert event.data["override_reason"] == "HR confirmed the move to Los Angeles."
    assert event.data["review"] == review.pk
    assert f"({review.score}/100)" in event.note
    assert Rider.objects.get(pk=action.rider_id).status == Rider.Status.CANCELLED
    closed = Case.objects.get(pk=failed_case.pk)
    assert (closed.status, closed.outcome) == (Status.CLOSED, Case.Outcome.CANCELLED)


def test_an_override_from_a_form_may_say_true_as_text(failed_case, run, coordinator):
    edits = {"override": "true", "override_reason": "Rider confirmed by phone."}
    assert run(decisions.approve, cancellation(failed_case), by=coordinator, edits=edits).result[
        "override"
    ]


def test_a_second_approval_after_an_override_changes_nothing(
    failed_case, run, coordinator, auditor
):
    action = cancellation(failed_case)
    edits = {"override": True, "override_reason": "HR confirmed."}
    run(decisions.approve, action, by=coordinator, edits=edits)
    sent = len(mail.outbox)
    with pytest.raises(AlreadyDecided):
        run(decisions.approve, action, by=auditor, edits=edits)
    assert len(mail.outbox) == sent
    assert CaseEvent.objects.filter(case=failed_case, data__override=True).count() == 1


def test_without_a_review_yet_the_supervisor_runs_before_the_approval(
    van, run, coordinator, _frozen_time
):
    run(audit_vanpool, van.vanpool_id)
    case = Case.objects.get(vanpool=van)
    _frozen_time.shift(dt.timedelta(days=7, minutes=1))
    process_timeouts()  # its on-commit review task never runs here
    case.refresh_from_db()
    assert case.status == Status.PRE_CANCEL
    assert not CaseReview.objects.exists()
    action = run(decisions.approve, cancellation(case), by=coordinator)
    review = CaseReview.objects.get()
    assert review.trigger_event == latest_pre_cancel_event(case)
    assert review.passed and action.result["review"] == review.pk


def test_a_review_made_for_a_refused_approval_is_kept(van, run, coordinator):
    run(audit_vanpool, van.vanpool_id)
    case = enter_pre_cancel(Case.objects.get(vanpool=van), why="by hand")  # no task run
    with pytest.raises(InvalidDecision):
        decisions.approve(cancellation(case), by=coordinator)
    review = CaseReview.objects.get()
    assert not review.passed
    # Asking again reuses it: one review per pre_cancel entry.
    with pytest.raises(InvalidDecision):
        decisions.approve(cancellation(case), by=coordinator)
    assert CaseReview.objects.count() == 1


def test_rejecting_needs_no_override(failed_case, run, coordinator):
    run(decisions.reject, cancellation(failed_case), by=coordinator, note="false positive")
    closed = Case.objects.get(pk=failed_case.pk)
    assert closed.outcome == Case.Outcome.DISMISSED


def test_each_riders_cancellation_needs_its_own_override(run, coordinator):
    vanpool = VanpoolFactory()
    for _ in range(2):
        RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=FAR_ZIP))
    run(audit_vanpool, vanpool.vanpool_id)
    case = run(enter_pre_cancel, Case.objects.get(vanpool=vanpool), why="by hand")
    first, second = PendingAction.objects.filter(case=case, kind="cancel_membership")
    edits = {"override": True, "override_reason": "Confirmed with HR."}
    run(decisions.approve, first, by=coordinator, edits=edits)
    with pytest.raises(InvalidDecision):
        decisions.approve(second, by=coordinator)
    run(decisions.approve, second, by=coordinator, edits=edits)
    assert Case.objects.get(pk=case.pk).outcome == Case.Outcome.CANCELLED
    assert CaseReview.objects.filter(case=case).count() == 1
