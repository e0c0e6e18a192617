"""The label_reply card: the reply, the reader's guess and why a person, the buckets to pick."""

from typing import Any, ClassVar

from django import forms

from cases.kinds import LabelReply
from dashboard.cards.base import CardKind
from dashboard.case_forms import DecisionForm
from outreach.models import Message

BUCKET_CHOICES = [(value, label) for value, label in Message.Bucket.choices if value]


class LabelReplyForm(DecisionForm):
    bucket = forms.ChoiceField(choices=BUCKET_CHOICES, required=False)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("decision") == "approve" and not data.get("bucket"):
            self.add_error("bucket", "Pick the bucket this reply belongs in.")
        return data

    def edits(self) -> dict[str, Any]:
        return {"bucket": self.cleaned_data["bucket"]}


class LabelReplyCard(CardKind[LabelReply]):
    payload_class = LabelReply
    template: ClassVar[str] = "cases/cards/label_reply.html"
    form_class: ClassVar[type[DecisionForm]] = LabelReplyForm
