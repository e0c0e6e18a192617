"""The dashboard's forms: list filters (bad query parameters are a 400) and decisions.

Decision forms only check the shape of what a person sent; whether the
decision fits the action is ``caseloop.decisions``' job (InvalidDecision).
"""

import datetime as dt
import re
from typing import Any, cast

from django import forms
from django.db.models import Q
from django.utils import timezone

from cases.models import Case, PendingAction
from dashboard.access import PageForm
from outreach.models import Message
from outreach.subjects import validate_subject

THREAD_ID = re.compile(r"THREAD-[0-9A-F]{8}\Z")
EMPLOYEE_ID = re.compile(r"[A-Z][A-Z0-9]*-?[A-Z0-9-]*\Z")
NOTE_MAX = 2000


def site_choices(sites: list[str]) -> list[tuple[str, str]]:
    return [("", "All sites"), *((site, site) for site in sites)]


class QueueFilterForm(PageForm):
    kind = forms.ChoiceField(
        choices=[("", "All kinds"), *PendingAction.Kind.choices], required=False
    )
    site = forms.ChoiceField(choices=[], required=False)

    def __init__(self, *args: Any, sites: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["site"]).choices = site_choices(sites)

    def filter(self, queryset: Any) -> Any:
        data = self.cleaned_data
        if data.get("kind"):
            queryset = queryset.filter(kind=data["kind"])
        if data.get("site"):
            queryset = queryset.filter(case__vanpool__work_site=data["site"])
        return queryset


# Reason as the failed checks read it: "shift" includes cases that failed both.
REASONS: dict[str, tuple[str, list[str]]] = {
    "shift": ("Shift failed", [Case.Reason.SHIFT, Case.Reason.BOTH]),
    "location": ("Location failed", [Case.Reason.LOCATION, Case.Reason.BOTH]),
    "both": ("Both failed", [Case.Reason.BOTH]),
    "unknown": ("Undecided (rules could not tell)", [Case.Reason.UNKNOWN]),
}

# Age of a case since it was opened: (label, newer than days, older than days).
AGES: dict[str, tuple[str, int | None, int | None]] = {
    "week": ("Under a week", 7, None),
    "month": ("1–4 weeks", 30, 7),
    "older": ("Over 30 days", None, 30),
}


class CaseFilterForm(PageForm):
    status = forms.ChoiceField(
        choices=[("", "All statuses"), ("active", "Not closed"), *Case.Status.choices],
        required=False,
    )
    reason = forms.ChoiceField(
        choices=[("", "Any reason"), *((key, label) for key, (label, _) in REASONS.items())],
        required=False,
    )
    site = forms.ChoiceField(choices=[], required=False)
    age = forms.ChoiceField(
        choices=[("", "Any age"), *((key, label) for key, (label, *_) in AGES.items())],
        required=False,
    )

    def __init__(self, *args: Any, sites: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["site"]).choices = site_choices(sites)

    def filter_except_status(self, queryset: Any) -> Any:
        """Every filter but status: the per-status counts are taken from this."""
        data = self.cleaned_data
        if data.get("reason"):
            queryset = queryset.filter(meta__reason__in=REASONS[data["reason"]][1])
        if data.get("site"):
            queryset = queryset.filter(vanpool__work_site=data["site"])
        if data.get("age"):
            _, newer_than, older_than = AGES[data["age"]]
            now = timezone.now()
            if newer_than is not None:
                queryset = queryset.filter(created_at__gt=now - dt.timedelta(days=newer_than))
            if older_than is not None:
                queryset = queryset.filter(created_at__lte=now - dt.timedelta(days=older_than))
        return queryset

    def filter(self, queryset: Any) -> Any:
        queryset = self.filter_except_status(queryset)
        status = self.cleaned_data.get("status")
        if status == "active":
            queryset = queryset.filter(~Q(status=Case.Status.CLOSED))
        elif status:
            queryset = queryset.filter(status=status)
        return queryset


class CardStepForm(forms.Form):
    """``?step=`` on a queue card: the confirmation step of an irreversible decision."""

    step = forms.ChoiceField(choices=[("", "card"), ("confirm", "confirm")], required=False)


# --- Decisions -------------------------------------------------------------------------------


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "approve"), ("reject", "reject")])
    note = forms.CharField(required=False, max_length=NOTE_MAX, strip=True)
    next = forms.CharField(required=False, max_length=2000)

    def edits(self) -> dict[str, Any]:
        return {}


class CancelMembershipForm(DecisionForm):
    confirm = forms.BooleanField(required=False)
    # Needed only when the supervisor's review of the case failed; the note is its reason.
    override = forms.BooleanField(required=False)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("decision") == "approve":
            if not data.get("confirm"):
                self.add_error("confirm", "Confirm that this seat should be cancelled.")
            if not data.get("note"):
                self.add_error("note", "Give the reason for cancelling: it goes on the record.")
        elif data.get("decision") == "reject" and not data.get("note"):
            self.add_error("note", "Say why the cancellation is rejected: it goes on the record.")
        return data

    def edits(self) -> dict[str, Any]:
        if self.cleaned_data.get("override"):
            return {"override": True, "override_reason": self.cleaned_data["note"]}
        return {}


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


class MatchInboundForm(DecisionForm):
    thread = forms.CharField(required=False, max_length=15, strip=True)
    employee_id = forms.CharField(required=False, max_length=20, strip=True)

    def clean_thread(self) -> str:
        value = self.cleaned_data["thread"].upper()
        if value and not THREAD_ID.match(value):
            raise forms.ValidationError("A thread ID looks like THREAD-1A2B3C4D.")
        return value

    def clean_employee_id(self) -> str:
        value = self.cleaned_data["employee_id"].upper()
        if value and not EMPLOYEE_ID.match(value):
            raise forms.ValidationError("An employee ID looks like EMP-1003.")
        return value

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("decision") == "approve" and not data.get("thread") and "thread" in data:
            self.add_error("thread", "Choose the case thread this message belongs to.")
        return data

    def edits(self) -> dict[str, Any]:
        edits = {"thread": self.cleaned_data["thread"]}
        if self.cleaned_data.get("employee_id"):
            edits["employee_id"] = self.cleaned_data["employee_id"]
        return edits


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


DECISION_FORMS: dict[str, type[DecisionForm]] = {
    PendingAction.Kind.CANCEL_MEMBERSHIP: CancelMembershipForm,
    PendingAction.Kind.REVIEW_EMAIL: ReviewEmailForm,
    PendingAction.Kind.LABEL_REPLY: LabelReplyForm,
    PendingAction.Kind.MATCH_INBOUND: MatchInboundForm,
    PendingAction.Kind.DECIDE_VERIFICATION: VerificationRulingForm,
}


def decision_form(action: PendingAction, data: Any = None) -> DecisionForm:
    form_class = DECISION_FORMS[action.kind]
    if form_class is VerificationRulingForm:
        riders = sorted(action.payload.get("riders", {}))
        return VerificationRulingForm(data, riders=riders, prefix=None)
    return form_class(data)


class AskForm(forms.Form):
    question = forms.CharField(
        max_length=500,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "maxlength": 500}),
        error_messages={"required": "Type a question about this case."},
    )
