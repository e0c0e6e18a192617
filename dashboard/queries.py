"""The dashboard's reads, each a fixed number of queries however many rows there are.

The queue and case list fetch one page of rows with their relations joined,
then gather everything a page needs about those rows (verifications,
messages, re-audits) in one query per kind of record, never one per row.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Min, OuterRef, Q, QuerySet, Subquery, Window
from django.db.models.functions import Coalesce, RowNumber
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from agents.models import AgentRun
from caseloop.lessons import SimilarCases, similar_past_cases_for
from caseloop.supervisor.review import latest_reviews_for
from cases.models import Case, CaseEvent, CaseLesson, CaseReview, PendingAction, Verification
from outreach.models import EmailThread, Message
from vanpools.models import Employee
from vanpools.scope import visible, visible_sites

Kind = PendingAction.Kind


def work_sites(user: Any) -> list[str]:
    """The work sites ``user`` may filter on: every site, or those of their vanpools."""
    return visible_sites(user)


# --- Queue --------------------------------------------------------------------------------


def pending_actions(user: Any) -> QuerySet[PendingAction]:
    """``user``'s review queue, oldest first, with what every card shows joined in."""
    return (
        visible(PendingAction.objects.filter(status=PendingAction.Status.PENDING), user)
        .select_related("case__vanpool", "case__thread", "rider__employee", "message__employee")
        .order_by("created_at", "id")
    )


@dataclass(frozen=True)
class ModelBacklog:
    count: int
    oldest: datetime | None


def replies_waiting_for_the_model(user: Any) -> ModelBacklog:
    """Replies a configured model could not read yet (one query): shown above the queue."""
    waiting = Message.objects.filter(
        direction=Message.Direction.INBOUND, status=Message.Status.MODEL_WAIT
    )
    backlog = visible(waiting, user).aggregate(count=Count("pk"), oldest=Min("received_at"))
    return ModelBacklog(backlog["count"], backlog["oldest"])


def action_with_relations(pk: int, user: Any) -> PendingAction | None:
    """The action, or None when there is none ``user`` may see."""
    return (
        visible(PendingAction.objects.all(), user)
        .select_related(
            "case__vanpool", "case__thread", "rider__employee", "message__employee", "decided_by"
        )
        .filter(pk=pk)
        .first()
    )


def pending_counts_by_kind(queryset: QuerySet[PendingAction]) -> dict[str, int]:
    rows = queryset.order_by().values("kind").annotate(n=Count("id"))
    return {row["kind"]: row["n"] for row in rows}


def newest_verifications(case_ids: Iterable[int]) -> dict[int, dict[str, Verification]]:
    """{case pk: {check: its newest Verification}} for many cases, in one query."""
    newest = Window(
        RowNumber(),
        partition_by=[F("case_id"), F("check_type")],
        order_by=[F("created_at").desc(), F("id").desc()],
    )
    rows = (
        Verification.objects.filter(case_id__in=list(case_ids))
        .annotate(newest=newest)
        .filter(newest=1)
    )
    found: dict[int, dict[str, Verification]] = defaultdict(dict)
    for row in rows:
        assert row.case_id is not None  # filtered by case above
        found[row.case_id][row.check_type] = row
    return found


@dataclass
class CheckItem:
    label: str
    detail: str
    state: str  # done | missing | info


@dataclass
class EvidenceItem:
    check: str
    verdict: str
    item: dict[str, Any]
    verification_id: int

    @property
    def type(self) -> str:
        return str(self.item.get("type", ""))

    @property
    def cites(self) -> list[tuple[str, str]]:
        return citation_links(self.item)

    @property
    def home_source(self) -> str:
        return str(self.item.get("home_source", "")).replace("_", " ")

    @property
    def van_source(self) -> str:
        return str(self.item.get("van_schedule_source", "")).replace("_", " ")


def citation_links(item: dict[str, Any]) -> list[tuple[str, str]]:
    """(text, url) for each record an evidence item cites; shift and leave live on the employee."""
    links: list[tuple[str, str]] = []
    seen: set[str] = set()
    for cite in item.get("cites", []) or []:
        if not isinstance(cite, dict):
            continue
        record, record_id, field_name = (
            cite.get("record"),
            cite.get("id", ""),
            cite.get("field", ""),
        )
        text = f"{record} {record_id} · {field_name}"
        if text in seen or not record_id:
            continue
        seen.add(text)
        try:
            if record == "employee":
                url = reverse("employee-detail", args=[record_id])
            elif record == "vanpool":
                url = reverse("vanpool-detail", args=[record_id])
            elif item.get("employee_id"):
                url = reverse("employee-detail", args=[item["employee_id"]])
            else:
                url = ""
        except NoReverseMatch:
            url = ""
        links.append((text, url))
    return links


def evidence_items(
    verification: Verification, employee_ids: set[str] | None = None
) -> list[EvidenceItem]:
    """A verification's evidence as items (only the given riders' when employee_ids is set)."""
    items = []
    for item in verification.evidence or []:
        if not isinstance(item, dict):
            continue
        if employee_ids is not None and item.get("employee_id") not in employee_ids:
            continue
        items.append(
            EvidenceItem(verification.check_type, verification.verdict, item, verification.pk)
        )
    return items


@dataclass
class Card:
    """Everything one queue card shows about its action."""

    action: PendingAction
    evidence: list[EvidenceItem] = field(default_factory=list)
    form: Any = None
    review: CaseReview | None = None
    notice: dict[str, str] | None = None
    checklist: list[CheckItem] = field(default_factory=list)
    suggestions: list[dict[str, str]] = field(default_factory=list)
    reasoning: dict[str, str] = field(default_factory=dict)
    similar: SimilarCases | None = None

    @property
    def result_rows(self) -> list[tuple[str, str]]:
        """What the decision did, as label/value lines a person reads."""
        rows = []
        for key, value in (self.action.result or {}).items():
            if key == "review":
                continue  # the review's pk; its score and outcome are shown
            if isinstance(value, bool):
                value = "yes" if value else "no"
            elif value is None or value == "":
                value = "—"
            elif isinstance(value, dict):
                value = ", ".join(f"{k}: {v}" for k, v in value.items())
            rows.append((key.replace("_", " ").capitalize(), str(value)))
        return rows

    @property
    def message_body(self) -> str:
        return self.action.message.readable_text() if self.action.message is not None else ""

    @property
    def employee_id(self) -> str:
        action = self.action
        if action.rider is not None:
            return action.rider.employee.employee_id
        return str(action.payload.get("employee_id", ""))


def build_cards(actions: list[PendingAction], user: Any) -> list[Card]:
    """Cards for a page of actions: a fixed number of queries, whatever the page holds.

    What a card shows besides its own case (similar past cases, threads an
    unmatched email may belong to) is what ``user`` may see.
    """
    case_ids = {action.case_id for action in actions if action.case_id}
    needs_evidence = {
        a.case_id
        for a in actions
        if a.kind in (Kind.CANCEL_MEMBERSHIP, Kind.DECIDE_VERIFICATION) and a.case_id is not None
    }
    needs_history = {
        a.case_id for a in actions if a.kind == Kind.CANCEL_MEMBERSHIP and a.case_id is not None
    }
    reviews = latest_reviews_for(needs_history) if needs_history else {}
    verifications = newest_verifications(needs_evidence & case_ids) if needs_evidence else {}
    messages = _messages_by_case(needs_history) if needs_history else {}
    reaudits = _reaudits_by_case(needs_history) if needs_history else {}
    cancelled_cases = {
        a.case_id: a.case for a in actions if a.case_id in needs_history and a.case is not None
    }
    lessons = visible(CaseLesson.objects.all(), user)
    similar = (
        similar_past_cases_for(cancelled_cases.values(), lessons=lessons) if cancelled_cases else {}
    )
    unmatched = [a for a in actions if a.kind == Kind.MATCH_INBOUND]
    suggestions = _thread_suggestions(unmatched, user) if unmatched else {}
    cards = []
    for action in actions:
        card = Card(action)
        case_id = action.case_id or 0  # pks start at 1: a caseless action finds nothing
        found = verifications.get(case_id, {})
        if action.kind == Kind.CANCEL_MEMBERSHIP:
            failed = set(action.payload.get("failed_checks") or found)
            card.evidence = _rider_evidence(
                {check: v for check, v in found.items() if check in failed}, [card.employee_id]
            )
            card.reasoning = {check: v.reasoning for check, v in found.items()}
            card.review = reviews.get(case_id)
            card.similar = similar.get(case_id)
            card.checklist = cancellation_checklist(
                action,
                card.employee_id,
                messages.get(case_id, []),
                reaudits.get(case_id, []),
            )
        elif action.kind == Kind.DECIDE_VERIFICATION:
            riders = sorted(action.payload.get("riders", {}))
            card.evidence = _rider_evidence(found, riders, only_unknown=True)
            card.reasoning = {check: v.reasoning for check, v in found.items()}
        elif action.kind == Kind.MATCH_INBOUND:
            card.suggestions = suggestions.get(action.pk, [])
        cards.append(card)
    return cards


def _rider_evidence(
    found: dict[str, Verification], employee_ids: list[str], *, only_unknown: bool = False
) -> list[EvidenceItem]:
    wanted = set(employee_ids)
    items = []
    for check in sorted(found):
        verification = found[check]
        for item in verification.evidence or []:
            if not isinstance(item, dict) or item.get("employee_id") not in wanted:
                continue
            if only_unknown and item.get("type") != "unknown_input":
                continue
            if item.get("type") == "shift_day" and item.get("matches"):
                continue  # the matching days add nothing to a decision
            items.append(EvidenceItem(check, verification.verdict, item, verification.pk))
    return items


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
    items = [
        CheckItem(
            "Emails sent",
            f"{len(sent)} sent to {employee_id}"
            + (
                f" ({', '.join(sorted({m['template'] for m in sent if m['template']}))})"
                if sent
                else ""
            ),
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
        why = action.payload.get("why", "")
        items.append(CheckItem("Reply deadline", why or "no deadline on the case", "info"))
    return items


def _thread_suggestions(actions: list[PendingAction], user: Any) -> dict[int, list[dict[str, str]]]:
    """Open case threads an unmatched message may belong to: its case, or its sender's van."""
    senders = {
        str(
            a.payload.get("from") or (a.message.from_email if a.message is not None else "")
        ).lower()
        for a in actions
    }
    senders.discard("")
    rows = (
        visible(EmailThread.objects.all(), user)
        .filter(
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
    for action in actions:
        options: list[dict[str, str]] = []
        case = action.case
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
        sender = str(
            action.payload.get("from")
            or (action.message.from_email if action.message is not None else "")
        )
        for option in by_sender.get(sender.lower(), []):
            if option["thread"] not in {o["thread"] for o in options}:
                options.append(option)
        result[action.pk] = options
    return result


def _thread_of(case: Case) -> EmailThread | None:
    try:
        return case.thread
    except EmailThread.DoesNotExist:
        return None


# --- Case list ----------------------------------------------------------------------------


def cases(user: Any) -> QuerySet[Case]:
    # A correlated subquery rather than Count + GROUP BY: the database sorts and
    # cuts the page first and counts pending actions for those 50 rows only,
    # and the paginator's COUNT(*) stays a plain count.
    pending = (
        PendingAction.objects.filter(case=OuterRef("pk"), status=PendingAction.Status.PENDING)
        .order_by()
        .values("case")
        .annotate(n=Count("id"))
        .values("n")
    )
    return (
        visible(Case.objects.all(), user)
        .select_related("vanpool")
        .annotate(pending=Coalesce(Subquery(pending), 0))
    )


def counts_by_status(queryset: QuerySet[Case]) -> dict[str, int]:
    rows = queryset.order_by().values("status").annotate(n=Count("id"))
    return {row["status"]: row["n"] for row in rows}


# --- Case page ----------------------------------------------------------------------------


@dataclass
class CaseRecords:
    """Everything the case page (and the Q&A) reads about one case."""

    case: Case
    verifications: list[Verification]
    latest: dict[str, Verification]
    thread: EmailThread | None
    messages: list[Message]
    events: list[CaseEvent]
    runs: list[tuple[AgentRun, int]]  # (run, depth) in tree order
    pending: list[PendingAction]
    employees: dict[str, Employee]

    @property
    def flagged(self) -> list[str]:
        return sorted(self.case.meta.get("rider_flags", {}))


def case_records(case_id: str, user: Any) -> CaseRecords | None:
    """The case's records, or None when there is no such case ``user`` may see."""
    found = visible(Case.objects.all(), user).select_related("vanpool")
    case = found.filter(case_id=case_id).first()
    if case is None:
        return None
    verifications = list(case.verifications.order_by("-created_at", "-id"))
    latest: dict[str, Verification] = {}
    for verification in verifications:
        latest.setdefault(verification.check_type, verification)
    thread = EmailThread.objects.filter(case=case).first()
    messages = (
        list(thread.messages.select_related("employee").order_by("created_at", "id"))
        if thread
        else []
    )
    events = list(case.events.select_related("actor_user").order_by("created_at", "id"))
    runs = list(AgentRun.objects.filter(case=case).order_by("created_at", "id"))
    pending = list(
        case.pending_actions.filter(status=PendingAction.Status.PENDING).order_by("created_at")
    )
    employee_ids = set(case.meta.get("rider_flags", {}))
    employee_ids |= {m.employee.employee_id for m in messages if m.employee is not None}
    employees = {
        e.employee_id: e
        for e in Employee.objects.filter(employee_id__in=employee_ids).select_related("shift")
    }
    return CaseRecords(
        case=case,
        verifications=verifications,
        latest=latest,
        thread=thread,
        messages=messages,
        events=events,
        runs=run_tree(runs),
        pending=pending,
        employees=employees,
    )


def run_tree(runs: list[AgentRun]) -> list[tuple[AgentRun, int]]:
    """Runs in tree order (each parent before its children) with their depth."""
    by_parent: dict[int | None, list[AgentRun]] = defaultdict(list)
    known = {run.pk for run in runs}
    for run in runs:
        parent = run.parent_id if run.parent_id in known else None
        by_parent[parent].append(run)
    ordered: list[tuple[AgentRun, int]] = []

    def walk(parent: int | None, depth: int) -> None:
        for run in by_parent.get(parent, []):
            ordered.append((run, depth))
            walk(run.pk, depth + 1)

    walk(None, 0)
    return ordered


def when(value: datetime | None) -> str:
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M") if value else ""
