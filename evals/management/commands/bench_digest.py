"""Benchmark: the coordinators' daily review digest at scale (caseloop.digest).

Fills a scratch database (never the real one) with waiting cards of every
kind on open cases across many vanpools and sites, and coordinators who each
coordinate some of those vanpools; then times ``send_daily_digests`` (build
and send, through Django's in-memory mail backend so the mail server's speed
is not measured) and runs it a second time, which must send nothing. The goal
is 500 coordinators over 10,000 cards in at most 30 s.
"""

import datetime as dt
import time

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core import mail
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone

from caseloop.digest import COORDINATORS, send_daily_digests
from cases.kinds import PAYLOADS
from cases.models import Case, PendingAction
from evals.scratch_db import scratch_database
from vanpools.models import Vanpool

GOAL_SECONDS = 30
BATCH = 2000


class Command(BaseCommand):
    help = "Time the daily review digest: --coordinators over --cards waiting (goal ≤ 30 s)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--coordinators", type=int, default=500)
        parser.add_argument("--cards", type=int, default=10_000)
        parser.add_argument("--sites", type=int, default=50)
        parser.add_argument("--runs", type=int, default=3, help="fresh days to time")

    def handle(self, *args: object, **options: object) -> None:
        sizes = {k: int(options[k]) for k in ("coordinators", "cards", "sites", "runs")}  # type: ignore[call-overload]
        if min(sizes.values()) < 1:
            raise CommandError("--coordinators, --cards, --sites and --runs must be at least 1")
        with (
            scratch_database(),
            override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"),
        ):
            self.run(**sizes)

    def run(self, *, coordinators: int, cards: int, sites: int, runs: int) -> None:
        build(coordinators=coordinators, cards=cards, sites=sites)
        self.stdout.write(
            f"{coordinators:,} coordinators, {cards:,} waiting cards on {sites} sites; "
            f"{runs} days, each run twice"
        )
        self.stdout.write(f"{'day':<6}{'seconds':>9}{'emails':>8}{'queries':>9}{'again':>7}")
        timings = []
        for day in range(runs):
            mail.outbox = []
            now = timezone.now() + dt.timedelta(days=day)
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                send_daily_digests(now)
                took = time.perf_counter() - started
            sent = len(mail.outbox)
            send_daily_digests(now)  # at least once delivery: the second run sends nothing
            again = len(mail.outbox) - sent
            timings.append(took)
            self.stdout.write(f"{day + 1:<6}{took:>9.2f}{sent:>8}{len(captured):>9}{again:>7}")
            if again:
                raise CommandError(f"the second run sent {again} digest(s)")
        worst = max(timings)
        flag = "" if worst <= GOAL_SECONDS else f"  <- over {GOAL_SECONDS} s"
        self.stdout.write(
            f"slowest {worst:.2f} s (goal ≤ {GOAL_SECONDS} s; {connection.vendor}; "
            f"at {timezone.now():%Y-%m-%d}){flag}"
        )


def build(*, coordinators: int, cards: int, sites: int) -> None:
    """Vanpools on ``sites`` sites, one open case each, cards spread over them and over time."""
    group, _ = Group.objects.get_or_create(name=COORDINATORS)
    users = get_user_model().objects.bulk_create(
        [
            get_user_model()(username=f"coord{n}", email=f"coord{n}@example.com", is_staff=True)
            for n in range(coordinators)
        ]
    )
    group.user_set.add(*users)
    vans = max(sites, cards // 4)
    vanpools = Vanpool.objects.bulk_create(
        [
            Vanpool(
                vanpool_id=f"VP-{n}",
                name=f"Van {n}",
                work_site=f"Site {n % sites}",
                coordinator=users[n % coordinators],
            )
            for n in range(vans)
        ],
        batch_size=BATCH,
    )
    cases = Case.objects.bulk_create(
        [
            Case(case_id=f"CASE-{n:08X}", vanpool=van, status=Case.Status.HITL_REVIEW)
            for n, van in enumerate(vanpools)
        ],
        batch_size=BATCH,
    )
    now = timezone.now()
    actions = PendingAction.objects.bulk_create(
        [
            PendingAction(
                kind=PAYLOADS[n % len(PAYLOADS)].kind,
                case=cases[n % len(cases)],
                requested_by="agent:supervisor",
                payload=PAYLOADS[n % len(PAYLOADS)].sample(f"EMP-{n}").stored(),
            )
            for n in range(cards)
        ],
        batch_size=BATCH,
    )
    for n, action in enumerate(actions):
        action.created_at = now - dt.timedelta(hours=n % 120)
    PendingAction.objects.bulk_update(actions, ["created_at"], batch_size=BATCH)
