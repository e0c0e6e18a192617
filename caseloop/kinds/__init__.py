"""Deciding review kinds: one module per kind, found through ``DECISIONS``.

Each module holds a ``KindDecision`` for one payload class of
``cases.kinds``; ``caseloop.decisions`` looks the action's kind up here and
runs it inside the frame every decision shares. A kind missing here raises
UnknownKind, as a stored action of a kind no class reads does.
"""

from typing import Any

from caseloop.kinds.base import InvalidDecision, KindDecision
from caseloop.kinds.cancel_membership import CancelMembershipDecision, NewerReplyWaiting
from caseloop.kinds.decide_verification import DecideVerificationDecision
from caseloop.kinds.label_reply import LabelReplyDecision
from caseloop.kinds.match_inbound import MatchInboundDecision
from caseloop.kinds.review_email import ReviewEmailDecision
from cases.kinds import ReviewPayload, UnknownKind, payload_class
from cases.models import PendingAction

# The registry: a kind's payload class → how a decision on it is carried out.
DECISIONS: dict[type[ReviewPayload], KindDecision[Any]] = {
    decision.payload_class: decision
    for decision in (
        CancelMembershipDecision(),
        ReviewEmailDecision(),
        LabelReplyDecision(),
        MatchInboundDecision(),
        DecideVerificationDecision(),
    )
}


def decision_for(action: PendingAction) -> KindDecision[Any]:
    """How to decide ``action``; UnknownKind when its kind has no decision module."""
    kind = payload_class(action.kind)
    try:
        return DECISIONS[kind]
    except KeyError:
        raise UnknownKind(f"no decision module for the kind {kind.kind!r}") from None


__all__ = ["DECISIONS", "InvalidDecision", "KindDecision", "NewerReplyWaiting", "decision_for"]
