"""The match_inbound card: the email, why it was not matched, and the threads it may belong to."""

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django import forms
from django.db.models import Q

from cases.kinds import MatchInbound
from cases.models import Case, PendingAction
from dashboard.cards.base import Card, CardKind, PageReads
from dashboard.case_forms import EMPLOYEE_ID, DecisionForm
from outreach.models import EmailThread

THREAD_ID = re.compile(r"THREAD-[0-9A-F]{8}\Z")


class MatchInboundForm(DecisionForm):
    thread = forms.CharField(required=False, max_length=15, strip=True)
    employee_id = forms.CharField(required=False, max_length=20, strip=True)

    def clean_thread(self) -> str:
        value = str(self.cleaned_data["thread"]).upper()
        if value and not THREAD_ID.match(value):
            raise forms.ValidationError("A thread ID looks like THREAD-1A2B3C4D.")
        return value

    def clean_employee_id(self) -> str:
        value = str(self.cleaned_data["employee_id"]).upper()
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


@dataclass
class MatchCard(Card):
    suggestions: list[dict[str, str]] = field(default_factory=list)

    @property
    def sender(self) -> str:
        """The email's From as the card was asked, else as the message has it."""
        message = self.action.message
        return self.action.ask_as(MatchInbound).sender or (
            message.from_email if message is not None else ""
        )

    @property
    def subject(self) -> str:
        """The email's Subject as the card was asked, else as the message has it."""
        message = self.action.message
        return self.action.ask_as(MatchInbound).subject or (
            message.subject if message is not None else ""
        )


class MatchInboundCard(CardKind[MatchInbound]):
    payload_class = MatchInbound
    template: ClassVar[str] = "cases/cards/match_inbound.html"
    form_class: ClassVar[type[DecisionForm]] = MatchInboundForm

    def cards(self, actions: list[PendingAction], page: PageReads) -> list[Card]:
        cards = [MatchCard(action, self) for action in actions]
        suggestions = _thread_suggestions(cards)
        for card in cards:
            card.suggestions = suggestions.get(card.action.pk, [])
        return list(cards)


def _thread_suggestions(cards: list[MatchCard]) -> dict[int, list[dict[str, str]]]:
    """Open case threads an unmatched message may belong to: its case, or its sender's van."""
    senders = {card.sender.lower() for card in cards}
    senders.discard("")
    rows = (
        EmailThread.objects.filter(
            ~Q(case__status=Case.Status.CLOSED),
            case__vanpool__riders__employee__email__in=senders,
            case__vanpool__riders__status="active",
        )
        .values(
            "thread_id",
            "case__case_id",
            "case__vanpool__vanpool_id",
            "case__vanpool__riders__employee__employee_id",
            "case__vanpool__riders__employee__email",
        )
        .order_by("thread_id")[:500]
        if senders
        else []
    )
    by_sender: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        by_sender[row["case__vanpool__riders__employee__email"].lower()].append(
            {
                "thread": row["thread_id"],
                "case": row["case__case_id"],
                "vanpool": row["case__vanpool__vanpool_id"],
                "employee_id": row["case__vanpool__riders__employee__employee_id"],
                "why": "the sender rides this van",
            }
        )
    result: dict[int, list[dict[str, str]]] = {}
    for card in cards:
        options: list[dict[str, str]] = []
        case = card.action.case
        thread = _thread_of(case) if case is not None else None
        if case is not None and thread is not None and case.status != Case.Status.CLOSED:
            options.append(
                {
                    "thread": thread.thread_id,
                    "case": case.case_id,
                    "vanpool": case.vanpool.vanpool_id,
                    "employee_id": "",
                    "why": "the message's own thread",
                }
            )
        for option in by_sender.get(card.sender.lower(), []):
            if option["thread"] not in {o["thread"] for o in options}:
                options.append(option)
        result[card.action.pk] = options
    return result


def _thread_of(case: Case) -> EmailThread | None:
    try:
        return case.thread
    except EmailThread.DoesNotExist:
        return None
