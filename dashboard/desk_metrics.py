"""The review desk on the program page: time to decide per kind, what is overdue, why decided.

Definitions (also on the page and in docs/dashboard.md):

- **Time to decide**: over cards a person decided (approved or rejected;
  expired and superseded cards have no decider), decided_at − created_at;
  p50 and p90 per kind by nearest rank (the p90 of 10 is the 9th fastest).
  Each is read at its rank through an index on (kind, duration), so the page
  reads two rows per kind with 100,000 decisions as with 10.
- **Overdue**: pending cards past their kind's SLA now (``cases.desk``).
- **Reasons**: decided cards by kind, decision and reason code (one query
  with the waiting and overdue counts); a decision
  taken without one counts as "none given".

Given a ``user`` scoped to their sites (``vanpools.scope``), every figure
counts only the cards about the vanpools they coordinate; without one, the
whole program's.
"""

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q, QuerySet, Subquery
from django.utils import timezone

from caseloop.kinds import DECISIONS
from caseloop.kinds.base import Decision
from cases.desk import overdue
from cases.kinds import PAYLOADS
from cases.models import PendingAction
from poolpatrol.durations import SecondsBetween
from vanpools.scope import visible

SHARES = {"p50": 0.5, "p90": 0.9}
NONE_GIVEN = "none given"
# A decision, as the status it leaves the card in.
DONE: dict[Decision, str] = {
    "approve": PendingAction.Status.APPROVED,
    "reject": PendingAction.Status.REJECTED,
}


@dataclass
class KindDesk:
    kind: str
    label: str
    decided: int = 0
    p50: dt.timedelta | None = None
    p90: dt.timedelta | None = None
    waiting: int = 0
    overdue: int = 0
    # ("approved" or "rejected", the reason's label, how many), most used first.
    reasons: list[tuple[str, str, int]] = field(default_factory=list)

    @property
    def p50_text(self) -> str:
        return hours_text(self.p50)

    @property
    def p90_text(self) -> str:
        return hours_text(self.p90)


def hours_text(value: dt.timedelta | None) -> str:
    if value is None:
        return "—"
    hours = value.total_seconds() / 3600
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} d"


def nearest_rank(count: int, share: float) -> int:
    """The 1-based rank of the ``share`` percentile among ``count`` values (nearest rank)."""
    return max(1, math.ceil(share * count))


def time_to_decide(
    decided: dict[str, int] | None = None, *, user: Any = None
) -> dict[str, dict[str, dt.timedelta]]:
    """{kind: {"p50": …, "p90": …}} over cards a person decided: one query.

    ``decided`` is how many cards of each kind a person decided (counted
    here when not given). Each percentile is then the card at its nearest
    rank in the kind's cards ordered by how long they took: a scalar subquery
    that the time-to-decide index (cases.models.PendingAction) answers by
    skipping to that rank, so no row is sorted or read beyond it.
    """
    if decided is None:
        decided = dict(by_person(user).order_by().values_list("kind").annotate(n=Count("id")))
    if not decided:
        return {}
    took = SecondsBetween("decided_at", "created_at")
    wanted = Q(pk__in=[])
    for kind, total in decided.items():
        by_speed = by_person(user).filter(kind=kind).order_by(took.asc(), "id").values("pk")
        for share in SHARES.values():
            rank = nearest_rank(total, share)
            wanted |= Q(pk=Subquery(by_speed[rank - 1 : rank]))
    picked: dict[str, list[tuple[float, int]]] = {}
    for pk, kind, seconds in (
        PendingAction.objects.filter(wanted)
        .order_by()
        .annotate(took=took)
        .values_list("pk", "kind", "took")
    ):
        picked.setdefault(kind, []).append((seconds, pk))
    found: dict[str, dict[str, dt.timedelta]] = {}
    for kind, rows in picked.items():
        # The p50's rank is never above the p90's, in the same order: the
        # faster row is the p50; a kind with one pick has both on one card.
        rows.sort()
        fastest, slowest = rows[0][0], rows[-1][0]
        found[kind] = {
            "p50": dt.timedelta(seconds=round(fastest)),
            "p90": dt.timedelta(seconds=round(slowest)),
        }
    return found


def by_person(user: Any = None) -> QuerySet[PendingAction]:
    """Cards a person decided (that ``user`` may see): the rows the time-to-decide index holds."""
    return visible(PendingAction.objects.filter(decided_by__isnull=False), user)


def desk_by_kind(*, user: Any = None) -> list[KindDesk]:
    """Every kind's row on the program page: two queries however many cards there are."""
    # One pass over the cards grouped by kind, status and reason: what waits
    # (and is overdue) and what a person decided, and why.
    groups = (
        visible(PendingAction.objects.all(), user)
        .order_by()
        .values_list("kind", "status", "reason")
        .annotate(
            n=Count("id"),
            late=Count("id", filter=overdue(timezone.now())),
            by_person=Count("id", filter=Q(decided_by__isnull=False)),
        )
    )
    rows = {payload.kind: KindDesk(payload.kind, payload.label) for payload in PAYLOADS}
    counted: dict[str, list[tuple[str, str, int]]] = {}
    for kind, status, reason, n, late, by_person in groups:
        row = rows.get(kind)
        if row is None:
            continue  # a kind no class reads any more: not on the page
        if status == PendingAction.Status.PENDING:
            row.waiting += n
            row.overdue += late
        elif by_person:
            row.decided += by_person
            counted.setdefault(kind, []).append((status, reason, by_person))
    timings = time_to_decide(
        {kind: row.decided for kind, row in rows.items() if row.decided}, user=user
    )
    for payload in PAYLOADS:
        row = rows[payload.kind]
        labels: dict[tuple[str, str], str] = {
            (str(DONE[r.decision]), r.code): r.label
            for decision in DONE
            for r in DECISIONS[payload].reasons_for(decision)
        }
        row.p50 = timings.get(payload.kind, {}).get("p50")
        row.p90 = timings.get(payload.kind, {}).get("p90")
        row.reasons = sorted(
            (
                (status, labels.get((status, code), code) if code else NONE_GIVEN, n)
                for status, code, n in counted.get(payload.kind, [])
            ),
            key=lambda entry: (entry[0], -entry[2]),
        )
    return list(rows.values())
