"""Findings for auditors as a spreadsheet: one row per case, CSV or XLSX.

Each row says what an auditor files: the case and its vanpool, where it
stands, why it was opened, which riders fail which checks, and the evidence
the checks wrote (the reasoning of the newest verification of each failed
check). No home address: a spreadsheet travels further than the admin; no
cell a spreadsheet would run as a formula (``poolpatrol.spreadsheets``).
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from cases.models import Case, Verification
from poolpatrol import spreadsheets

COLUMNS = (
    "case_id", "vanpool_id", "work_site", "status", "outcome", "reason", "failed_checks",
    "flagged_riders", "evidence", "reaudits", "reply_deadline", "opened", "updated", "closed",
)  # fmt: skip
FORMATS = ("csv", "xlsx")


@dataclass(frozen=True)
class Finding:
    values: tuple[str, ...]


def findings(cases: QuerySet[Case]) -> Iterator[Finding]:
    """One row per case, oldest first, in three queries however many cases."""
    newest_first = Verification.objects.order_by("check_type", "-created_at", "-id")
    rows = (
        cases.select_related("vanpool")
        .prefetch_related(Prefetch("verifications", queryset=newest_first))
        .order_by("created_at", "id")
    )
    for case in rows:
        yield Finding(tuple(_cells(case)))


def _cells(case: Case) -> list[str]:
    failed = list(case.meta.get("failed_checks") or [])
    return [
        case.case_id,
        case.vanpool.vanpool_id,
        case.vanpool.work_site,
        case.status,
        case.outcome,
        case.reason,
        ", ".join(failed),
        _flagged(case.meta.get("rider_flags") or {}),
        _evidence(case, failed),
        str(case.reaudit_count),
        _when(case.reply_deadline),
        _when(case.created_at),
        _when(case.updated_at),
        _when(case.closed_at),
    ]


def _flagged(rider_flags: dict[str, dict[str, str]]) -> str:
    """'EMP-1 (location); EMP-2 (shift unknown)': each rider and what they do not pass."""
    parts = []
    for employee_id, checks in sorted(rider_flags.items()):
        shown = [
            check if verdict == "fail" else f"{check} {verdict}"
            for check, verdict in sorted(checks.items())
            if verdict != "pass"
        ]
        if shown:
            parts.append(f"{employee_id} ({', '.join(shown)})")
    return "; ".join(parts)


def _evidence(case: Case, failed: list[str]) -> str:
    newest: dict[str, str] = {}
    for verification in case.verifications.all():  # newest first per check (prefetched)
        newest.setdefault(verification.check_type, verification.reasoning)
    return " | ".join(f"{check}: {newest[check]}" for check in failed if check in newest)


def _when(value: object) -> str:
    if value is None:
        return ""
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M")  # type: ignore[arg-type]


def as_csv(rows: Iterable[Finding]) -> str:
    return spreadsheets.as_csv(COLUMNS, (row.values for row in rows))


def as_xlsx(rows: Iterable[Finding]) -> bytes:
    return spreadsheets.as_xlsx(COLUMNS, (row.values for row in rows), "Findings")
