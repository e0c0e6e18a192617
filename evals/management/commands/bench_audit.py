"""Benchmark: audit a synthetic program in a throw-away database.

Reports audits per second, queries per vanpool and peak memory. The program
is deterministic (fixed seed): mostly clean vanpools, ~5 % with a far rider,
~3 % with a rider on the wrong shift, ~1 % with a free-text schedule.
"""

import datetime as dt
import json
import logging
import os
import random
import resource
import secrets
import statistics
import tempfile
import time
from collections import Counter
from contextlib import AbstractContextManager
from pathlib import Path
from unittest.mock import patch

from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.db.models import Model
from django.test.utils import CaptureQueriesContext

from caseloop.audits import audit_vanpool, audit_vanpools
from caseloop.fanout import start_audit_run
from caseloop.models import AuditRun, progress
from cases.models import Case, Verification
from evals.scratch_db import scratch_database
from poolpatrol import spreadsheets
from poolpatrol.qcluster import current_database_url, running_qcluster
from vanpools.importing.records.staging import writes_stored_data
from vanpools.models import (
    DataCoverage,
    Employee,
    ParkingPermit,
    RideDay,
    Rider,
    Shift,
    Trip,
    Vanpool,
    VanpoolMonth,
)
from vanpools.monthly_report import COLUMNS, report_rows

AUDIT_DATE = dt.date(2026, 11, 23)
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
# Pickup points with real ZIPs a few miles away, and one far ZIP per site.
SITES = [
    ("Fremont Campus", 37.5906, -122.0172, ["94587", "94536", "94538", "94544", "94555"], "90026"),
    ("Andover DC", 42.6583, -71.1368, ["01810", "01821", "01845", "01826", "01876"], "04101"),
    ("Columbus DC", 39.8770, -82.9532, ["43125", "43207", "43110", "43137", "43232"], "45202"),
]


# The apps whose tables an audit (and the outreach it queues) writes; the roster's
# apps are read, never written.
AUDIT_APPS = ("agents", "cases", "outreach", "caseloop")


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
        if sql.lstrip()[:7].upper().startswith(WRITES) and writes_stored_data(sql):
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
        parser.add_argument(
            "--trips",
            type=int,
            default=0,
            metavar="WORKDAYS",
            help="log this many workdays of trips for every van (one there, one back, each "
            "rider aboard; ~1 %% of riders on a third of the days), with seats, a parking "
            "permit list and a month's report, so ridership, parking and the vanpool "
            "rules have data to judge",
        )
        parser.add_argument(
            "--report",
            action="store_true",
            help="also time the monthly vanpool report of every van for last month",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=0,
            help="audit through a qcluster with this many workers on the configured database "
            "and broker, then compare with one process",
        )

    def handle(
        self,
        *args: object,
        vanpools: int,
        riders_per_vanpool: int,
        seed: int,
        rerun: bool = False,
        workers: int = 0,
        trips: int = 0,
        report: bool = False,
        **options: object,
    ) -> None:
        if vanpools < 1 or not 1 <= riders_per_vanpool <= 60:
            raise CommandError("--vanpools must be ≥ 1 and --riders-per-vanpool between 1 and 60")
        if not 0 <= workers <= 32:
            raise CommandError("--workers must be between 1 and 32")
        if not 0 <= trips <= 60:
            raise CommandError("--trips must be between 0 and 60 workdays")
        if workers:
            self.stdout.write(fan_out(vanpools, riders_per_vanpool, seed, workers, trips))
            return
        # Case events log one line each; thousands would bury the figures.
        logging.getLogger("cases").setLevel(logging.WARNING)
        with scratch_database():
            started = time.perf_counter()
            ids = build_program(vanpools, riders_per_vanpool, random.Random(seed))
            ride_rows = log_trips(trips, random.Random(seed)) if trips else 0
            built = time.perf_counter() - started
            per_vanpool = sample_queries(riders_per_vanpool)
            counter = QueryCounter()
            started, cpu = time.perf_counter(), time.process_time()
            with connection.execute_wrapper(counter), no_outreach():
                outcomes = audit_vanpools(ids, audit_date=AUDIT_DATE)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            first_peak = peak_mib()
            again = self._rerun(ids) if rerun else ""
            reported = time_report() if report else ""
        statuses = Counter(o.status for o in outcomes)
        lines = [
            f"program: {vanpools} vanpools × {riders_per_vanpool} riders "
            f"({connection.vendor}, {settings.LLM_BACKEND} backend)"
            + (f", {trips} workdays of trips ({ride_rows:,} rider-day rows)" if trips else "")
            + f", built in {built:.1f} s",
            f"audited: {len(outcomes)} in {seconds:.1f} s = {len(outcomes) / seconds:.0f} audits/s"
            + cpu_rate(len(outcomes), cpu),
            f"outcomes: {dict(sorted(statuses.items()))}",
            f"queries per vanpool (bulk, preload amortised): {counter.count / len(outcomes):.1f}",
            f"queries per single audit (median of samples): {per_vanpool}",
            f"model calls: {sum(o.model_calls for o in outcomes)}",
            f"peak memory (RSS): {first_peak:.0f} MiB",
        ]
        lines += [line for line in (again, reported) if line]
        self.stdout.write("\n".join(lines))

    def _rerun(self, ids: list[str]) -> str:
        """The nightly case: the same roster, nothing changed since the last audit."""
        counter = QueryCounter()
        started, cpu = time.perf_counter(), time.process_time()
        with connection.execute_wrapper(counter), no_outreach():
            outcomes = audit_vanpools(ids, audit_date=AUDIT_DATE)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        return (
            f"re-audit unchanged: {len(outcomes)} in {seconds:.1f} s = "
            f"{len(outcomes) / seconds:.0f} audits/s{cpu_rate(len(outcomes), cpu)}, "
            f"rows written {counter.rows_written} "
            f"(peak memory {peak_mib():.0f} MiB)"
        )


def cpu_rate(audits: int, cpu_seconds: float) -> str:
    """The rate on this process's own CPU time: on a shared machine, wall time counts the others."""
    return f" ({cpu_seconds:.1f} s of CPU = {audits / max(cpu_seconds, 1e-9):.0f} per CPU-second)"


def time_report() -> str:
    """The monthly report of every van for the month before the audit, as CSV."""
    month = (AUDIT_DATE.replace(day=1) - dt.timedelta(days=1)).replace(day=1)
    started, cpu = time.perf_counter(), time.process_time()
    # The program's vans: not the few sample_queries adds to count one audit's queries.
    rows = list(report_rows(Vanpool.objects.exclude(name=SAMPLE_NAME), month))
    text = spreadsheets.as_csv(COLUMNS, rows)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return (
        f"monthly report {month:%Y-%m}: {len(rows)} vans in {seconds:.1f} s ({cpu:.1f} s of CPU) "
        f"({len(text) / 1e6:.1f} MB of CSV, peak memory {peak_mib():.0f} MiB)"
    )


def no_outreach() -> AbstractContextManager:
    """The audit alone: the first emails it would queue are bench_outreach's to measure.

    Queued, they would also land on the configured broker, where a real
    worker could take a task that names rows of this throw-away database.
    """
    return patch("caseloop.audits.enqueue_outreach", lambda case_pk: None)


def fan_out(vanpools: int, riders: int, seed: int, workers: int, trips: int = 0) -> str:
    """The same program audited through a qcluster of ``workers``, then in this process."""
    with scratch_database(), tempfile.TemporaryDirectory(prefix="poolpatrol-bench-") as var:
        ids = build_program(vanpools, riders, random.Random(seed))
        if trips:
            log_trips(trips, random.Random(seed))
        queue = f"bench-audit-{secrets.token_hex(4)}"
        env = worker_env(Path(var), queue, workers)
        with running_qcluster(env) as cluster:
            time.sleep(WORKER_START_SECONDS)  # the cluster's processes start before the clock
            started = time.perf_counter()
            run = start_audit_run(ids, audit_date=AUDIT_DATE, requested_by="bench", queue=queue)
            counts = wait_for(run)
            seconds = time.perf_counter() - started
            worker_peak = peak_of_tree(cluster.pid)
        fanned, duplicates = audit_results(), duplicate_cases()
        forget_audits()
        started = time.perf_counter()
        with no_outreach():
            audit_vanpools(ids, audit_date=AUDIT_DATE)
        single = time.perf_counter() - started
        same = "yes" if audit_results() == fanned else "no"
    return "\n".join(
        [
            f"program: {vanpools} vanpools × {riders} riders ({connection.vendor}, "
            f"broker {'Redis' if settings.REDIS_URL else 'ORM'})"
            + (f", {trips} workdays of trips" if trips else ""),
            f"workers: {workers}, audited: {vanpools} in {seconds:.1f} s = "
            f"{vanpools / seconds:.0f} audits/s, same results as one process: {same}, "
            f"duplicate cases: {duplicates}",
            f"chunks: {counts['done']} done, {counts['failed']} failed of {counts['total']} "
            f"({settings.AUDIT_CHUNK_SIZE} vanpools each)",
            f"one process: {vanpools} in {single:.1f} s = {vanpools / single:.0f} audits/s",
            f"peak memory (RSS): this process {peak_mib():.0f} MiB, "
            f"largest worker process {worker_peak:.0f} MiB",
        ]
    )


WORKER_START_SECONDS = 3.0


def worker_env(var: Path, queue: str, workers: int) -> dict[str, str]:
    """A qcluster on this scratch database and the configured broker, on a queue of its own."""
    url = current_database_url()
    env = {key: value for key, value in os.environ.items() if not key.startswith("EMAIL_")}
    return env | {
        "DATABASE_URL": url,
        "VAR_DIR": str(var),
        "Q_CLUSTER_NAME": queue,
        "Q_WORKERS": str(workers),
        "Q_SCHEDULER": "false",
        "LOG_LEVEL": "warning",
        # First emails to the scratch program's riders go nowhere.
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        **({"REDIS_URL": settings.REDIS_URL} if settings.REDIS_URL else {}),
    }


def wait_for(run: AuditRun, timeout: float = 3600) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while (counts := progress(run))["done"] + counts["failed"] < counts["total"]:
        if time.monotonic() > deadline:
            raise CommandError(f"the workers did not finish in {timeout:.0f} s: {counts}")
        time.sleep(0.2)
    return counts


def audit_results() -> list[tuple]:
    """What the audit decided, vanpool by vanpool, without ids or times.

    Not the case's status: the workers also run the outreach the audit queues
    (open → pending_reply), which the one-process run leaves out.
    """
    cases = Case.objects.values_list("vanpool__vanpool_id", "meta__reason", "meta__rider_flags")
    verdicts = Verification.objects.values_list("vanpool__vanpool_id", "check_type", "verdict")
    return sorted((*row[:2], json.dumps(row[2], sort_keys=True)) for row in cases) + sorted(
        verdicts
    )


def duplicate_cases() -> int:
    per_vanpool = Counter(Case.objects.values_list("vanpool_id", flat=True))
    return sum(count - 1 for count in per_vanpool.values() if count > 1)


def audit_tables() -> list[str]:
    """Every table of the audit's apps, each after every table that points at it.

    Read from the models rather than listed by hand, so a model added to one of
    these apps (a reply token, say) is emptied too instead of failing the delete.
    """
    models = [model for app in AUDIT_APPS for model in apps.get_app_config(app).get_models()]
    ordered: list[type[Model]] = []
    seen: set[type[Model]] = set()

    def visit(model: type[Model]) -> None:
        if model in seen:  # done, or on the path (a cycle is deferred to the commit's check)
            return
        seen.add(model)
        for other in models:
            if other is not model and any(
                field.related_model is model
                for field in other._meta.get_fields()
                if field.many_to_one or field.one_to_one
                if field.concrete
            ):
                visit(other)
        ordered.append(model)

    for model in models:
        visit(model)
    return [model._meta.db_table for model in ordered]


def forget_audits() -> None:
    """Empty what an audit writes (this is a scratch database) for the one-process run."""
    with transaction.atomic(), connection.cursor() as cursor:
        for table in audit_tables():
            cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)}")


def peak_of_tree(pid: int) -> float:
    """The largest peak resident memory among a process and its descendants, in MiB."""
    peaks = []
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        peaks += [
            int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM")
        ]
        pending += [int(child) for child in children]
    return max(peaks, default=0.0)


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


BATCH = 20_000


def log_trips(workdays: int, rng: random.Random) -> int:
    """Trips on the ``workdays`` weekdays before the audit date, in batches; rider-day rows made.

    Each van runs there and back every day with its riders aboard, except
    ~1 % of riders who ride a third of the days (ridership failures). Every
    van gets 7 seats, 25 miles a trip and last month's odometer; the program
    gets a permit list, with a permit for ~0.5 % of riders (parking failures).
    """
    days = weekdays_before(AUDIT_DATE, workdays)
    vans = list(Vanpool.objects.order_by("pk").values_list("pk", "vanpool_id"))
    seats: dict[int, list[int]] = {}
    for vanpool_pk, employee_pk in Rider.objects.order_by("pk").values_list(
        "vanpool_id", "employee_id"
    ):
        seats.setdefault(vanpool_pk, []).append(employee_pk)
    Vanpool.objects.update(seats=7, miles_per_trip=25)
    trips: list[Trip] = []
    ride_days: list[RideDay] = []
    made = 0
    for vanpool_pk, vanpool_id in vans:
        riders = seats.get(vanpool_pk, [])
        seldom = {e for e in riders if rng.random() < 0.01}
        for day in days:
            aboard = [e for e in riders if e not in seldom or rng.random() < 0.33]
            for direction in ("to_work", "from_work"):
                ref = f"{vanpool_id}/{day.isoformat()}/{direction}"
                trips.append(
                    Trip(
                        vanpool_id=vanpool_pk,
                        date=day,
                        direction=direction,
                        trip_ref=ref,
                        passengers=len(aboard),
                    )
                )
            ride_days += [
                RideDay(
                    vanpool_id=vanpool_pk,
                    employee_id=e,
                    date=day,
                    source="trip",
                    ref=f"{vanpool_id}/{day.isoformat()}/to_work",
                )
                for e in aboard
            ]
        if len(ride_days) >= BATCH:
            made += _flush(trips, ride_days)
    made += _flush(trips, ride_days)
    DataCoverage.objects.bulk_create(
        [DataCoverage(kind="trips", vanpool_id=pk, start=days[0], end=days[-1]) for pk, _ in vans],
        batch_size=5000,
    )
    DataCoverage.objects.create(kind="permits", work_site="")
    # Last month's odometer: its commute trips and a tenth more (a 91 % commute share).
    month = (AUDIT_DATE.replace(day=1) - dt.timedelta(days=1)).replace(day=1)
    month_trips = 2 * sum(day.month == month.month for day in days)
    miles = round(month_trips * 25 * 1.1, 1) or None
    VanpoolMonth.objects.bulk_create(
        [VanpoolMonth(vanpool_id=pk, month=month, vehicle_miles=miles) for pk, _ in vans],
        batch_size=5000,
    )
    employees = list(Employee.objects.values_list("pk", flat=True))
    ParkingPermit.objects.bulk_create(
        [
            ParkingPermit(
                permit_id=f"P-{pk}", employee_id=pk, lot="Garage A", valid_from=dt.date(2026, 1, 1)
            )
            for pk in employees
            if rng.random() < 0.005
        ],
        batch_size=5000,
    )
    return made


def _flush(trips: list, ride_days: list) -> int:
    Trip.objects.bulk_create(trips, batch_size=5000)
    RideDay.objects.bulk_create(ride_days, batch_size=5000)
    made = len(ride_days)
    trips.clear()
    ride_days.clear()
    return made


def weekdays_before(day: dt.date, count: int) -> list[dt.date]:
    found: list[dt.date] = []
    while len(found) < count:
        day -= dt.timedelta(days=1)
        if day.weekday() < 5:
            found.append(day)
    return sorted(found)


SAMPLE_NAME = "sample"


def sample_queries(riders: int) -> int:
    """Queries for one audit of a fresh clean vanpool, the constant the tests assert."""
    counts = []
    for n in range(3):
        vanpool = Vanpool.objects.create(
            vanpool_id=f"VP-S{n}",
            name=SAMPLE_NAME,
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
