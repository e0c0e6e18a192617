"""A person's decision on a PendingAction: the frame every kind's decision runs in.

The dashboard, the admin, the API and commands call ``approve`` / ``reject``.
Each claims the action with a conditional update (pending → approved or
rejected) inside the same transaction as its effects: a second approval, or
an approval of an action that was superseded or expired, claims nothing,
raises ``AlreadyDecided`` and changes nothing.

After the case lock, in the same transaction, two guards of the review desk
run (docs/dashboard.md, "The review desk"): a card another reviewer holds is
refused (HeldByAnother) unless the decider passes ``over_claim``, and a kind
that needs two approvals (cancellations with CANCELLATION_APPROVALS=2)
records the first and takes effect on a second from another person. A
decision's ``reason`` must be on its kind's list.

What a decision does is the kind's own: ``caseloop/kinds/<kind>.py``, found
through the registry (``caseloop.kinds.DECISIONS``). A cancellation, for
one, is approved only after the supervisor has reviewed the case, and over a
failed review only with ``edits={"override": true, "override_reason": "…"}``
(``caseloop.kinds.cancel_membership``).
"""

import logging
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from caseloop.audits import AlreadyDecided
from caseloop.kinds import InvalidDecision, NewerReplyWaiting, decision_for
from caseloop.kinds.base import KindDecision, claim, record_result
from cases.desk import HeldByAnother, refuse_if_held_by_another
from cases.lifecycle import lock_case, record_event
from cases.models import Case, PendingAction
from outreach.models import EmailThread, Message
from poolpatrol.write_lock import one_writer_at_a_time
from vanpools.scope import is_scoped, refuse_outside_scope, visible

logger = logging.getLogger(__name__)

DECIDE_PERMISSION = "cases.decide_pendingaction"


def approve(
    action: PendingAction,
    *,
    by: User,
    note: str = "",
    edits: dict[str, Any] | None = None,
    reason: str = "",
    over_claim: bool = False,
) -> PendingAction:
    """Approve ``action`` (with a reviewer's edits where the kind takes them).

    ``reason`` is a code from the kind's list (``KindDecision.reasons``).
    A card another reviewer holds is refused (HeldByAnother) unless
    ``over_claim``. Where the kind needs two approvals (four-eyes), the first
    is recorded and the action stays pending; the second must come from
    another person. Both checks run after the case lock, in the transaction.
    """
    require_decider(by)
    require_in_scope(by, action, edits or {})
    decision = decision_for(action)
    decision.check_reason("approve", reason, note)
    ask = action.ask_as(decision.payload_class)
    decision.before_deciding(action)
    with one_writer_at_a_time(), transaction.atomic():
        # The guards run here, after the lock the inbound store also takes
        # (docs/design.md, "A guard runs where the step is taken"): a reply
        # stored before this point is seen; one stored after waits for the commit.
        if action.case_id is not None:
            lock_case(action.case_id)
        refuse_if_held_by_another(action.pk, by, over_claim=over_claim)
        decision.guard(action)
        if _approval_decides(decision, action, by, note=note, reason=reason):
            decision.approve(action, ask, by=by, note=note, edits=edits or {})
            _keep_reason(action, reason)
            _release_repeats(decision, action, approved=True)
    logger.info("action %s (%s) approved by %s", action.pk, action.kind, by.get_username())
    return PendingAction.objects.get(pk=action.pk)


def reject(
    action: PendingAction,
    *,
    by: User,
    note: str = "",
    reason: str = "",
    over_claim: bool = False,
) -> PendingAction:
    require_decider(by)
    require_in_scope(by, action, {})
    decision = decision_for(action)
    if decision.rejection_refused:
        raise InvalidDecision(decision.rejection_refused)
    decision.check_reason("reject", reason, note)
    with one_writer_at_a_time(), transaction.atomic():
        if action.case_id is not None:
            lock_case(action.case_id)
        refuse_if_held_by_another(action.pk, by, over_claim=over_claim)
        claim(action, PendingAction.Status.REJECTED, by, note)
        case = Case.objects.get(pk=action.case_id) if action.case_id else None
        decision.reject(action, case, by=by, note=note)
        record_result(action, {"rejected": True})
        _keep_reason(action, reason)
        _release_repeats(decision, action, approved=False)
    logger.info("action %s (%s) rejected by %s", action.pk, action.kind, by.get_username())
    return PendingAction.objects.get(pk=action.pk)


def _approval_decides(
    decision: KindDecision[Any], action: PendingAction, by: User, *, note: str, reason: str
) -> bool:
    """Four-eyes: True when this approval takes effect; False when it is the first of two.

    Runs after the case lock, so two first approvals at once are taken in
    turn: the second finds the first and must come from another person.
    """
    if decision.approvals_needed() < 2:
        return True
    current = PendingAction.objects.filter(pk=action.pk).values("status", "first_approved_by")
    row = current.first()
    if row is None or row["status"] != PendingAction.Status.PENDING:
        raise AlreadyDecided(f"this action is already {row['status'] if row else 'gone'}")
    first = row["first_approved_by"]
    if first == by.pk:
        raise InvalidDecision(
            "you approved this already: the second approval must come from another person"
        )
    if first is not None:
        return True
    PendingAction.objects.filter(pk=action.pk).update(
        first_approved_by=by, first_approved_at=timezone.now()
    )
    if action.case_id is not None:
        record_event(
            Case.objects.get(pk=action.case_id),
            actor=by,
            note=f"first of two approvals of the {action.get_kind_display()}"
            + (f": {note}" if note else ""),
            data={"action": action.pk, "reason": reason, "first_approval": True},
        )
    return False


def _keep_reason(action: PendingAction, reason: str) -> None:
    if reason:
        PendingAction.objects.filter(pk=action.pk).update(reason=reason)


def _release_repeats(decision: KindDecision[Any], action: PendingAction, *, approved: bool) -> None:
    """The emails counted on a collapsed card, once the card is decided (the kind says how)."""
    ids = action.ask.repeat_messages
    if not ids:
        return
    repeats = list(
        Message.objects.filter(message_id__in=ids, direction=Message.Direction.INBOUND).order_by(
            "received_at", "pk"
        )
    )
    decision.release_repeats(action, repeats, approved=approved)


def require_decider(user: User) -> None:
    """Only active staff with the decide permission (Coordinators, Auditors) decide."""
    if not (user.is_active and user.is_staff and user.has_perm(DECIDE_PERMISSION)):
        raise PermissionDenied("deciding pending actions needs the coordinator or auditor role")


def require_in_scope(user: User, action: PendingAction, edits: dict[str, Any]) -> None:
    """Under COORDINATOR_SCOPE=sites a decider decides on their own vanpools only.

    The pages and the API find only such actions (a 404 otherwise); the rule
    holds here too, and for a thread an edit names, which is refused in the
    words an unknown thread is (vanpools/scope.py).
    """
    if not is_scoped(user):
        return
    refuse_outside_scope(
        PendingAction.objects.filter(pk=action.pk),
        user,
        "this action is not about a vanpool you coordinate",
    )
    thread = str(edits.get("thread") or "")
    if "\x00" in thread:  # the kind's own check says so; PostgreSQL would refuse to look
        return
    if thread and not visible(EmailThread.objects.filter(thread_id=thread), user).exists():
        raise InvalidDecision(f"no thread {thread}")


__all__ = [
    "AlreadyDecided",
    "HeldByAnother",
    "InvalidDecision",
    "NewerReplyWaiting",
    "approve",
    "reject",
]
