"""Benchmark: a roster import in which every employee changed, in a throw-away database.

Builds a program of N employees on N/6 vanpools, then imports a JSON roster
in which every employee's home ZIP differs from what is stored, one in ten
moves to another vanpool and one in ten gains or loses PTO: every kind of
write the importer makes to employees, seats and leave runs, each recorded
in the roster's history. Each timed run imports the other of two such
files, so every run changes all N employees again. The wall time is the
figure; this process's CPU time is printed too, being steadier than the wall
clock on a shared machine (on SQLite the database works in this process).
``--without-history`` runs the same imports with django-simple-history's
recording switched off (SIMPLE_HISTORY_ENABLED=False): what the history costs.
"""

import datetime as dt
import json
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.test import override_settings

from evals.scratch_db import scratch_database
from vanpools.importing import ImportResult, import_file
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool

RECORDED = (Shift, Vanpool, Employee, Leave, Rider)

RIDERS_PER_VANPOOL = 6
SITE = "Fremont Campus"
# Two ZIPs near the pickup, one for each version of the file.
ZIPS = ("94536", "94538")
WEEKDAYS = [
    {"day": d, "start": "07:00", "end": "16:00"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
]


def build_program(employees: int) -> None:
    """``employees`` employees seated six to a van, as version 0 of the file describes them."""
    shift = Shift.objects.create(shift_id="DAY", name="Day", schedule=WEEKDAYS)
    vans = Vanpool.objects.bulk_create(
        Vanpool(
            vanpool_id=vanpool_id(n),
            name=f"Van {n}",
            work_site=SITE,
            pickup_zip="94536",
            schedule=WEEKDAYS,
        )
        for n in range(vanpool_count(employees))
    )
    people = Employee.objects.bulk_create(
        Employee(
            employee_id=employee_id(n),
            first_name="Pat",
            last_name=f"Rider{n}",
            email=f"emp{n}@example.com",
            work_site=SITE,
            home_zip=ZIPS[0],
            shift=shift,
        )
        for n in range(employees)
    )
    Rider.objects.bulk_create(
        Rider(vanpool=vans[seat(n, 0, employees)], employee=person, joined=dt.date(2026, 1, 5))
        for n, person in enumerate(people)
    )


def vanpool_count(employees: int) -> int:
    return max(2, -(-employees // RIDERS_PER_VANPOOL))


def vanpool_id(n: int) -> str:
    return f"VP-{n + 1:05d}"


def employee_id(n: int) -> str:
    return f"EMP-{n + 1:06d}"


def seat(n: int, version: int, employees: int) -> int:
    """The vanpool (index) employee ``n`` rides in a version: one in ten moves to the next."""
    home = n // RIDERS_PER_VANPOOL
    moves = version % 2 == 1 and n % 10 == 0
    return (home + 1) % vanpool_count(employees) if moves else home


def roster(employees: int, version: int) -> dict[str, Any]:
    """The file's rows in version ``version``: every employee differs from the other version."""
    rows = []
    for n in range(employees):
        row: dict[str, Any] = {
            "employee_id": employee_id(n),
            "first_name": "Pat",
            "last_name": f"Rider{n}",
            "email": f"emp{n}@example.com",
            "work_site": SITE,
            "home_zip": ZIPS[version % 2],
            "shift_id": "DAY",
            "vanpool_id": vanpool_id(seat(n, version, employees)),
        }
        if n % 10 == 5:
            row["pto"] = ["2026-12-21..2026-12-23"] if version % 2 else []
        rows.append(row)
    return {"employees": rows}


def history_rows() -> int:
    """Rows in the roster's history tables (vanpools/history.py)."""
    return sum(model.history.count() for model in RECORDED)


def updated(result: ImportResult) -> int:
    return result.counts["employees"]["updated"]


class Command(BaseCommand):
    help = "Time a roster import in which every one of N stored employees changed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--employees", type=int, default=10_000)
        parser.add_argument("--runs", type=int, default=3)
        parser.add_argument(
            "--without-history",
            action="store_true",
            help="Record no history (SIMPLE_HISTORY_ENABLED=False): the import without its cost.",
        )

    def handle(
        self, *args: object, employees: int, runs: int, without_history: bool, **options: object
    ) -> None:
        if employees < 10 or runs < 1:
            raise CommandError("--employees must be ≥ 10 and --runs ≥ 1")
        logging.getLogger("vanpools").setLevel(logging.WARNING)
        recording = override_settings(SIMPLE_HISTORY_ENABLED=not without_history)
        with (
            recording,
            scratch_database(),
            tempfile.TemporaryDirectory(prefix="bench-import-") as folder,
        ):
            files = []
            for version in (0, 1):
                path = Path(folder) / f"roster-{version}.json"
                path.write_text(json.dumps(roster(employees, version)))
                files.append(path)
            started = time.perf_counter()
            build_program(employees)
            built = time.perf_counter() - started
            timings, cpu = [], []
            history_before = history_rows()
            for run in range(runs):
                started, cpu_started = time.perf_counter(), time.process_time()
                result = import_file(files[(run + 1) % 2])
                timings.append(time.perf_counter() - started)
                cpu.append(time.process_time() - cpu_started)
                if updated(result) != employees:
                    raise CommandError(f"run {run + 1} updated {updated(result)} of {employees}")
            recorded = history_rows() - history_before
        self.stdout.write(
            "\n".join(
                [
                    f"program: {employees} employees on {vanpool_count(employees)} vanpools "
                    f"({connection.vendor}), built in {built:.1f} s",
                    "runs: " + " / ".join(f"{t:.2f}" for t in timings) + " s",
                    f"import of {employees} changed employees: median "
                    f"{statistics.median(timings):.2f} s "
                    f"(this process's CPU {statistics.median(cpu):.2f} s)",
                    f"history rows written: {recorded} ({recorded / runs:.0f} an import)"
                    + (" (recording switched off)" if without_history else ""),
                ]
            )
        )
