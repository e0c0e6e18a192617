"""A person's decision on a PendingAction: the frame every kind's decision runs in.

The dashboard, the admin, the API and commands call ``approve`` / ``reject``.
Each claims the action with a conditional update (pending → approved or
rejected) inside the same transaction as its effects: a second approval, or
an approval of an action that was superseded or expired, claims nothing,
raises ``AlreadyDecided`` and changes nothing.

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

from caseloop.audits import AlreadyDecided
from caseloop.kinds import InvalidDecision, NewerReplyWaiting, decision_for
from caseloop.kinds.base import KindDecision, claim, record_result
from cases.lifecycle import lock_case
from cases.models import Case, PendingAction
from outreach.models import Message
from poolpatrol.write_lock import one_writer_at_a_time

logger = logging.getLogger(__name__)

DECIDE_PERMISSION = "cases.decide_pendingaction"


def approve(
    action: PendingAction, *, by: User, note: str = "", edits: dict[str, Any] | None = None
) -> PendingAction:
    """Approve ``action`` (with a reviewer's edits where the kind takes them)."""
    require_decider(by)
    decision = decision_for(action)
    ask = action.ask_as(decision.payload_class)
    decision.before_deciding(action)
    with one_writer_at_a_time(), transaction.atomic():
        # The guards run here, after the lock the inbound store also takes
        # (docs/design.md, "A guard runs where the step is taken"): a reply
        # stored before this point is seen; one stored after waits for the commit.
        if action.case_id is not None:
            lock_case(action.case_id)
        decision.guard(action)
        decision.approve(action, ask, by=by, note=note, edits=edits or {})
        _release_repeats(decision, action, approved=True)
    logger.info("action %s (%s) approved by %s", action.pk, action.kind, by.get_username())
    return PendingAction.objects.get(pk=action.pk)


def reject(action: PendingAction, *, by: User, note: str = "") -> PendingAction:
    require_decider(by)
    decision = decision_for(action)
    if decision.rejection_refused:
        raise InvalidDecision(decision.rejection_refused)
    with one_writer_at_a_time(), transaction.atomic():
        if action.case_id is not None:
            lock_case(action.case_id)
        claim(action, PendingAction.Status.REJECTED, by, note)
        case = Case.objects.get(pk=action.case_id) if action.case_id else None
        decision.reject(action, case, by=by, note=note)
        record_result(action, {"rejected": True})
        _release_repeats(decision, action, approved=False)
    logger.info("action %s (%s) rejected by %s", action.pk, action.kind, by.get_username())
    return PendingAction.objects.get(pk=action.pk)


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


__all__ = ["AlreadyDecided", "InvalidDecision", "NewerReplyWaiting", "approve", "reject"]
