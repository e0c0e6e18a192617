"""The review_vanpool card: the van's month against the §132(f) rules, handled or wrong."""

from dataclasses import dataclass, field
from typing import ClassVar

from cases.kinds import ReviewVanpool
from cases.models import PendingAction
from dashboard.cards.base import Card, CardKind, PageReads
from dashboard.case_forms import DecisionForm
from dashboard.queries import EvidenceItem


@dataclass
class VanpoolCard(Card):
    evidence: list[EvidenceItem] = field(default_factory=list)


class ReviewVanpoolCard(CardKind[ReviewVanpool]):
    payload_class = ReviewVanpool
    template: ClassVar[str] = "cases/cards/review_vanpool.html"
    form_class: ClassVar[type[DecisionForm]] = DecisionForm
    reads_verifications: ClassVar[bool] = True

    def cards(self, actions: list[PendingAction], page: PageReads) -> list[Card]:
        verifications = page.newest_verifications()
        cards: list[Card] = []
        for action in actions:
            found = verifications.get(action.case_id or 0, {}).get("vanpool_rules")
            items = (
                [
                    EvidenceItem("vanpool_rules", found.verdict, item, found.pk)
                    for item in found.evidence or []
                    if isinstance(item, dict) and item.get("type") in ("vanpool_month", "no_data")
                ]
                if found is not None
                else []
            )
            cards.append(VanpoolCard(action, self, evidence=items))
        return cards
