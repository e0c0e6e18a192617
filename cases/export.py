"""Findings for auditors as a spreadsheet: one row per case, CSV or XLSX.

Each row says what an auditor files: the case and its vanpool, where it
stands, why it was opened, which riders fail which checks, and the evidence
the checks wrote (the reasoning of the newest verification of each failed
check). No home address: a spreadsheet travels further than the admin.
"""

import csv
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet
from django.utils import timezone
from openpyxl import Workbook
from openpyxl.utils import get_column_letter

from cases.models import Case, Verification

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
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    writer.writerows([_inert(value) for value in row.values] for row in rows)
    return out.getvalue()


def as_xlsx(rows: Iterable[Finding]) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None  # a new workbook has one sheet
    sheet.title = "Findings"
    sheet.append(COLUMNS)
    widths = [len(name) for name in COLUMNS]
    for row in rows:
        sheet.append(list(row.values))
        for cell in sheet[sheet.max_row]:
            cell.data_type = "s"  # text stays text: never a formula, a number or a date
        widths = [max(w, min(len(v), 60)) for w, v in zip(widths, row.values, strict=True)]
    for index, width in enumerate(widths, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width + 2
    sheet.freeze_panes = "A2"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


# A spreadsheet reads a cell that starts with one of these as a formula (a tab or
# a carriage return before the formula hides it from a first-character check).
FORMULA_STARTS = "=+-@\t\r"
# Which character splits a line into cells is the reader's locale and import
# choice, not ours: "Fremont;=1+1;" is one cell here and a live formula where
# ";" separates. Line breaks count too, for readers that ignore the quotes.
CELL_SEPARATORS = ",;\t|\r\n"
_FORMULA = re.compile(
    rf"(^|[{re.escape(CELL_SEPARATORS)}])([ \"]*)(?=[{re.escape(FORMULA_STARTS)}])"
)


def _inert(value: str) -> str:
    """``value`` with a quote before every formula start, at the beginning of the value
    and after any character a spreadsheet may split cells on (spaces and quotes between
    them skipped, as a reader may trim them): every piece stays text (rider's words
    reach the evidence column, an HR export the work site)."""
    return _FORMULA.sub(lambda match: f"{match.group(1)}{match.group(2)}'", value)
