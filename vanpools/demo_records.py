"""The demo's quarter of ride, permit and monthly records, moved to the quarter before today.

fixtures/demo/records/ (written by fixtures/demo/generate_rides.py) holds the
quarter before the audit week of 2026-11-23. Loading moves every date by the
whole weeks between that Monday and this one (so weekdays stay weekdays, and
a van's Monday runs stay Mondays) and each monthly report by the months
between, then imports each file through the record importer, as an operator's
files would be. Loading twice changes nothing the second time.
"""

import csv
import datetime as dt
import re
import tempfile
from pathlib import Path

from django.conf import settings

from vanpools.importing import ImportResult
from vanpools.importing.records import import_records
from vanpools.models import Employee, Vanpool

DEMO_RECORDS = Path(settings.BASE_DIR) / "fixtures" / "demo" / "records"
REFERENCE_MONDAY = dt.date(2026, 11, 23)
# In the order they are imported: what each file's rows refer to comes first.
RECORD_FILES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("holidays.csv", "holidays", ("date",)),
    ("vanpool-months.csv", "vanpool_months", ()),
    ("permits.csv", "permits", ("valid_from", "valid_to")),
    ("trips.csv", "trips", ("date", "trip_id")),
    ("ride-days.csv", "ride_days", ("date",)),
    ("badge-swipes.csv", "badge_swipes", ("swiped_at",)),
)
DATE = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})")


def load_demo_records(this_monday: dt.date) -> list[ImportResult]:
    """Import the demo's records, moved to the quarter before ``this_monday``.

    A row about one rider who is not on the roster (the simulated past's, when
    it is not played), or about a van the program does not have, is left out:
    a badge system or a ride-day export lists the people it was asked about.
    A trip log keeps every passenger it names, as an operator's log would: the
    importer counts them aboard and says which are not employees.
    """
    known = set(Employee.objects.values_list("employee_id", flat=True))
    vans = set(Vanpool.objects.values_list("vanpool_id", flat=True))
    weeks = (this_monday - REFERENCE_MONDAY).days // 7
    months = (this_monday.year * 12 + this_monday.month) - (
        REFERENCE_MONDAY.year * 12 + REFERENCE_MONDAY.month
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="demo-records-") as folder:
        for name, kind, dated in RECORD_FILES:
            moved = Path(folder) / name
            shift = months if kind == "vanpool_months" else 0
            _move(DEMO_RECORDS / name, moved, dated, weeks, shift, known, vans)
            results.append(import_records(moved, kind=kind))
    return results


def _move(
    source: Path,
    target: Path,
    dated: tuple[str, ...],
    weeks: int,
    months: int,
    known: set[str],
    vans: set[str],
) -> None:
    with (
        source.open(encoding="utf-8", newline="") as read,
        target.open("w", encoding="utf-8", newline="") as write,
    ):
        rows = csv.DictReader(read)
        assert rows.fieldnames is not None
        out = csv.DictWriter(write, rows.fieldnames)
        out.writeheader()
        for row in rows:
            if row.get("employee_id", "") and row["employee_id"] not in known:
                continue
            if row.get("vanpool_id", "") and row["vanpool_id"] not in vans:
                continue
            for column in dated:
                row[column] = DATE.sub(lambda m: _moved(m, weeks), row[column])
            if months and row.get("month"):
                year, month = (int(part) for part in row["month"].split("-"))
                total = year * 12 + (month - 1) + months
                row["month"] = f"{total // 12:04d}-{total % 12 + 1:02d}"
            out.writerow(row)


def _moved(match: re.Match[str], weeks: int) -> str:
    """A date (ISO, or packed into an ID as 20260824) moved by whole weeks, written as given."""
    day = dt.date(int(match[1]), int(match[2]), int(match[3])) + dt.timedelta(weeks=weeks)
    separator = "-" if "-" in match[0] else ""
    return f"{day:%Y}{separator}{day:%m}{separator}{day:%d}"
