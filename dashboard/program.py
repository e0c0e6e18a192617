"""How the program is doing: the metrics on the program page, one small query each.

Definitions (also on the page and in docs/dashboard.md#program-metrics-program):

- **Open cases by status / age**: cases not closed, grouped by status, and by
  days since they were opened (0–7, 8–14, 15–30, over 30).
- **Median time to resolution**: over closed cases, the median of closed_at −
  created_at, whatever the outcome.
- **Human decision**: a PendingAction on the case decided by a person
  (``decided_by`` set: approved or rejected; expired and superseded actions
  have no decider), or a CaseEvent on the case whose actor is a user.
- **Automation rate**: closed cases with no human decision ÷ closed cases.
- **Dismissal rate**: closed cases with outcome dismissed ÷ closed cases (a
  person rejected the cancellation: a false positive of the audit).
- **False-cancel rate**: of the seats cancelled by an approved
  cancel_membership action, the share later reversed: the same Rider row is
  active again, or the employee holds an active seat on the same vanpool that
  they joined on or after the cancellation date (re-added in the admin). Closed
  cases are final in our lifecycle, so a case is never "reopened".
- **Model calls and cost per audited vanpool**: AgentRun rows that name a
  model (rules runs have none) and their summed cost, ÷ the number of distinct
  vanpools that have been audited at least once.
- **Weekly trend**: for each of the last TREND_WEEKS weeks (Monday to Sunday
  in program time, this week last), the cases opened that week and the cases
  closed that week, counted as the headline figures are (``closed_by_week``):
  its automation rate is the week's closed cases without a human decision ÷
  the week's closed cases.
- **Auditor hours saved**: vanpool audits (each audit run's root trace, the
  case manager, counts once: first audits and re-audits alike) ×
  MANUAL_AUDIT_MINUTES, minus HUMAN_DECISION_MINUTES for every human decision
  on a PendingAction, in hours, never below zero.
"""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar

from django.conf import settings
from django.db.models import Case as DbCase
from django.db.models import (
    Count,
    Exists,
    IntegerField,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import TruncDate
from django.utils import timezone

from agents.models import AgentRun
from caseloop.models import AuditRun, progress
from cases.kinds import CancelMembership
from cases.models import Case, CaseEvent, PendingAction
from poolpatrol.durations import SecondsBetween
from vanpools.models import Rider
from vanpools.scope import visible

_M = TypeVar("_M", bound=Model)

# A person's time on one queued decision, subtracted from the hours saved.
HUMAN_DECISION_MINUTES = 5
AGE_BUCKETS: tuple[tuple[str, int, int | None], ...] = (
    ("0–7 days", 0, 7),
    ("8–14 days", 8, 14),
    ("15–30 days", 15, 30),
    ("over 30 days", 31, None),
)
AUDIT_ROOT_AGENT = "case_manager"
TREND_WEEKS = 12


def ratio(part: int, whole: int) -> float | None:
    """part ÷ whole, or None when there is nothing to divide (shown as "—")."""
    return part / whole if whole else None


def _rows(model: type[_M], user: Any) -> QuerySet[_M]:
    """The model's rows ``user`` may see (vanpools/scope.py); None: the whole program."""
    return _within(model._default_manager.all(), user)


def _within(rows: QuerySet[_M], user: Any) -> QuerySet[_M]:
    return rows if user is None else visible(rows, user)


def open_cases_by_status(*, user: Any = None) -> dict[str, int]:
    rows = (
        _rows(Case, user)
        .exclude(status=Case.Status.CLOSED)
        .order_by()
        .values_list("status")
        .annotate(n=Count("pk"))
    )
    counts = dict(rows)
    return {status: counts.get(status, 0) for status in Case.Status.values if status != "closed"}


def open_cases_by_age(now: dt.datetime | None = None, *, user: Any = None) -> dict[str, int]:
    """Open cases by whole days since opening, in AGE_BUCKETS."""
    now = now or timezone.now()
    aggregates = {}
    for index, (_label, low, high) in enumerate(AGE_BUCKETS):
        # Opened `low` to `high` whole days ago: created after now − (high + 1) days.
        condition = Q(created_at__lte=now - dt.timedelta(days=low))
        if high is not None:
            condition &= Q(created_at__gt=now - dt.timedelta(days=high + 1))
        aggregates[f"bucket{index}"] = Count("pk", filter=condition)
    counts = _rows(Case, user).exclude(status=Case.Status.CLOSED).aggregate(**aggregates)
    return {label: counts[f"bucket{index}"] for index, (label, _, _) in enumerate(AGE_BUCKETS)}


def median_time_to_resolution(*, user: Any = None) -> dt.timedelta | None:
    """The median of closed_at − created_at over closed cases, read without loading them all."""
    # closed_at is set exactly when a case is closed (the constraint
    # case_outcome_only_when_closed), and filtering on it alone leaves the
    # planner one index to read in order: case_resolution_time_idx.
    durations = (
        _rows(Case, user)
        .filter(closed_at__isnull=False)
        .annotate(took=SecondsBetween("closed_at", "created_at"))
        .order_by("took")
        .values_list("took", flat=True)
    )
    count = durations.count()
    if not count:
        return None
    middle = list(durations[(count - 1) // 2 : count // 2 + 1])
    # Rounded to the second: julianday() carries about a millisecond of float noise.
    return dt.timedelta(seconds=round(sum(middle) / len(middle)))


def _decided_by_a_person() -> Q:
    """Cases a person decided something on, read from two indexes of (person, case).

    The set is built from the decisions (few) rather than probed once per
    closed case (many): 100,000 closed cases cost two index scans, not
    200,000 lookups.
    """
    decided = PendingAction.objects.filter(decided_by__isnull=False).values("case_id")
    by_user = CaseEvent.objects.filter(actor_user__isnull=False).values("case_id")
    return Q(pk__in=decided) | Q(pk__in=by_user)


@dataclass(frozen=True)
class ClosedCases:
    closed: int
    automated: int
    resolved: int
    cancelled: int
    dismissed: int

    @property
    def automation_rate(self) -> float | None:
        return ratio(self.automated, self.closed)

    @property
    def dismissal_rate(self) -> float | None:
        return ratio(self.dismissed, self.closed)

    def __add__(self, other: "ClosedCases") -> "ClosedCases":
        return ClosedCases(
            closed=self.closed + other.closed,
            automated=self.automated + other.automated,
            resolved=self.resolved + other.resolved,
            cancelled=self.cancelled + other.cancelled,
            dismissed=self.dismissed + other.dismissed,
        )


NO_CLOSED = ClosedCases(closed=0, automated=0, resolved=0, cancelled=0, dismissed=0)
BEFORE = -1  # the bucket of cases closed before the trend's first week


def closed_by_week(mondays: list[dt.date], *, user: Any = None) -> dict[int, ClosedCases]:
    """Every closed case, counted in the week it closed: two queries, both index-only.

    Keys are indexes into ``mondays``; BEFORE holds the cases closed earlier
    and ``len(mondays)`` any closed after the last week, so the buckets
    add up to the headline figures and the weeks are counted exactly as
    they are. Automated = closed − closed with a human decision.
    """
    week = _week_index("closed_at", mondays, before=_midnight(mondays[0]))
    # Closed exactly when closed_at is set (case_outcome_only_when_closed):
    # the filter the covering index case_closed_idx is built on.
    closed = _rows(Case, user).filter(closed_at__isnull=False).order_by()
    Outcome = Case.Outcome
    rows = (
        closed.annotate(week=week)
        .values_list("week")
        .annotate(
            n=Count("pk"),
            resolved=Count("pk", filter=Q(outcome=Outcome.RESOLVED)),
            cancelled=Count("pk", filter=Q(outcome=Outcome.CANCELLED)),
            dismissed=Count("pk", filter=Q(outcome=Outcome.DISMISSED)),
        )
    )
    by_person = dict(
        closed.filter(_decided_by_a_person())
        .annotate(week=week)
        .values_list("week")
        .annotate(n=Count("pk"))
    )
    return {
        index: ClosedCases(
            closed=n,
            automated=n - by_person.get(index, 0),
            resolved=resolved,
            cancelled=cancelled,
            dismissed=dismissed,
        )
        for index, n, resolved, cancelled, dismissed in rows
    }


def closed_cases(by_week: dict[int, ClosedCases] | None = None, *, user: Any = None) -> ClosedCases:
    """The headline figures: every closed case (the sum of ``closed_by_week``'s buckets)."""
    if by_week is None:
        by_week = closed_by_week(trend_mondays(), user=user)
    return sum(by_week.values(), NO_CLOSED)


@dataclass(frozen=True)
class Week:
    start: dt.date  # its Monday, in program time
    opened: int
    closed: ClosedCases  # the cases closed that week

    @property
    def automation_rate(self) -> float | None:
        return self.closed.automation_rate


def monday_of(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def trend_mondays(weeks: int = TREND_WEEKS, today: dt.date | None = None) -> list[dt.date]:
    """The Mondays of the last ``weeks`` weeks up to this one, oldest first (program time)."""
    this_monday = monday_of(today or timezone.localdate())
    return [this_monday - dt.timedelta(weeks=ago) for ago in range(weeks - 1, -1, -1)]


def weekly_trend(
    weeks: int = TREND_WEEKS,
    today: dt.date | None = None,
    by_week: dict[int, ClosedCases] | None = None,
    *,
    user: Any = None,
) -> list[Week]:
    """The last ``weeks`` weeks up to this one, oldest first; a week with nothing is zeros.

    Openings grouped by the week of created_at (one query), closings from
    ``closed_by_week`` (given, or read here), each week starting on Monday at
    midnight in program time (TIME_ZONE).
    """
    mondays = trend_mondays(weeks, today)
    since, until = _midnight(mondays[0]), _midnight(mondays[-1] + dt.timedelta(weeks=1))
    opened_by_index = dict(
        _rows(Case, user)
        .filter(created_at__gte=since, created_at__lt=until)
        .annotate(week=_week_index("created_at", mondays))
        .order_by()
        .values_list("week")
        .annotate(n=Count("pk"))
    )
    closed = closed_by_week(mondays, user=user) if by_week is None else by_week
    return [
        Week(day, opened_by_index.get(index, 0), closed.get(index, NO_CLOSED))
        for index, day in enumerate(mondays)
    ]


def _week_index(field: str, mondays: list[dt.date], before: dt.datetime | None = None) -> DbCase:
    """Which of ``mondays``' weeks ``field`` falls in, as its index: plain comparisons.

    BEFORE when ``before`` is given and ``field`` is earlier; len(mondays)
    after the last week. The week boundaries are computed here in program
    time, so the database compares stored instants only; Django's week
    truncation on SQLite calls a Python function per row, which cost ~60 ms a
    page over 10,000 cases.
    """
    whens = [] if before is None else [When(**{f"{field}__lt": before}, then=Value(BEFORE))]
    whens += [
        When(**{f"{field}__lt": _midnight(monday + dt.timedelta(weeks=1))}, then=Value(index))
        for index, monday in enumerate(mondays)
    ]
    return DbCase(*whens, default=Value(len(mondays)), output_field=IntegerField())


def _midnight(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time()))


@dataclass(frozen=True)
class Cancellations:
    cancelled: int
    reversed: int

    @property
    def false_cancel_rate(self) -> float | None:
        return ratio(self.reversed, self.cancelled)


def cancellations(*, user: Any = None) -> Cancellations:
    """Seats cancelled on an approved action, and how many were later given back."""
    seat_again = Rider.objects.filter(
        employee=OuterRef("rider__employee"),
        vanpool=OuterRef("rider__vanpool"),
        status=Rider.Status.ACTIVE,
        joined__gte=OuterRef("decided_day"),
    ).exclude(pk=OuterRef("rider_id"))
    # Annotated first, then counted: an aggregate cannot see the decided_day alias.
    approved = (
        _within(PendingAction.objects.of(CancelMembership), user)
        .filter(status=PendingAction.Status.APPROVED, rider__isnull=False)
        .annotate(decided_day=TruncDate("decided_at"))
        .annotate(seat_again=Exists(seat_again))
    )
    reversed_ = Q(rider__status=Rider.Status.ACTIVE) | Q(seat_again=True)
    totals = approved.aggregate(cancelled=Count("pk"), reversed=Count("pk", filter=reversed_))
    return Cancellations(**totals)


@dataclass(frozen=True)
class ModelUse:
    audits: int  # vanpool audit runs, first audits and re-audits
    audited_vanpools: int  # distinct vanpools audited at least once
    model_calls: int
    tokens: int
    cost_usd: Decimal

    @property
    def calls_per_vanpool(self) -> float | None:
        return ratio(self.model_calls, self.audited_vanpools)

    @property
    def cost_per_vanpool(self) -> Decimal | None:
        if not self.audited_vanpools:
            return None
        return self.cost_usd / self.audited_vanpools


def model_use(*, user: Any = None) -> ModelUse:
    audit_root = Q(agent=AUDIT_ROOT_AGENT, parent__isnull=True, vanpool__isnull=False)
    called_model = ~Q(model="")
    totals = _rows(AgentRun, user).aggregate(
        audits=Count("pk", filter=audit_root),
        audited_vanpools=Count("vanpool", filter=audit_root, distinct=True),
        model_calls=Count("pk", filter=called_model),
        tokens_in=Sum("tokens_in", filter=called_model, default=0),
        tokens_out=Sum("tokens_out", filter=called_model, default=0),
        cost_usd=Sum("cost_usd", default=Decimal(0)),
    )
    return ModelUse(
        audits=totals["audits"],
        audited_vanpools=totals["audited_vanpools"],
        model_calls=totals["model_calls"],
        tokens=totals["tokens_in"] + totals["tokens_out"],
        cost_usd=Decimal(totals["cost_usd"]),
    )


def human_decisions(*, user: Any = None) -> int:
    return _rows(PendingAction, user).filter(decided_by__isnull=False).count()


def hours_saved(audits: int, decisions: int, manual_audit_minutes: int | None = None) -> float:
    """Manual audits avoided minus the people's time on queued decisions, in hours (≥ 0)."""
    minutes_per_audit = (
        settings.MANUAL_AUDIT_MINUTES if manual_audit_minutes is None else manual_audit_minutes
    )
    minutes = audits * minutes_per_audit - decisions * HUMAN_DECISION_MINUTES
    return max(0.0, minutes / 60)


@dataclass(frozen=True)
class AuditRunProgress:
    run: AuditRun
    total: int
    done: int
    failed: int
    running: int
    waiting: int

    @property
    def finished(self) -> bool:
        return self.running + self.waiting == 0


def latest_audit_run() -> AuditRunProgress | None:
    """The last full audit queued for the workers and how far it has got (two queries)."""
    run = AuditRun.objects.first()
    if run is None:
        return None
    counts = progress(run)
    return AuditRunProgress(
        run, counts["total"], counts["done"], counts["failed"], counts["running"], counts["waiting"]
    )
