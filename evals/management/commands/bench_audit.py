"""Benchmark: audit a synthetic program in a throw-away database.

Reports audits per second, queries per vanpool and peak memory. The program
is deterministic (fixed seed): mostly clean vanpools, ~5 % with a far rider,
~3 % with a rider on the wrong shift, ~1 % with a free-text schedule.
"""

import datetime as dt
import logging
import random
import resource
import statistics
import time
from collections import Counter

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.test.utils import CaptureQueriesContext

from caseloop.audits import audit_vanpool, audit_vanpools
from evals.scratch_db import scratch_database
from vanpools.models import Employee, Rider, Shift, Vanpool

AUDIT_DATE = dt.date(2026, 11, 23)
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
# Pickup points with real ZIPs a few miles away, and one far ZIP per site.
SITES = [
    ("Fremont Campus", 37.5906, -122.0172, ["94587", "94536", "94538", "94544", "94555"], "90026"),
    ("Andover DC", 42.6583, -71.1368, ["01810", "01821", "01845", "01826", "01876"], "04101"),
    ("Columbus DC", 39.8770, -82.9532, ["43125", "43207", "43110", "43137", "43232"], "45202"),
]


def weekly(start: str, end: str) -> list[dict[str, str]]:
    return [{"day": day, "start": start, "end": end} for day in DAYS]


WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


class QueryCounter:
    """Counts every query, and the rows writes touched, without keeping them (cheap at 100k)."""

    def __init__(self) -> None:
        self.count = 0
        self.rows_written = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        result = execute(sql, params, many, context)
        if sql.lstrip()[:7].upper().startswith(WRITES):
            self.rows_written += max(context["cursor"].rowcount, 0)
        return result


class Command(BaseCommand):
    help = "Build N vanpools × K riders in a scratch database and time a full audit."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--vanpools", type=int, default=1000)
        parser.add_argument("--riders-per-vanpool", type=int, default=6)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument(
            "--rerun",
            action="store_true",
            help="audit the same, unchanged roster again and count the rows it writes",
        )

    def handle(
        self,
        *args: object,
        vanpools: int,
        riders_per_vanpool: int,
        seed: int,
        rerun: bool = False,
        **options: object,
    ) -> None:
        if vanpools < 1 or not 1 <= riders_per_vanpool <= 60:
            raise CommandError("--vanpools must be ≥ 1 and --riders-per-vanpool between 1 and 60")
        # Case events log one line each; thousands would bury the figures.
        logging.getLogger("cases").setLevel(logging.WARNING)
        with scratch_database():
            started = time.perf_counter()
            ids = build_program(vanpools, riders_per_vanpool, random.Random(seed))
            built = time.perf_counter() - started
            per_vanpool = sample_queries(riders_per_vanpool)
            counter = QueryCounter()
            started = time.perf_counter()
            with connection.execute_wrapper(counter):
                outcomes = audit_vanpools(ids, audit_date=AUDIT_DATE)
            seconds = time.perf_counter() - started
            first_peak = peak_mib()
            again = self._rerun(ids) if rerun else ""
        statuses = Counter(o.status for o in outcomes)
        lines = [
            f"program: {vanpools} vanpools × {riders_per_vanpool} riders "
            f"({connection.vendor}, {settings.LLM_BACKEND} backend), built in {built:.1f} s",
            f"audited: {len(outcomes)} in {seconds:.1f} s = {len(outcomes) / seconds:.0f} audits/s",
            f"outcomes: {dict(sorted(statuses.items()))}",
            f"queries per vanpool (bulk, preload amortised): {counter.count / len(outcomes):.1f}",
            f"queries per single audit (median of samples): {per_vanpool}",
            f"model calls: {sum(o.model_calls for o in outcomes)}",
            f"peak memory (RSS): {first_peak:.0f} MiB",
        ]
        if again:
            lines.append(again)
        self.stdout.write("\n".join(lines))

    def _rerun(self, ids: list[str]) -> str:
        """The nightly case: the same roster, nothing changed since the last audit."""
        counter = QueryCounter()
        started = time.perf_counter()
        with connection.execute_wrapper(counter):
            outcomes = audit_vanpools(ids, audit_date=AUDIT_DATE)
        seconds = time.perf_counter() - started
        return (
            f"re-audit unchanged: {len(outcomes)} in {seconds:.1f} s = "
            f"{len(outcomes) / seconds:.0f} audits/s, rows written {counter.rows_written} "
            f"(peak memory {peak_mib():.0f} MiB)"
        )


def peak_mib() -> float:
    """This process's peak resident memory so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_program(vanpools: int, riders: int, rng: random.Random) -> list[str]:
    day = Shift.objects.create(shift_id="DAY", name="Day", schedule=weekly("07:00", "16:00"))
    night = Shift.objects.create(
        shift_id="NIGHT", name="Night", overnight=True, schedule=weekly("22:00", "06:30")
    )
    flex = Shift.objects.create(
        shift_id="FLEX", name="Flex", schedule_text="varies, see supervisor"
    )
    vans, employees, seats = [], [], []
    for n in range(vanpools):
        site, lat, lng, near, far = SITES[n % len(SITES)]
        vans.append(
            Vanpool(
                vanpool_id=f"VP-{n:05d}",
                name=f"Van {n}",
                work_site=site,
                pickup_lat=lat,
                pickup_lng=lng,
                schedule=weekly("07:00", "16:00"),
            )
        )
        problem = rng.random()
        for k in range(riders):
            odd_one = k == 0
            employees.append(
                Employee(
                    employee_id=f"EMP-{n:05d}{k:02d}",
                    first_name="Pat",
                    last_name=f"R{n}-{k}",
                    email=f"r{n}-{k}@example.com",
                    work_site=site,
                    home_zip=far if odd_one and problem < 0.05 else rng.choice(near),
                    shift=night
                    if odd_one and 0.05 <= problem < 0.08
                    else flex
                    if odd_one and 0.08 <= problem < 0.09
                    else day,
                )
            )
    Vanpool.objects.bulk_create(vans, batch_size=2000)
    Employee.objects.bulk_create(employees, batch_size=2000)
    van_pks = dict(Vanpool.objects.values_list("vanpool_id", "pk"))
    employee_pks = dict(Employee.objects.values_list("employee_id", "pk"))
    for employee_id, pk in employee_pks.items():
        van_number = employee_id[4:9]
        seats.append(
            Rider(
                vanpool_id=van_pks[f"VP-{van_number}"], employee_id=pk, joined=dt.date(2026, 1, 5)
            )
        )
    Rider.objects.bulk_create(seats, batch_size=5000)
    return sorted(van_pks)


def sample_queries(riders: int) -> int:
    """Queries for one audit of a fresh clean vanpool, the constant the tests assert."""
    counts = []
    for n in range(3):
        vanpool = Vanpool.objects.create(
            vanpool_id=f"VP-S{n}",
            name="sample",
            work_site="S",
            pickup_lat=37.59,
            pickup_lng=-122.02,
            schedule=weekly("07:00", "16:00"),
        )
        day = Shift.objects.get(shift_id="DAY")
        for k in range(riders):
            employee = Employee.objects.create(
                employee_id=f"EMP-S{n}{k:02d}",
                first_name="S",
                last_name="S",
                email=f"s{n}{k}@example.com",
                work_site="S",
                home_zip="94587",
                shift=day,
            )
            Rider.objects.create(vanpool=vanpool, employee=employee, joined=dt.date(2026, 1, 5))
        with CaptureQueriesContext(connection) as captured:
            audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
        counts.append(len(captured))
    return int(statistics.median(counts))
