"""The review kinds: one payload class per kind of PendingAction, and the registry of them.

A kind is one class here (what a person is asked, typed), one decision module
in ``caseloop/kinds/`` (what approving or rejecting it does), and one card in
``dashboard/cards/`` with its template (how it is shown). Each layer finds a
kind through its registry, keyed by the payload class; nothing else branches
on a kind. docs/design.md ("Review kinds") adds one step by step.
"""

from cases.kinds.base import InvalidPayload, ReviewPayload
from cases.kinds.cancel_membership import CancelMembership
from cases.kinds.decide_verification import DecideVerification
from cases.kinds.label_reply import HoldingReply, LabelReply
from cases.kinds.match_inbound import MatchInbound
from cases.kinds.review_email import ReviewEmail

# The registry: every kind a PendingAction may have, in the order the queue lists them.
PAYLOADS: tuple[type[ReviewPayload], ...] = (
    CancelMembership,
    ReviewEmail,
    LabelReply,
    MatchInbound,
    DecideVerification,
)

_BY_KIND: dict[str, type[ReviewPayload]] = {payload.kind: payload for payload in PAYLOADS}


class UnknownKind(LookupError):
    """No review kind has this name: a stored action or a caller names one that does not exist."""


def payload_class(kind: str) -> type[ReviewPayload]:
    """The payload class of ``kind``; UnknownKind when there is none."""
    try:
        return _BY_KIND[kind]
    except KeyError:
        raise UnknownKind(f"no review kind {kind!r}; known: {', '.join(_BY_KIND)}") from None


def kind_choices() -> list[tuple[str, str]]:
    """(value, label) for every kind: PendingAction.kind's choices, filters, the API's enum.

    Migration 0008 names this function (so a new kind needs no migration): keep its name.
    """
    return [(payload.kind, payload.label) for payload in PAYLOADS]


def kinds_decided_only_in(status: str) -> list[str]:
    """The kinds a case leaving ``status`` can no longer decide (their cards are superseded)."""
    return [payload.kind for payload in PAYLOADS if payload.decided_only_in == status]


__all__ = [
    "PAYLOADS",
    "CancelMembership",
    "DecideVerification",
    "HoldingReply",
    "InvalidPayload",
    "LabelReply",
    "MatchInbound",
    "ReviewEmail",
    "ReviewPayload",
    "UnknownKind",
    "kind_choices",
    "kinds_decided_only_in",
    "payload_class",
]
