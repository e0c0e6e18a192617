"""Benchmark: server time of the riders' answer page with many open cases.

Fills a scratch database (never the real one) with open cases — by default
10,000, one flagged rider each, with its verification, thread and answer link —
then opens the page of a spread of those cases through the Django test client
(no login, as a rider) and reports the median and 95th-percentile server time
and the query count, for GET and for an answer's POST. Goal: p95 ≤ 50 ms.
"""

import datetime as dt
import logging
import secrets
import statistics
import time
from collections.abc import Callable

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse
from django.utils import timezone

from cases.models import Case, Verification
from evals.bench_scene import FAR_ZIP, bench_employee, bench_vanpool, day_shift
from evals.management.commands.bench_dashboard import _bulk, percentile
from evals.scratch_db import scratch_database
from outreach.answer_page import token_hash
from outreach.models import AnswerLink, EmailThread
from vanpools.models import Rider

GOAL_P95_MS = 50


def build_cases(count: int) -> list[tuple[str, str]]:
    """``count`` open cases with a flagged rider and a link each; (case ID, token) pairs."""
    shift = day_shift("DAY")
    vanpools = _bulk(
        type(bench_vanpool("VP-0", "")),
        [bench_vanpool(f"VP-{n}", f"Van {n}") for n in range(count)],
    )
    employees = _bulk(
        type(bench_employee("E", first_name="", last_name="", email="", home_zip="", shift=shift)),
        [
            bench_employee(
                f"EMP-{n}",
                first_name=f"Rider{n}",
                last_name="Bench",
                email=f"rider{n}@example.com",
                home_zip=FAR_ZIP,
                shift=shift,
            )
            for n in range(count)
        ],
    )
    _bulk(
        Rider,
        [
            Rider(vanpool=v, employee=e, joined=dt.date(2026, 1, 5))
            for v, e in zip(vanpools, employees, strict=True)
        ],
    )
    deadline = timezone.now() + dt.timedelta(days=7)
    cases = _bulk(
        Case,
        [
            Case(
                case_id=f"CASE-{n:08X}",
                vanpool=vanpool,
                status=Case.Status.PENDING_REPLY,
                reply_deadline=deadline,
                meta={
                    "reason": "location_mismatch",
                    "failed_checks": ["location"],
                    "rider_flags": {f"EMP-{n}": {"location": "fail"}},
                },
            )
            for n, vanpool in enumerate(vanpools)
        ],
    )
    _bulk(
        Verification,
        [
            Verification(
                case=case,
                vanpool=case.vanpool,
                check_type="location",
                verdict="fail",
                confidence=5,
                reasoning=f"EMP-{n} lives 380.2 commute miles from the pickup; the limit is 50.",
                evidence=[
                    {
                        "type": "distance_check",
                        "employee_id": f"EMP-{n}",
                        "home_zip": FAR_ZIP,
                        "miles": 380.2,
                        "threshold_miles": 50,
                    }
                ],
                rider_flags={f"EMP-{n}": "fail"},
            )
            for n, case in enumerate(cases)
        ],
    )
    threads = _bulk(
        EmailThread,
        [
            EmailThread(
                thread_id=f"THREAD-{n:08X}", case=case, subject="Your seat", reply_token=f"b{n}"
            )
            for n, case in enumerate(cases)
        ],
    )
    tokens = [secrets.token_urlsafe(20) for _ in cases]
    _bulk(
        AnswerLink,
        [
            AnswerLink(thread=thread, employee=employee, token_sha256=token_hash(token))
            for thread, employee, token in zip(threads, employees, tokens, strict=True)
        ],
    )
    return [(case.case_id, token) for case, token in zip(cases, tokens, strict=True)]


def timed(call: Callable[[], object], runs: int, ok: int) -> tuple[float, float, int]:
    timings, queries = [], 0
    for _ in range(runs):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = call()
            timings.append((time.perf_counter() - started) * 1000)
        if response.status_code != ok:  # type: ignore[attr-defined]
            raise CommandError(f"the answer page answered {response.status_code}")  # type: ignore[attr-defined]
        queries = len(captured)
    return statistics.median(timings), percentile(timings, 0.95), queries


class Command(BaseCommand):
    help = "Time the riders' answer page (median, p95, queries) over many open cases."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cases", type=int, default=10_000, help="open cases")
        parser.add_argument("--runs", type=int, default=200, help="requests per measure")

    def handle(self, *args: object, **options: object) -> None:
        count, runs = int(options["cases"]), int(options["runs"])  # type: ignore[call-overload]
        if min(count, runs) < 1:
            raise CommandError("--cases and --runs must be at least 1")
        logging.getLogger("poolpatrol.request").setLevel(logging.WARNING)
        logging.getLogger("outreach.answer_page").setLevel(logging.WARNING)
        with scratch_database(), override_settings(ALLOWED_HOSTS=["testserver"], DEBUG=False):
            self.run(count, runs)

    def run(self, count: int, runs: int) -> None:
        started = time.perf_counter()
        links = build_cases(count)
        built = time.perf_counter() - started
        client = Client()
        # A spread of cases: each request opens the page of another one.
        pages = [reverse("answer-page", args=link) for link in links[:: max(1, count // runs)]][
            :runs
        ]
        client.get(pages[0])  # warm the template cache and the ZIP table
        cycle = iter(pages * 2)
        get = timed(lambda: client.get(next(cycle)), len(pages), 200)
        cycle = iter(pages * 2)
        head = timed(lambda: client.head(next(cycle)), len(pages), 200)
        posts = iter(pages * 2)
        post = timed(
            lambda: client.post(next(posts), {"choice": "question", "text": "Which ZIP?"}),
            len(pages),
            303,
        )
        self.stdout.write(
            f"{Case.objects.filter(status=Case.Status.PENDING_REPLY).count():,} open cases "
            f"(built in {built:.1f} s); {len(pages)} requests each"
        )
        self.stdout.write(f"{'request':<18}{'median ms':>11}{'p95 ms':>9}{'queries':>9}")
        for name, (median, p95, queries) in (("GET", get), ("HEAD", head), ("POST answer", post)):
            flag = "" if p95 <= GOAL_P95_MS else f"  <- over {GOAL_P95_MS} ms"
            self.stdout.write(f"{name:<18}{median:>11.1f}{p95:>9.1f}{queries:>9}{flag}")
        self.stdout.write(
            f"(goal p95 ≤ {GOAL_P95_MS} ms; {connection.vendor}; at {timezone.now():%Y-%m-%d})"
        )
