"""The decide_verification card: the unknown evidence and one pass/fail ruling per rider."""

from dataclasses import dataclass, field
from typing import Any, ClassVar

from django import forms

from cases.kinds import DecideVerification
from cases.models import PendingAction
from dashboard.cards.base import Card, CardKind, PageReads
from dashboard.case_forms import DecisionForm
from dashboard.queries import EvidenceItem, rider_evidence

RULINGS = [("pass", "pass"), ("fail", "fail")]


class VerificationRulingForm(DecisionForm):
    """One pass/fail ruling per rider the rules could not decide (``ruling_<employee_id>``)."""

    decision = forms.ChoiceField(choices=[("approve", "approve")])

    def __init__(self, *args: Any, riders: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.riders = riders
        for employee_id in riders:
            self.fields[f"ruling_{employee_id}"] = forms.ChoiceField(
                choices=RULINGS,
                widget=forms.RadioSelect,
                label=employee_id,
                error_messages={"required": f"Rule pass or fail for {employee_id}."},
            )

    def edits(self) -> dict[str, Any]:
        return {"rulings": {emp: self.cleaned_data[f"ruling_{emp}"] for emp in self.riders}}


@dataclass
class VerificationCard(Card):
    evidence: list[EvidenceItem] = field(default_factory=list)
    reasoning: dict[str, str] = field(default_factory=dict)


class DecideVerificationCard(CardKind[DecideVerification]):
    payload_class = DecideVerification
    template: ClassVar[str] = "cases/cards/decide_verification.html"
    form_class: ClassVar[type[DecisionForm]] = VerificationRulingForm
    reads_verifications: ClassVar[bool] = True

    def cards(self, actions: list[PendingAction], page: PageReads) -> list[Card]:
        verifications = page.newest_verifications()
        cards: list[Card] = []
        for action in actions:
            found = verifications.get(action.case_id or 0, {})
            riders = sorted(action.ask_as(DecideVerification).riders)
            cards.append(
                VerificationCard(
                    action,
                    self,
                    evidence=rider_evidence(found, riders, only_unknown=True),
                    reasoning={check: v.reasoning for check, v in found.items()},
                )
            )
        return cards

    def form(self, action: PendingAction, data: Any = None) -> DecisionForm:
        riders = sorted(action.ask_as(DecideVerification).riders)
        return VerificationRulingForm(data, riders=riders, prefix=None)
