"""The cancel_membership card: the rider's evidence, the supervisor's review, what was tried."""

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django import forms
from django.utils import timezone

from caseloop.lessons import SimilarCases, similar_past_cases_for
from caseloop.supervisor.review import latest_reviews_for
from cases.kinds import CancelMembership
from cases.models import CaseEvent, CaseReview, PendingAction
from dashboard.cards.base import Card, CardKind, PageReads
from dashboard.case_forms import DecisionForm
from dashboard.queries import CheckItem, EvidenceItem, rider_evidence
from outreach.models import Message


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


@dataclass
class CancellationCard(Card):
    evidence: list[EvidenceItem] = field(default_factory=list)
    reasoning: dict[str, str] = field(default_factory=dict)
    review: CaseReview | None = None
    similar: SimilarCases | None = None
    checklist: list[CheckItem] = field(default_factory=list)


class CancelMembershipCard(CardKind[CancelMembership]):
    payload_class = CancelMembership
    template: ClassVar[str] = "cases/cards/cancel_membership.html"
    form_class: ClassVar[type[DecisionForm]] = CancelMembershipForm
    confirms: ClassVar[bool] = True  # ending a seat cannot be undone from here
    reads_verifications: ClassVar[bool] = True

    def cards(self, actions: list[PendingAction], page: PageReads) -> list[Card]:
        case_ids = {action.case_id for action in actions if action.case_id is not None}
        reviews = latest_reviews_for(case_ids) if case_ids else {}
        verifications = page.newest_verifications()
        messages = _messages_by_case(case_ids) if case_ids else {}
        reaudits = _reaudits_by_case(case_ids) if case_ids else {}
        cases = {a.case_id: a.case for a in actions if a.case_id is not None and a.case is not None}
        similar = similar_past_cases_for(cases.values()) if cases else {}
        cards: list[Card] = []
        for action in actions:
            card = CancellationCard(action, self)
            case_id = action.case_id or 0  # pks start at 1: a caseless action finds nothing
            found = verifications.get(case_id, {})
            failed = set(action.ask_as(CancelMembership).failed_checks or found)
            card.evidence = rider_evidence(
                {check: v for check, v in found.items() if check in failed}, [card.employee_id]
            )
            card.reasoning = {check: v.reasoning for check, v in found.items()}
            card.review = reviews.get(case_id)
            card.similar = similar.get(case_id)
            card.checklist = cancellation_checklist(
                action, card.employee_id, messages.get(case_id, []), reaudits.get(case_id, [])
            )
            cards.append(card)
        return cards


def _messages_by_case(case_ids: set[int]) -> dict[int, list[Mapping[str, Any]]]:
    rows = (
        Message.objects.filter(thread__case_id__in=case_ids)
        .order_by("created_at", "id")
        .values(
            "thread__case_id",
            "message_id",
            "direction",
            "status",
            "kind",
            "bucket",
            "bucket_confidence",
            "flags",
            "template",
            "sent_at",
            "received_at",
            "created_at",
            "employee__employee_id",
        )
    )
    grouped: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[row["thread__case_id"]].append(row)
    return grouped


def _reaudits_by_case(case_ids: set[int]) -> dict[int, list[CaseEvent]]:
    rows = CaseEvent.objects.filter(case_id__in=case_ids, note__startswith="re-audit ").order_by(
        "created_at", "id"
    )
    grouped: dict[int, list[CaseEvent]] = defaultdict(list)
    for row in rows:
        grouped[row.case_id].append(row)
    return grouped


def cancellation_checklist(
    action: PendingAction,
    employee_id: str,
    messages: list[Mapping[str, Any]],
    reaudits: list[CaseEvent],
) -> list[CheckItem]:
    """What was tried before asking to cancel, from the case's own records."""
    to_rider = [
        m
        for m in messages
        if m["direction"] == "outbound" and m["employee__employee_id"] == employee_id
    ]
    sent = [m for m in to_rider if m["status"] == Message.Status.SENT]
    bounced = [m for m in to_rider if "bounced" in (m["flags"] or [])]
    delivered = [m for m in sent if "bounced" not in (m["flags"] or [])]
    replies = [
        m
        for m in messages
        if m["direction"] == "inbound"
        and m["employee__employee_id"] == employee_id
        and m["kind"] in ("", Message.Kind.REPLY)
    ]
    case = action.case
    templates = sorted({m["template"] for m in sent if m["template"]})
    items = [
        CheckItem(
            "Emails sent",
            f"{len(sent)} sent to {employee_id}" + (f" ({', '.join(templates)})" if sent else ""),
            "done" if sent else "missing",
        ),
        CheckItem(
            "Delivered",
            f"{len(delivered)} delivered, {len(bounced)} bounced",
            "done" if delivered else "missing",
        ),
    ]
    if replies:
        buckets = ", ".join(
            f"{m['message_id']}: {m['bucket'] or 'not yet labelled'}" for m in replies
        )
        items.append(CheckItem("Replies", f"{len(replies)} — {buckets}", "info"))
    else:
        items.append(CheckItem("Replies", "no reply from the rider", "info"))
    if reaudits:
        items.append(
            CheckItem(
                "Re-audits",
                "; ".join(event.note.removeprefix("re-audit ") for event in reaudits),
                "done",
            )
        )
    else:
        items.append(CheckItem("Re-audits", "none recorded", "missing"))
    if case is not None and case.reply_deadline:
        passed = case.reply_deadline <= timezone.now()
        items.append(
            CheckItem(
                "Reply deadline",
                timezone.localtime(case.reply_deadline).strftime("%a %d %b %Y %H:%M")
                + (" (passed)" if passed else " (not yet passed)"),
                "done" if passed else "missing",
            )
        )
    else:
        why = action.ask_as(CancelMembership).why
        items.append(CheckItem("Reply deadline", why or "no deadline on the case", "info"))
    return items


__all__ = ["CancelMembershipCard", "CancelMembershipForm", "cancellation_checklist"]
