"""The dashboard's reads, each a fixed number of queries however many rows there are.

The queue and case list fetch one page of rows with their relations joined,
then gather everything a page needs about those rows (verifications,
messages, re-audits) in one query per kind of record, never one per row.
What a queue card of one kind gathers is in its card module (``dashboard/cards/``).
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Min, OuterRef, QuerySet, Subquery, Window
from django.db.models.functions import Coalesce, RowNumber
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from agents.models import AgentRun
from cases.models import Case, CaseEvent, PendingAction, Verification
from outreach.models import EmailThread, Message
from vanpools.models import Employee, Vanpool


def work_sites() -> list[str]:
    return list(
        Vanpool.objects.order_by("work_site").values_list("work_site", flat=True).distinct()
    )


# --- Queue --------------------------------------------------------------------------------


def pending_actions() -> QuerySet[PendingAction]:
    """The review queue, oldest first, with what every card shows joined in."""
    return (
        PendingAction.objects.filter(status=PendingAction.Status.PENDING)
        .select_related("case__vanpool", "case__thread", "rider__employee", "message__employee")
        .order_by("created_at", "id")
    )


@dataclass(frozen=True)
class ModelBacklog:
    count: int
    oldest: datetime | None


def replies_waiting_for_the_model() -> ModelBacklog:
    """Replies a configured model could not read yet (one query): shown above the queue."""
    backlog = Message.objects.filter(
        direction=Message.Direction.INBOUND, status=Message.Status.MODEL_WAIT
    ).aggregate(count=Count("pk"), oldest=Min("received_at"))
    return ModelBacklog(backlog["count"], backlog["oldest"])


def action_with_relations(pk: int) -> PendingAction | None:
    return (
        PendingAction.objects.select_related(
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


def rider_evidence(
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


# --- Case list ----------------------------------------------------------------------------


def cases() -> QuerySet[Case]:
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
    return Case.objects.select_related("vanpool").annotate(pending=Coalesce(Subquery(pending), 0))


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


def case_records(case_id: str) -> CaseRecords | None:
    case = Case.objects.select_related("vanpool").filter(case_id=case_id).first()
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
