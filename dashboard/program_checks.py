"""The program page's view of the ridership, parking and vanpool-rules checks.

Read from each active van's newest verification of each check (what the
last audit found): seats held but not ridden (riders the ridership check
fails) and the monthly subsidy they cost (``SEAT_SUBSIDY_MONTHLY`` a seat),
each van's §132(f) status for its last month, and every check the data could
not judge (a ``no_data`` gap), so a person sees what is missing.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Max

from cases.models import Verification
from vanpools.models import Vanpool
from vanpools.scope import visible

CHECKS = (
    Verification.CheckType.RIDERSHIP,
    Verification.CheckType.PARKING,
    Verification.CheckType.VANPOOL_RULES,
)


@dataclass(frozen=True)
class VanStatus:
    vanpool_id: str
    verdict: str  # pass | fail | unknown
    month: str  # YYYY-MM, "" when the check had no month to read
    failed: list[str]  # the §132(f) rules the month fails


@dataclass(frozen=True)
class Gap:
    vanpool_id: str
    check: str
    employee_id: str  # blank: the whole van
    missing: str
    detail: str


@dataclass(frozen=True)
class CheckSummary:
    unridden: list[tuple[str, str]] = field(default_factory=list)  # (vanpool_id, employee_id)
    seat_subsidy: Decimal = Decimal(0)
    vans: list[VanStatus] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    @property
    def subsidy_at_stake(self) -> Decimal:
        return self.seat_subsidy * len(self.unridden)

    @property
    def vans_failing(self) -> int:
        return sum(van.verdict == "fail" for van in self.vans)


def newest_verifications(user: Any = None) -> list[Verification]:
    """Each active van's newest verification of each new check: one query, any program size.

    ``user`` under COORDINATOR_SCOPE=sites: only the vans they coordinate.
    """
    newest = (
        visible(Verification.objects.all(), user)
        .filter(check_type__in=CHECKS, vanpool__status=Vanpool.Status.ACTIVE)
        .values("vanpool_id", "check_type")
        .annotate(newest=Max("pk"))
        .values_list("newest", flat=True)
    )
    return list(
        Verification.objects.filter(pk__in=newest)
        .select_related("vanpool")
        .order_by("vanpool__vanpool_id", "check_type")
    )


def check_summary(
    verifications: Iterable[Verification] | None = None, user: Any = None
) -> CheckSummary:
    rows = newest_verifications(user) if verifications is None else list(verifications)
    summary = CheckSummary(seat_subsidy=Decimal(settings.SEAT_SUBSIDY_MONTHLY))
    for row in rows:
        vanpool_id = row.vanpool.vanpool_id
        if row.check_type == Verification.CheckType.RIDERSHIP:
            summary.unridden.extend(
                (vanpool_id, employee_id)
                for employee_id, verdict in sorted((row.rider_flags or {}).items())
                if verdict == "fail"
            )
        if row.check_type == Verification.CheckType.VANPOOL_RULES:
            summary.vans.append(_van_status(vanpool_id, row))
        summary.gaps.extend(_gaps(vanpool_id, row))
    return summary


def _van_status(vanpool_id: str, row: Verification) -> VanStatus:
    month: dict[str, Any] = next(
        (item for item in _items(row) if item.get("type") == "vanpool_month"), {}
    )
    rules = month.get("rules") or {}
    failed = [rule for rule, verdict in rules.items() if verdict == "fail"]
    return VanStatus(vanpool_id, row.verdict, str(month.get("month", "")), failed)


def _gaps(vanpool_id: str, row: Verification) -> list[Gap]:
    return [
        Gap(
            vanpool_id,
            row.get_check_type_display(),
            str(item.get("employee_id", "")),
            str(item.get("missing", "")),
            str(item.get("detail", "")),
        )
        for item in _items(row)
        if item.get("type") == "no_data"
    ]


def _items(row: Verification) -> list[dict[str, Any]]:
    return [item for item in row.evidence or [] if isinstance(item, dict)]
