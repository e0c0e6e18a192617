"""Benchmark: server time of the dashboard's pages over a program at scale.

Fills a scratch database (never the real one) with a synthetic program — by
default 10,000 cases, 1,000 pending actions and 60,000 riders — then renders
each page through the Django test client, logged in as a coordinator, and
reports the median and 95th-percentile server time and the query count.
The goal is a p95 of at most 150 ms on SQLite.
"""

import datetime as dt
import logging
import statistics
import time
from collections.abc import Iterator
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission, User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, models
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse
from django.utils import timezone

from agents.models import AgentRun
from cases.kinds import PAYLOADS
from cases.models import Case, CaseEvent, PendingAction, Verification
from evals.scratch_db import scratch_database
from outreach.models import EmailThread, Message
from vanpools.models import Employee, Rider, Shift, Vanpool

GOAL_P95_MS = 150
SEATS_PER_VAN = 12
BATCH = 2000
DAY = [{"day": d, "start": "07:00", "end": "15:30"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")]
NIGHT = [{"day": d, "start": "22:00", "end": "06:30"} for d in ("Sun", "Mon", "Tue", "Wed", "Thu")]
SITES = [
    ("Fremont Campus", 37.4926, -121.9466, "94587"),
    ("Andover Distribution Center", 42.6583, -71.1368, "01810"),
    ("Columbus DC", 39.9612, -82.9988, "43215"),
]
HOME_ZIPS = ["94587", "94538", "94541", "95035", "93721", "01810", "01852", "43215", "43068"]
REASONS = ["location_mismatch", "shift_mismatch", "both"]


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (p95 of 20 runs is the 19th fastest)."""
    ordered = sorted(values)
    rank = max(1, round(share * len(ordered) + 0.4999))
    return ordered[min(rank, len(ordered)) - 1]


def _chunks(items: list, size: int = BATCH) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _bulk(model: type[models.Model], rows: list) -> list:
    created = []
    for chunk in _chunks(rows):
        created += model._default_manager.bulk_create(chunk)
    return created


def build_program(*, cases: int, actions: int, riders: int) -> dict[str, str]:
    """The synthetic program; returns the identifiers of the rows the pages will show."""
    day = Shift.objects.create(shift_id="DAY", name="Day", schedule=DAY)
    night = Shift.objects.create(shift_id="NIGHT", name="Night", schedule=NIGHT, overnight=True)
    vans = max(1, riders // SEATS_PER_VAN)
    vanpools = _bulk(
        Vanpool,
        [
            Vanpool(
                vanpool_id=f"VP-{n}",
                name=f"Van {n}",
                work_site=SITES[n % 3][0],
                work_site_lat=SITES[n % 3][1],
                work_site_lng=SITES[n % 3][2],
                pickup_zip=SITES[n % 3][3],
                pickup_lat=SITES[n % 3][1] + 0.05,
                pickup_lng=SITES[n % 3][2] - 0.05,
                capacity=SEATS_PER_VAN + 2,
                schedule=DAY,
            )
            for n in range(vans)
        ],
    )
    employees = _bulk(
        Employee,
        [
            Employee(
                employee_id=f"EMP-{n}",
                first_name="Pat",
                last_name=f"Rider{n}",
                email=f"emp{n}@example.com",
                work_site=SITES[(n // SEATS_PER_VAN) % 3][0],
                home_zip=HOME_ZIPS[n % len(HOME_ZIPS)],
                shift=night if n % 11 == 0 else day,
            )
            for n in range(riders)
        ],
    )
    seats = _bulk(
        Rider,
        [
            Rider(
                vanpool=vanpools[(n // SEATS_PER_VAN) % vans],
                employee=employee,
                joined=dt.date(2026, 1, 5),
            )
            for n, employee in enumerate(employees)
        ],
    )
    case_rows = _build_cases(vanpools, cases)
    inbound = _build_evidence(case_rows)
    _build_actions(case_rows, seats, inbound, actions)
    open_case = next(case for case in case_rows if case.status != Case.Status.CLOSED)
    return {"case_id": open_case.case_id, "vanpool_id": open_case.vanpool.vanpool_id}


def _build_cases(vanpools: list[Vanpool], count: int) -> list[Case]:
    # One open case per vanpool at most (a constraint); the rest are closed.
    open_count = min(len(vanpools), max(1, count // 5))
    now = timezone.now()
    rows = []
    for n in range(count):
        index = n % len(vanpools)
        vanpool = vanpools[index]
        reason = REASONS[n % len(REASONS)]
        # The van's first rider is the one flagged (employees are numbered by seat).
        flags = {f"EMP-{index * SEATS_PER_VAN}": {"location": "fail"}}
        is_open = n < open_count
        rows.append(
            Case(
                case_id=f"CASE-{n:08X}",
                vanpool=vanpool,
                status=[Case.Status.PENDING_REPLY, Case.Status.HITL_REVIEW][n % 2]
                if is_open
                else Case.Status.CLOSED,
                outcome="" if is_open else ["resolved", "cancelled", "dismissed"][n % 3],
                closed_at=None if is_open else now - dt.timedelta(days=n % 40),
                meta={"reason": reason, "failed_checks": ["location"], "rider_flags": flags},
            )
        )
    return _bulk(Case, rows)


def _build_actions(
    cases: list[Case], seats: list[Rider], inbound: dict[int, Message], count: int
) -> None:
    """Pending actions of every kind (cases.kinds), each with its kind's sample payload."""
    open_cases = [case for case in cases if case.status != Case.Status.CLOSED]
    first_seat: dict[int, Rider] = {}
    for seat in seats:
        first_seat.setdefault(seat.vanpool_id, seat)
    actions = []
    for n in range(count):
        case = open_cases[n % len(open_cases)]
        kind = PAYLOADS[n % len(PAYLOADS)]
        employee_id = f"EMP-{(case.vanpool_id - vanpool_base(cases)) * SEATS_PER_VAN}"
        # Every action carries every link a kind may have: each card reads the ones it shows.
        actions.append(
            PendingAction(
                kind=kind.kind,
                case=case,
                rider=first_seat[case.vanpool_id],
                message=inbound[case.pk],
                requested_by="agent:supervisor",
                payload=kind.sample(employee_id).stored(),
            )
        )
    _bulk(PendingAction, actions)


def vanpool_base(cases: list[Case]) -> int:
    return min(case.vanpool_id for case in cases)


def _build_evidence(cases: list[Case]) -> dict[int, Message]:
    """A trail, verifications, an email thread and agent runs for every open case.

    Returns each open case's inbound reply, by case pk, for the actions about replies.
    """
    open_cases = [case for case in cases if case.status != Case.Status.CLOSED]
    _bulk(
        CaseEvent,
        [CaseEvent(case=case, actor_agent="case_manager", to_status="open") for case in cases],
    )
    _bulk(
        Verification,
        [
            Verification(
                case=case,
                vanpool=case.vanpool,
                check_type=check,
                verdict="fail",
                confidence=5,
                reasoning="EMP-1 lives 151.1 commute miles from the pickup; the limit is 50.",
                evidence=[{"type": "distance_check", "employee_id": "EMP-1", "miles": 151.1}],
                rider_flags={"EMP-1": "fail"},
            )
            for case in open_cases
            for check in ("location", "shift")
        ],
    )
    threads = _bulk(
        EmailThread,
        [
            EmailThread(
                thread_id=f"THREAD-{n:08X}",
                case=case,
                subject="Your vanpool seat",
                reply_token=f"bench{n}",
            )
            for n, case in enumerate(open_cases)
        ],
    )
    messages = _bulk(
        Message,
        [
            Message(
                message_id=f"MSG-{n * 2 + k:08X}",
                thread=thread,
                direction=direction,
                from_email="audit@example.com",
                to=["emp@example.com"],
                subject="Your vanpool seat",
                text_body="Hello,\n\nOur records show your home is far from the pickup.",
                status="sent" if direction == "outbound" else "received",
                employee_id=None,
            )
            for n, thread in enumerate(threads)
            for k, direction in enumerate(("outbound", "inbound"))
        ],
    )
    roots = _bulk(
        AgentRun,
        [
            AgentRun(agent="case_manager", backend="rules", case=case, vanpool=case.vanpool)
            for case in open_cases
        ],
    )
    _bulk(
        AgentRun,
        [
            AgentRun(
                agent=agent,
                backend="openai",
                model="gpt-4.1-mini",
                tokens_in=900,
                tokens_out=120,
                cost_usd=Decimal("0.0005"),
                latency_ms=800,
                parent=root,
                case=root.case,
                vanpool=root.vanpool,
            )
            for root in roots
            for agent in ("location", "shift")
        ],
    )
    case_of_thread = {thread.pk: thread.case_id for thread in threads}
    return {
        case_of_thread[message.thread_id]: message
        for message in messages
        if message.direction == "inbound"
    }


def coordinator() -> User:
    """A coordinator as the groups migration makes one (scratch databases skip data migrations)."""
    group, _ = Group.objects.get_or_create(name="Coordinators")
    group.permissions.add(
        *Permission.objects.filter(
            content_type__app_label__in=["cases", "vanpools", "outreach", "agents"],
            codename__startswith="view_",
        ).exclude(codename="view_home_address"),
        Permission.objects.get(codename="decide_pendingaction"),
    )
    user = get_user_model().objects.create_user("bench-coordinator", is_staff=True)
    user.groups.add(group)
    return user


def measure(client: Client, url: str, runs: int) -> tuple[float, float, int, list[str]]:
    timings, queries, sql = [], 0, []
    client.get(url)  # warm the template cache and the ZIP table
    for _ in range(runs):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise CommandError(f"{url} answered {response.status_code}")
        queries = len(captured)
        sql = [query["sql"] for query in captured.captured_queries]
        times = [float(query["time"]) * 1000 for query in captured.captured_queries]
        sql = [
            f"{ms:7.1f} ms  {text[:160]}"
            for ms, text in sorted(zip(times, sql, strict=True), reverse=True)
        ]
    return statistics.median(timings), percentile(timings, 0.95), queries, sql


class Command(BaseCommand):
    help = (
        "Time the dashboard's pages (median, p95, queries) over a synthetic program "
        "in a scratch database. Goal: p95 ≤ 150 ms on SQLite."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cases", type=int, default=10_000)
        parser.add_argument("--actions", type=int, default=1_000)
        parser.add_argument("--riders", type=int, default=60_000)
        parser.add_argument("--runs", type=int, default=20, help="requests per page")
        parser.add_argument(
            "--explain", action="store_true", help="list the slowest queries of slow pages"
        )

    def handle(self, *args: object, **options: object) -> None:
        sizes = {key: int(options[key]) for key in ("cases", "actions", "riders", "runs")}  # type: ignore[call-overload]
        if min(sizes.values()) < 1:
            raise CommandError("--cases, --actions, --riders and --runs must be at least 1")
        logging.getLogger("poolpatrol.request").setLevel(logging.WARNING)
        with scratch_database(), override_settings(ALLOWED_HOSTS=["testserver"], DEBUG=False):
            self.run(**sizes, explain=bool(options["explain"]))

    def run(self, *, cases: int, actions: int, riders: int, runs: int, explain: bool) -> None:
        started = time.perf_counter()
        ids = build_program(cases=cases, actions=actions, riders=riders)
        built = time.perf_counter() - started
        client = Client()
        client.force_login(coordinator())
        pages = {
            "review-queue": reverse("review-queue"),
            "case-list": reverse("case-list"),
            "case-detail": reverse("case-detail", args=[ids["case_id"]]),
            "vanpool-list": reverse("vanpool-list"),
            "vanpool-detail": reverse("vanpool-detail", args=[ids["vanpool_id"]]),
            "employee-detail": reverse("employee-detail", args=["EMP-0"]),
            "program": reverse("program"),
        }
        self.stdout.write(
            f"{Case.objects.count():,} cases, {PendingAction.objects.count():,} pending actions, "
            f"{Rider.objects.count():,} riders, {Vanpool.objects.count():,} vanpools "
            f"(built in {built:.1f} s); {runs} requests per page"
        )
        self.stdout.write(f"{'page':<18}{'median ms':>11}{'p95 ms':>9}{'queries':>9}")
        slow = []
        for name, url in pages.items():
            median, p95, queries, sql = measure(client, url, runs)
            flag = "" if p95 <= GOAL_P95_MS else f"  <- over {GOAL_P95_MS} ms"
            self.stdout.write(f"{name:<18}{median:>11.1f}{p95:>9.1f}{queries:>9}{flag}")
            if flag:
                slow.append((name, sql))
        self.stdout.write(
            f"(goal p95 ≤ {GOAL_P95_MS} ms; {connection.vendor}; at {timezone.now():%Y-%m-%d})"
        )
        for name, sql in slow if explain else []:
            self.stdout.write(f"\nslowest queries of {name}:")
            for line in sql[:5]:
                self.stdout.write(f"  {line}")
