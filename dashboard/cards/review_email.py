"""The review_email card: the rider's message, why a person, and the draft to send or edit."""

from typing import Any, ClassVar

from django import forms

from cases.kinds import ReviewEmail
from dashboard.cards.base import CardKind
from dashboard.case_forms import DecisionForm
from outreach.subjects import validate_subject


class ReviewEmailForm(DecisionForm):
    subject = forms.CharField(
        required=False, max_length=300, strip=True, validators=[validate_subject]
    )
    text = forms.CharField(required=False, max_length=20000, strip=True)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("decision") == "approve":
            if not data.get("subject"):
                self.add_error("subject", "The email needs a subject.")
            if not data.get("text"):
                self.add_error("text", "The email needs a body.")
        return data

    def edits(self) -> dict[str, Any]:
        return {"subject": self.cleaned_data["subject"], "text": self.cleaned_data["text"]}


class ReviewEmailCard(CardKind[ReviewEmail]):
    payload_class = ReviewEmail
    template: ClassVar[str] = "cases/cards/review_email.html"
    form_class: ClassVar[type[DecisionForm]] = ReviewEmailForm
