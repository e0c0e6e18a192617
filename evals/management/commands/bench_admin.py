"""Benchmark: admin changelists keep a constant query count as tables grow.

Builds a synthetic program in a throw-away database, then renders every
changelist with a small and a large table and reports queries and median time.
"""

import datetime as dt
import logging
import statistics
import time

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse
from django.utils import timezone

from agents.models import AgentRun
from cases.kinds import CancelMembership
from cases.models import Case, CaseEvent, PendingAction, Verification
from evals.scratch_db import scratch_database
from outreach.models import EmailThread, Message
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool

WEEKDAYS = [
    {"day": d, "start": "07:00", "end": "16:00"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
]


def build_rows(start: int, count: int, shift: Shift) -> None:
    """`count` vanpools, each with a rider, leave, a case, its trail and email."""
    vanpools = Vanpool.objects.bulk_create(
        Vanpool(
            vanpool_id=f"VP-{n}",
            name=f"Van {n}",
            work_site=f"Site {n % 3}",
            pickup_lat=37.5,
            pickup_lng=-122.0,
            schedule=WEEKDAYS,
        )
        for n in range(start, start + count)
    )
    employees = Employee.objects.bulk_create(
        Employee(
            employee_id=f"EMP-{n}",
            first_name="Pat",
            last_name=f"Rider{n}",
            email=f"emp{n}@example.com",
            work_site=f"Site {n % 3}",
            home_zip="94587",
            shift=shift,
        )
        for n in range(start, start + count)
    )
    riders = Rider.objects.bulk_create(
        Rider(vanpool=v, employee=e, joined=dt.date(2026, 1, 5))
        for v, e in zip(vanpools, employees, strict=True)
    )
    Leave.objects.bulk_create(
        Leave(employee=e, start_date=dt.date(2026, 12, 1), end_date=dt.date(2026, 12, 5))
        for e in employees
    )
    # One by one: cases and messages draw their public ids in save().
    for vanpool, rider in zip(vanpools, riders, strict=True):
        case = Case.objects.create(
            vanpool=vanpool, meta={"reason": "location_mismatch", "failed_checks": ["location"]}
        )
        CaseEvent.objects.create(case=case, actor_agent="case_manager", to_status="open")
        Verification.objects.create(
            case=case,
            vanpool=vanpool,
            check_type="location",
            verdict="fail",
            confidence=5,
            reasoning="far",
            evidence=[{"type": "distance_check", "miles": 80}],
        )
        PendingAction.objects.create(
            kind=CancelMembership.kind,
            case=case,
            rider=rider,
            requested_by="agent:supervisor",
        )
        thread = EmailThread.objects.create(case=case, subject="Your vanpool seat")
        Message.objects.create(
            thread=thread,
            direction="outbound",
            from_email="audit@example.com",
            to=[rider.employee.email],
            status="sent",
        )
        AgentRun.objects.create(agent="location", backend="rules", case=case, vanpool=vanpool)


def measure(client: Client, url: str, runs: int) -> tuple[int, float]:
    timings = []
    queries = 0
    for _ in range(runs):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"{url} answered {response.status_code}")
        queries = len(captured)
    return queries, statistics.median(timings)


class Command(BaseCommand):
    help = "Measure admin changelist queries and time at a small and a large table size."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--small", type=int, default=100)
        parser.add_argument("--large", type=int, default=1000)
        parser.add_argument("--runs", type=int, default=5)

    def handle(self, *args: object, small: int, large: int, runs: int, **options: object) -> None:
        if not 0 < small < large:
            self.stderr.write("--small must be positive and below --large")
            raise SystemExit(2)
        # One log line per request would bury the table.
        logging.getLogger("poolpatrol.request").setLevel(logging.WARNING)
        with scratch_database(), override_settings(ALLOWED_HOSTS=["testserver"]):
            self.run(small, large, runs)

    def run(self, small: int, large: int, runs: int) -> None:
        shift = Shift.objects.create(shift_id="DAY", name="Day", schedule=WEEKDAYS)
        user = get_user_model().objects.create_superuser("bench", "bench@example.com", "x")
        client = Client()
        client.force_login(user)
        urls = {
            model.__name__: reverse(
                f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"
            )
            for model in admin.site._registry
            if model._meta.app_label in {"vanpools", "cases", "outreach", "agents"}
        }
        build_rows(0, small, shift)
        at_small = {name: measure(client, url, runs) for name, url in urls.items()}
        build_rows(small, large - small, shift)
        at_large = {name: measure(client, url, runs) for name, url in urls.items()}
        self.stdout.write(
            f"{'changelist':<16}{'queries@' + str(small):>14}{'queries@' + str(large):>15}"
            f"{'ms@' + str(small):>10}{'ms@' + str(large):>10}"
        )
        for name in sorted(urls):
            (q1, t1), (q2, t2) = at_small[name], at_large[name]
            flag = "" if q1 == q2 else "  <- grows"
            self.stdout.write(f"{name:<16}{q1:>14}{q2:>15}{t1:>10.1f}{t2:>10.1f}{flag}")
        self.stdout.write(
            f"(median of {runs} runs; {connection.vendor}; at {timezone.now():%Y-%m-%d})"
        )
