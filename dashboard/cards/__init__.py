"""Showing review kinds: one card module and one template per kind, found through ``CARDS``.

``build_cards`` hands each kind its own actions on a page, so a page of any
mix costs a fixed number of queries per kind on it; ``decision_form`` gives
the form a person decides a card with.
"""

from typing import Any

from cases.kinds import ReviewPayload, UnknownKind, payload_class
from cases.models import PendingAction
from dashboard.cards.base import Card, CardKind, PageReads
from dashboard.cards.cancel_membership import CancelMembershipCard
from dashboard.cards.decide_verification import DecideVerificationCard
from dashboard.cards.label_reply import LabelReplyCard
from dashboard.cards.match_inbound import MatchInboundCard
from dashboard.cards.review_email import ReviewEmailCard
from dashboard.case_forms import DecisionForm

# The registry: a kind's payload class → how its card is shown and decided.
CARDS: dict[type[ReviewPayload], CardKind[Any]] = {
    card.payload_class: card
    for card in (
        CancelMembershipCard(),
        ReviewEmailCard(),
        LabelReplyCard(),
        MatchInboundCard(),
        DecideVerificationCard(),
    )
}


def card_kind(action: PendingAction) -> CardKind[Any]:
    """How ``action`` is shown; UnknownKind when its kind has no card module."""
    kind = payload_class(action.kind)
    try:
        return CARDS[kind]
    except KeyError:
        raise UnknownKind(f"no card module for the kind {kind.kind!r}") from None


def build_cards(actions: list[PendingAction]) -> list[Card]:
    """Cards for a page of actions, in its order: a fixed number of queries per kind on it."""
    by_kind: dict[type[ReviewPayload], list[PendingAction]] = {}
    for action in actions:
        by_kind.setdefault(payload_class(action.kind), []).append(action)
    page = PageReads(
        verified_cases={
            action.case_id
            for action in actions
            if action.case_id is not None and card_kind(action).reads_verifications
        }
    )
    built: dict[int, Card] = {}
    for action_list in by_kind.values():
        for card in card_kind(action_list[0]).cards(action_list, page):
            built[card.action.pk] = card
    return [built[action.pk] for action in actions]


def decision_form(action: PendingAction, data: Any = None) -> DecisionForm:
    return card_kind(action).form(action, data)


__all__ = ["CARDS", "Card", "CardKind", "PageReads", "build_cards", "card_kind", "decision_form"]
