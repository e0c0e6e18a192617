"""Deciding cancel_membership: end the seat, tell the rider, close the case once all are decided.

A cancellation is approved only after the supervisor has reviewed the case
(``caseloop.supervisor.review``); when that review failed, approving needs
``edits={"override": true, "override_reason": "…"}``, and the override is
written to the case's trail and the action's result. Nothing is cancelled
over a reply nobody has read yet (``guard``). Rejecting it closes the case
``dismissed``.
"""

from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q
from django.utils import timezone

from caseloop.audits import AlreadyDecided
from caseloop.kinds.base import (
    InvalidDecision,
    KindDecision,
    claim,
    record_result,
    row,
)
from caseloop.loop.writing import thread_for
from caseloop.supervisor.review import review_for_decision
from cases.kinds import CancelMembership
from cases.lifecycle import record_event, transition
from cases.models import Case, CaseReview, PendingAction
from outreach.models import Message
from outreach.sending import queue_template
from vanpools.models import Rider

Status = Case.Status
OVERRIDE_TRUE = (True, 1, "1", "true", "on", "yes")


class NewerReplyWaiting(AlreadyDecided):
    """The rider wrote after the proposal and the reply is not read yet: a conflict (409)."""


class CancelMembershipDecision(KindDecision[CancelMembership]):
    payload_class = CancelMembership

    def before_deciding(self, action: PendingAction) -> None:
        """Make sure the supervisor has reviewed the case before anyone approves a cancellation.

        Normally the review task ran when the case entered pre_cancel. If it has
        not (yet), the supervisor runs now, in its own transaction: an approval
        refused for want of an override must not roll the review back with it.
        """
        pending = PendingAction.objects.filter(pk=action.pk, status=PendingAction.Status.PENDING)
        if not pending.exists():
            return  # the claim will say it is already decided
        case = row(Case.objects.all(), action.case_id)
        if case.status == Status.PRE_CANCEL:
            review_for_decision(case)

    def guard(self, action: PendingAction) -> None:
        refuse_over_an_unread_reply(action)

    def approve(
        self,
        action: PendingAction,
        ask: CancelMembership,
        *,
        by: User,
        note: str,
        edits: dict[str, Any],
    ) -> None:
        claim(action, PendingAction.Status.APPROVED, by, note)
        case = row(Case.objects.select_related("vanpool"), action.case_id)
        if case.status != Status.PRE_CANCEL:
            raise InvalidDecision(f"{case.case_id} is {case.status}, not waiting on a cancellation")
        review = review_for_decision(case)
        override = _override_of(review, edits)
        rider = row(Rider.objects.select_for_update().select_related("employee"), action.rider_id)
        employee = rider.employee
        if override:
            record_event(
                case,
                actor=by,
                note=f"cancellation of {employee.employee_id} approved over a failed supervisor "
                f"review ({review.score}/100): {override['override_reason']}",
                data={
                    **override,
                    "employee_id": employee.employee_id,
                    "action": action.pk,
                    "review": review.pk,
                    "review_score": review.score,
                },
            )
        if rider.status == Rider.Status.ACTIVE:
            rider.status = Rider.Status.CANCELLED
            rider.cancelled_at = timezone.now()
            rider.cancelled_by = by
            rider.cancel_reason = _cancel_reason(case, ask, by, note)
            rider.save(update_fields=["status", "cancelled_at", "cancelled_by", "cancel_reason"])
        record_event(
            case,
            actor=by,
            note=f"seat of {employee.employee_id} on {case.vanpool.vanpool_id} cancelled",
            data={"employee_id": employee.employee_id, "action": action.pk},
        )
        email = queue_template(
            thread_for(case),
            employee,
            "cancelled",
            key=f"{case.case_id}:cancelled:{employee.employee_id}",
        )
        record_result(
            action,
            {
                "rider_status": rider.status,
                "email": email.message_id if email else None,
                "review": review.pk,
                "review_score": review.score,
                "review_passed": review.passed,
                "override": bool(override),
                **({"override_reason": override["override_reason"]} if override else {}),
            },
        )
        remaining = PendingAction.objects.of(CancelMembership).filter(
            case=case, status=PendingAction.Status.PENDING
        )
        if not remaining.exists():
            transition(
                case,
                Status.CLOSED,
                actor=by,
                outcome=Case.Outcome.CANCELLED,
                note="every flagged rider's cancellation was decided",
            )

    def reject(self, action: PendingAction, case: Case | None, *, by: User, note: str) -> None:
        if case is None or case.status == Status.CLOSED:
            return
        transition(
            case,
            Status.CLOSED,
            actor=by,
            outcome=Case.Outcome.DISMISSED,
            note=f"cancellation rejected: {note}" if note else "cancellation rejected",
        )


def refuse_over_an_unread_reply(action: PendingAction) -> None:
    """Nothing is cancelled over the rider's newer words that nobody has read yet.

    A reply stored after the proposal but not yet processed by the worker may
    say "don't cancel": the approval waits until it is read (which withdraws
    the proposal and asks a person, see ``caseloop.loop.inbound``).
    So does any message quarantined on the case's thread (one we could not
    read, addressed to its reply address) until a person has decided its
    card. Runs after ``lock_case``, inside the approval's transaction.
    """
    if action.case_id is None:
        return
    # A quarantined message holds whenever it came: nobody has read it, before
    # the proposal or after.
    unread = (
        Message.objects.filter(thread__case_id=action.case_id, direction=Message.Direction.INBOUND)
        .filter(
            Q(kind=Message.Kind.REPLY, processed_at__isnull=True, received_at__gt=action.created_at)
            | Q(status=Message.Status.QUARANTINED)
        )
        .order_by("received_at", "pk")
        .first()
    )
    if unread is None:
        return
    if unread.status == Message.Status.QUARANTINED:
        raise NewerReplyWaiting(
            f"a message ({unread.message_id}) came on this case's thread and could not be "
            "read; a person must look at its card before anything is cancelled"
        )
    raise NewerReplyWaiting(
        f"the rider replied ({unread.message_id}) after this cancellation was proposed and "
        "the reply has not been read yet; try again once it is"
    )


def _override_of(review: CaseReview, edits: dict[str, Any]) -> dict[str, Any]:
    """{} when the review passed; else the reviewer's explicit override, or InvalidDecision."""
    if review.passed:
        return {}
    reason = str(edits.get("override_reason") or "").strip()
    if edits.get("override") not in OVERRIDE_TRUE or not reason:
        raise InvalidDecision(
            f"the supervisor's review of this case failed ({review.score}/100: "
            f"{_worst_issues(review)}); approving the cancellation needs an explicit override "
            'with a reason: {"override": true, "override_reason": "…"}'
        )
    return {"override": True, "override_reason": reason}


def _worst_issues(review: CaseReview, limit: int = 2) -> str:
    order = {"high": 0, "medium": 1, "low": 2}
    issues = sorted(review.issues, key=lambda issue: order.get(issue.get("severity"), 3))
    text = "; ".join(issue.get("description", "") for issue in issues[:limit])
    more = len(issues) - limit
    return text + (f" (+{more} more)" if more > 0 else "") if text else "weak justification"


def _cancel_reason(case: Case, ask: CancelMembership, by: User, note: str) -> str:
    checks = ", ".join(ask.failed_checks) or case.meta.get("reason", "")
    reason = f"{case.case_id}: {checks} check failed; approved by {by.get_username()}."
    return f"{reason} {note}".strip()
