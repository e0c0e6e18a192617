"""The dashboard's forms: list filters (bad query parameters are a 400) and decisions.

Decision forms only check the shape of what a person sent; whether the
decision fits the action is ``caseloop.decisions``' job (InvalidDecision).
Each kind's own form is in its card module (``dashboard/cards/``).
"""

import datetime as dt
import re
from typing import Any, cast

from django import forms
from django.db.models import Q
from django.utils import timezone

from cases.kinds import kind_choices
from cases.models import Case
from dashboard.access import PageForm

EMPLOYEE_ID = re.compile(r"[A-Z][A-Z0-9]*-?[A-Z0-9-]*\Z")
NOTE_MAX = 2000


def site_choices(sites: list[str]) -> list[tuple[str, str]]:
    return [("", "All sites"), *((site, site) for site in sites)]


class QueueFilterForm(PageForm):
    kind = forms.ChoiceField(choices=lambda: [("", "All kinds"), *kind_choices()], required=False)
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
    """What every decision says; a kind's form adds its edits (``edits()``)."""

    decision = forms.ChoiceField(choices=[("approve", "approve"), ("reject", "reject")])
    note = forms.CharField(required=False, max_length=NOTE_MAX, strip=True)
    next = forms.CharField(required=False, max_length=2000)

    def edits(self) -> dict[str, Any]:
        return {}


class AskForm(forms.Form):
    question = forms.CharField(
        max_length=500,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "maxlength": 500}),
        error_messages={"required": "Type a question about this case."},
    )
