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
  closed that week, counted as the headline figures are (``closed_counts``):
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
from typing import Any

from django.conf import settings
from django.db.models import Count, DateField, Exists, F, FloatField, Func, OuterRef, Q, Sum
from django.db.models.functions import TruncDate, TruncWeek
from django.utils import timezone

from agents.models import AgentRun
from caseloop.models import AuditRun, progress
from cases.kinds import CancelMembership
from cases.models import Case, CaseEvent, PendingAction
from vanpools.models import Rider

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


def open_cases_by_status() -> dict[str, int]:
    rows = (
        Case.objects.exclude(status=Case.Status.CLOSED)
        .order_by()
        .values_list("status")
        .annotate(n=Count("pk"))
    )
    counts = dict(rows)
    return {status: counts.get(status, 0) for status in Case.Status.values if status != "closed"}


def open_cases_by_age(now: dt.datetime | None = None) -> dict[str, int]:
    """Open cases by whole days since opening, in AGE_BUCKETS."""
    now = now or timezone.now()
    aggregates = {}
    for index, (_label, low, high) in enumerate(AGE_BUCKETS):
        # Opened `low` to `high` whole days ago: created after now − (high + 1) days.
        condition = Q(created_at__lte=now - dt.timedelta(days=low))
        if high is not None:
            condition &= Q(created_at__gt=now - dt.timedelta(days=high + 1))
        aggregates[f"bucket{index}"] = Count("pk", filter=condition)
    counts = Case.objects.exclude(status=Case.Status.CLOSED).aggregate(**aggregates)
    return {label: counts[f"bucket{index}"] for index, (label, _, _) in enumerate(AGE_BUCKETS)}


class SecondsBetween(Func):
    """end − start in seconds, computed by the database itself.

    Django's own datetime subtraction on SQLite calls a Python function per
    row, which made sorting 10,000 closed cases take ~150 ms; julianday() is
    native. PostgreSQL (and others) take the epoch of the interval.
    """

    output_field = FloatField()

    def __init__(self, end: str, start: str) -> None:
        super().__init__(F(end), F(start))

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template="((julianday(%(expressions)s)) * 86400.0)",
            arg_joiner=") - julianday(",
            **extra,
        )

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> Any:  # type: ignore[override]
        extra.setdefault("template", "EXTRACT(EPOCH FROM (%(expressions)s))")
        extra.setdefault("arg_joiner", " - ")
        return super().as_sql(compiler, connection, **extra)


def median_time_to_resolution() -> dt.timedelta | None:
    """The median of closed_at − created_at over closed cases, read without loading them all."""
    durations = (
        Case.objects.filter(status=Case.Status.CLOSED)
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


def _human_decision() -> Q:
    decided = PendingAction.objects.filter(case=OuterRef("pk"), decided_by__isnull=False)
    by_user = CaseEvent.objects.filter(case=OuterRef("pk"), actor_user__isnull=False)
    return Q(Exists(decided)) | Q(Exists(by_user))


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


def closed_counts() -> dict[str, Count]:
    """How closed cases are counted: the headline figures and each week's alike."""
    Outcome = Case.Outcome
    return {
        "closed": Count("pk"),
        "automated": Count("pk", filter=~_human_decision()),
        "resolved": Count("pk", filter=Q(outcome=Outcome.RESOLVED)),
        "cancelled": Count("pk", filter=Q(outcome=Outcome.CANCELLED)),
        "dismissed": Count("pk", filter=Q(outcome=Outcome.DISMISSED)),
    }


def closed_cases() -> ClosedCases:
    totals = Case.objects.filter(status=Case.Status.CLOSED).aggregate(**closed_counts())
    return ClosedCases(**totals)


@dataclass(frozen=True)
class Week:
    start: dt.date  # its Monday, in program time
    opened: int
    closed: ClosedCases  # the cases closed that week

    @property
    def automation_rate(self) -> float | None:
        return self.closed.automation_rate


NO_CLOSED = ClosedCases(closed=0, automated=0, resolved=0, cancelled=0, dismissed=0)


def monday_of(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def weekly_trend(weeks: int = TREND_WEEKS, today: dt.date | None = None) -> list[Week]:
    """The last ``weeks`` weeks up to this one, oldest first; a week with nothing is zeros.

    Two queries whatever the number of cases: openings grouped by the week of
    created_at, closings by the week of closed_at, each week starting on
    Monday at midnight in program time (TIME_ZONE).
    """
    this_monday = monday_of(today or timezone.localdate())
    mondays = [this_monday - dt.timedelta(weeks=ago) for ago in range(weeks - 1, -1, -1)]
    since, until = _midnight(mondays[0]), _midnight(this_monday + dt.timedelta(weeks=1))
    opened = dict(
        Case.objects.filter(created_at__gte=since, created_at__lt=until)
        .annotate(week=TruncWeek("created_at", output_field=DateField()))
        .order_by()
        .values_list("week")
        .annotate(n=Count("pk"))
    )
    counts = closed_counts()
    rows = (
        Case.objects.filter(status=Case.Status.CLOSED, closed_at__gte=since, closed_at__lt=until)
        .annotate(week=TruncWeek("closed_at", output_field=DateField()))
        .order_by()
        .values_list("week")
        .annotate(**counts)
    )
    closed = {
        week: ClosedCases(**dict(zip(counts, numbers, strict=True))) for week, *numbers in rows
    }
    return [Week(day, opened.get(day, 0), closed.get(day, NO_CLOSED)) for day in mondays]


def _midnight(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time()))


@dataclass(frozen=True)
class Cancellations:
    cancelled: int
    reversed: int

    @property
    def false_cancel_rate(self) -> float | None:
        return ratio(self.reversed, self.cancelled)


def cancellations() -> Cancellations:
    """Seats cancelled on an approved action, and how many were later given back."""
    seat_again = Rider.objects.filter(
        employee=OuterRef("rider__employee"),
        vanpool=OuterRef("rider__vanpool"),
        status=Rider.Status.ACTIVE,
        joined__gte=OuterRef("decided_day"),
    ).exclude(pk=OuterRef("rider_id"))
    # Annotated first, then counted: an aggregate cannot see the decided_day alias.
    approved = (
        PendingAction.objects.of(CancelMembership)
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


def model_use() -> ModelUse:
    audit_root = Q(agent=AUDIT_ROOT_AGENT, parent__isnull=True, vanpool__isnull=False)
    called_model = ~Q(model="")
    totals = AgentRun.objects.aggregate(
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


def human_decisions() -> int:
    return PendingAction.objects.filter(decided_by__isnull=False).count()


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
