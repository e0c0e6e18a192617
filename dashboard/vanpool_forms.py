"""Query parameters of the vanpool pages, validated: anything unexpected is a 400."""

from typing import Any, cast

from django import forms

from cases.models import Case
from dashboard.access import PageForm
from vanpools.models import Vanpool

FLAGGED = "flagged"
CLEAR = "clear"
FLAG_CHOICES = [
    ("", "All vanpools"),
    (FLAGGED, "Flagged (open case)"),
    (CLEAR, "No open case"),
    *[(reason.value, f"Flagged: {reason.label}") for reason in Case.Reason],
]


class VanpoolFilterForm(PageForm):
    q = forms.CharField(label="Search", max_length=100, required=False, strip=True)
    site = forms.ChoiceField(label="Site", required=False)
    status = forms.ChoiceField(
        label="Status", required=False, choices=[("", "Any status"), *Vanpool.Status.choices]
    )
    flag = forms.ChoiceField(label="Audit", required=False, choices=FLAG_CHOICES)

    def __init__(self, *args: Any, sites: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["site"]).choices = [
            ("", "All sites"),
            *[(site, site) for site in sites],
        ]
