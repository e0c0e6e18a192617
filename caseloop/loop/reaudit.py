"""Audit a case again, count it, and move it on from what the re-audit finds.

A pass closes the case and tells the cleared riders; a failure at the
deadline or past the re-audit limit goes to ``pre_cancel``, where
``enter_pre_cancel`` asks a person to approve ending each flagged rider's seat
and queues the supervisor's review of the evidence.
"""

from collections.abc import Sequence

from django.conf import settings
from django.db import transaction

from audit.decide import ALL_CHECKS
from caseloop.audits import AuditOutcome, audit_vanpool
from caseloop.loop.reading import ReplyContext
from caseloop.loop.writing import (
    AGENT,
    failing_checks,
    flagged_riders,
    give_more_time,
    thread_for,
    write_to_flagged,
)
from caseloop.supervisor.review import latest_pre_cancel_event
from cases.kinds import CancelMembership, LabelReply
from cases.lifecycle import record_reaudit, request_review, transition
from cases.models import Case, PendingAction
from outreach.sending import answer_threading, queue_template
from poolpatrol.queue import enqueue_supervisor_review
from vanpools.models import Employee

Status = Case.Status


def reaudit(
    case: Case,
    checks: Sequence[str],
    *,
    trigger: str,
    reply: ReplyContext | None = None,
) -> str:
    """Audit again, count it, and move the case on from what it finds."""
    before = set(_failing_employee_ids(case))
    outcome = audit_vanpool(case.vanpool.vanpool_id, checks=list(checks), actor=AGENT)
    case = record_reaudit(case, actor=AGENT, trigger=trigger, result=_outcome_label(outcome))
    _tell_cleared_riders(case, before)
    if case.status == Status.CLOSED:
        return "resolved"
    if case.status == Status.HITL_REVIEW and (
        outcome.status == "unknown" or trigger == "timeout" or not only_readings_pending(case)
    ):
        # A person rules first (an unknown check, a draft), or is reading a
        # reply: nothing goes to pre_cancel under them.
        return "needs_decision"
    if trigger == "timeout" or case.reaudit_count > settings.MAX_REAUDITS:
        enter_pre_cancel(case, why=_pre_cancel_reason(case, trigger))
        return "pre_cancel"
    if reply is None or failing_checks(case, reply.employee.employee_id):
        # A rider still working on it gets another week; one whose reply
        # cleared them buys none for the riders who stayed silent.
        case = give_more_time(case, f"re-audit {case.reaudit_count} still failing")
    write_to_flagged(case)  # anyone newly flagged hears about it
    if reply is not None:
        _still_shows(case, reply)
    return "still_failing"


def reaudit_alone(case: Case, *, trigger: str) -> Case:
    """Audit the failed checks again and record it; nothing else moves the case.

    For an update while a cancellation waited (``inbound``): the records decide
    whether the case resolves; what follows otherwise is a person's to decide.
    """
    before = set(_failing_employee_ids(case))
    checks = case.meta.get("failed_checks") or list(ALL_CHECKS)
    outcome = audit_vanpool(case.vanpool.vanpool_id, checks=list(checks), actor=AGENT)
    case = record_reaudit(case, actor=AGENT, trigger=trigger, result=_outcome_label(outcome))
    _tell_cleared_riders(case, before)
    return case


def _outcome_label(outcome: AuditOutcome) -> str:
    return outcome.status if not outcome.reason else f"{outcome.status} ({outcome.reason})"


def _pre_cancel_reason(case: Case, trigger: str) -> str:
    if trigger == "timeout":
        return "no reply by the deadline and the record still fails"
    return f"still failing after {case.reaudit_count - 1} re-audit(s), the most allowed"


def _failing_employee_ids(case: Case) -> list[str]:
    return [emp for emp in case.meta.get("rider_flags", {}) if failing_checks(case, emp)]


def _tell_cleared_riders(case: Case, before: set[str]) -> None:
    """Riders who were flagged and now pass hear that they are done."""
    still = set() if case.status == Status.CLOSED else set(_failing_employee_ids(case))
    cleared = sorted(before - still)
    if not cleared:
        return
    thread = thread_for(case)
    for employee in Employee.objects.filter(employee_id__in=cleared).order_by("employee_id"):
        queue_template(
            thread,
            employee,
            "resolved",
            key=f"{case.case_id}:resolved:{employee.employee_id}",
        )


def _still_shows(case: Case, reply: ReplyContext) -> None:
    if not failing_checks(case, reply.employee.employee_id):
        return  # this rider is clear; others are still being chased
    queue_template(
        thread_for(case),
        reply.employee,
        "still_shows",
        key=f"{case.case_id}:still_shows:{reply.message.message_id}",
        threading=answer_threading(reply.message),
    )


def enter_pre_cancel(case: Case, *, why: str) -> Case:
    """Ask a person to approve ending each flagged rider's seat."""
    with transaction.atomic():
        case = transition(case, Status.PRE_CANCEL, actor=AGENT, note=why, reply_deadline=None)
        for rider in flagged_riders(case):
            employee_id = rider.employee.employee_id
            exists = (
                PendingAction.objects.of(CancelMembership)
                .filter(case=case, rider=rider)
                .pending()
                .exists()
            )
            if exists:
                continue
            request_review(
                case,
                CancelMembership(
                    employee_id=employee_id,
                    vanpool_id=case.vanpool.vanpool_id,
                    failed_checks=failing_checks(case, employee_id),
                    reason=case.meta.get("reason", ""),
                    details=case.meta.get("details", ""),
                    reaudit_count=case.reaudit_count,
                    why=why,
                ),
                rider=rider,
                actor=AGENT,
                note=why,
                hold_in=None,  # already in pre_cancel, where cancellations wait
            )
        # The supervisor checks the evidence package once this entry commits.
        entry = latest_pre_cancel_event(case)
        if entry is not None:
            enqueue_supervisor_review(entry.pk)
    return case


def propose_own_cancellation(reply: ReplyContext, *, why: str) -> str:
    """The rider asked to give up their seat: propose ending it, for a person to approve.

    The proposal records that the request is the rider's own (``requested_by``
    names their answer), so the card says so and the supervisor's review
    reads it; approving is the usual one click. Only this rider's seat is
    proposed: co-riders still flagged are decided as before, after a person
    has decided this one (the case waits in ``pre_cancel``).
    """
    case, employee = reply.case, reply.employee
    rider = next((r for r in flagged_riders(case) if r.employee_id == employee.pk), None)
    if rider is None:
        # Not flagged (any more): nothing of theirs is proposed; a person reads it.
        request_review(
            case,
            LabelReply(
                suggested_bucket="update",
                confidence=1.0,
                reasoning=why,
                why=f"{why}; the rider is not flagged on this case",
                employee_id=employee.employee_id,
            ),
            message=reply.message,
            actor=AGENT,
            note=f"answer {reply.message.message_id}: the rider asked to give up their seat",
        )
        return "label_requested"
    with transaction.atomic():
        note = f"the rider asked to give up their seat ({reply.message.message_id})"
        case = transition(case, Status.PRE_CANCEL, actor=AGENT, note=note, reply_deadline=None)
        request_review(
            case,
            CancelMembership(
                employee_id=employee.employee_id,
                vanpool_id=case.vanpool.vanpool_id,
                failed_checks=failing_checks(case, employee.employee_id),
                reason=case.meta.get("reason", ""),
                details=case.meta.get("details", ""),
                reaudit_count=case.reaudit_count,
                why=why,
                requested_by=reply.message.message_id,
            ),
            rider=rider,
            message=reply.message,
            actor=AGENT,
            note=note,
            hold_in=None,
        )
        entry = latest_pre_cancel_event(case)
        if entry is not None:
            enqueue_supervisor_review(entry.pk)
    return "cancellation_requested"


def only_readings_pending(case: Case) -> bool:
    """All a person is asked on this case is how to read earlier replies.

    Then the rider's newer, clear words are acted on at once (a fixed record
    closes the case); an unsure or escalated reply still goes to a person.
    """
    return not PendingAction.objects.filter(case=case).pending().not_of(LabelReply).exists()


def has_pending_actions(case: Case) -> bool:
    return PendingAction.objects.filter(case=case, status=PendingAction.Status.PENDING).exists()
