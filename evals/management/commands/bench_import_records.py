"""Benchmark: import a large trip log or ride-day file in a throw-away database, then again.

Reports rows a second, peak memory, and the rows the unchanged second import
writes (the target: none).
"""

import csv
import logging
import random
import tempfile
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from evals.management.commands.bench_audit import (
    AUDIT_DATE,
    QueryCounter,
    build_program,
    peak_mib,
    weekdays_before,
)
from evals.scratch_db import scratch_database
from vanpools.importing.records import import_records
from vanpools.models import Rider, Vanpool

SHAPES = ("ride_days", "trips")


class Command(BaseCommand):
    help = "Import a large trip log (or ride-day file) into a scratch database, then again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rows", type=int, default=1_000_000)
        parser.add_argument("--shape", choices=SHAPES, default="ride_days")
        parser.add_argument("--riders-per-vanpool", type=int, default=6)
        parser.add_argument("--seed", type=int, default=7)

    def handle(
        self,
        *args: object,
        rows: int,
        shape: str,
        riders_per_vanpool: int,
        seed: int,
        **options: object,
    ) -> None:
        if not 1 <= rows <= 10_000_000:
            raise CommandError("--rows must be between 1 and 10,000,000")
        logging.getLogger("cases").setLevel(logging.WARNING)
        riders = riders_per_vanpool
        per_van = (
            riders * 22 if shape == "ride_days" else 44
        )  # a month: 22 workdays, there and back
        vanpools = max(1, -(-rows // per_van))
        with scratch_database(), tempfile.TemporaryDirectory(prefix="poolpatrol-bench-") as folder:
            started = time.perf_counter()
            build_program(vanpools, riders, random.Random(seed))
            path = Path(folder) / f"{shape}.csv"
            written = write_file(path, shape, rows)
            size = path.stat().st_size / 1e6
            built = time.perf_counter() - started
            builder_peak = peak_mib()
            imports_from = reset_peak()
            first, first_cpu, first_rows = timed_import(path)
            again, again_cpu, again_rows = timed_import(path)
        self.stdout.write(
            "\n".join(
                [
                    f"file: {written:,} {shape} rows ({size:.0f} MB) for {vanpools:,} vanpools "
                    f"× {riders} riders ({connection.vendor}), built in {built:.1f} s",
                    f"first import: {first:.1f} s = {written / first:,.0f} rows/s "
                    f"({first_cpu:.1f} s of CPU), rows written {first_rows:,}",
                    f"same file again: {again:.1f} s ({again_cpu:.1f} s of CPU), "
                    f"rows written {again_rows}",
                    f"peak memory (RSS) of the imports: {imports_peak(imports_from)}; "
                    f"of the whole process: {max(peak_mib(), builder_peak):.0f} MiB "
                    f"(building the program: {builder_peak:.0f} MiB)",
                ]
            )
        )


def write_file(path: Path, shape: str, rows: int) -> int:
    """The month's weekdays before the audit date, each van's riders aboard every day."""
    days = weekdays_before(AUDIT_DATE, 22)
    seats: dict[str, list[str]] = {}
    for vanpool_id, employee_id in Rider.objects.order_by("vanpool_id", "employee_id").values_list(
        "vanpool__vanpool_id", "employee__employee_id"
    ):
        seats.setdefault(vanpool_id, []).append(employee_id)
    written = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        if shape == "ride_days":
            writer.writerow(["employee_id", "date", "vanpool_id"])
        else:
            writer.writerow(
                ["trip_id", "vanpool_id", "date", "direction", "driver_id", "passengers"]
            )
        for vanpool_id in Vanpool.objects.order_by("vanpool_id").values_list(
            "vanpool_id", flat=True
        ):
            people = seats.get(vanpool_id, [])
            for day in days:
                if shape == "ride_days":
                    for person in people:
                        if written < rows:
                            writer.writerow([person, day.isoformat(), vanpool_id])
                            written += 1
                    continue
                for direction in ("to_work", "from_work"):
                    if written < rows:
                        ref = f"{vanpool_id}-{day:%Y%m%d}-{direction}"
                        writer.writerow(
                            [
                                ref,
                                vanpool_id,
                                day.isoformat(),
                                direction,
                                people[0],
                                ";".join(people[1:]),
                            ]
                        )
                        written += 1
    return written


def reset_peak() -> float | None:
    """Start the high-water mark of resident memory again (Linux); the memory in use now.

    The synthetic program's builder peaks higher than an import does: without
    the reset, the process's peak would be the builder's.
    """
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    return _status_mib("VmRSS")


def imports_peak(started_at: float | None) -> str:
    if started_at is None:
        return "not measurable here (needs Linux's /proc)"
    return f"{_status_mib('VmHWM'):.0f} MiB ({started_at:.0f} MiB in use before them)"


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise CommandError(f"/proc/self/status has no {field}")


def timed_import(path: Path) -> tuple[float, float, int]:
    """Wall seconds, this process's CPU seconds, and rows written."""
    counter = QueryCounter()
    started, cpu = time.perf_counter(), time.process_time()
    with connection.execute_wrapper(counter):
        import_records(path)
    return time.perf_counter() - started, time.process_time() - cpu, counter.rows_written
