"""Benchmark: the outreach loop in a throw-away database.

Builds N vanpools with one rider too far from the pickup, then measures:
the audit that opens N cases and writes to the riders (locmem email backend,
follow-on tasks run in-process); N replies posted to the real anymail
Postmark inbound webhook, as a provider would (basic auth, raw MIME); the
same deliveries again (stored once); and the reply loop acting on each stored
reply (classification, re-audit or answer, emails). Every step is run twice
where a retry could happen, and the second pass must change nothing.
"""

import base64
import json
import logging
import statistics
import time
from collections import Counter
from collections.abc import Callable
from email.message import EmailMessage
from functools import partial

from django.core import mail
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse
from django.utils import timezone

from caseloop.audits import audit_vanpools
from caseloop.loop.inbound import process_inbound
from cases.models import Case
from evals.bench_scene import FAR_ZIP, NEAR_ZIP, bench_employee, bench_vanpool, day_shift
from evals.scratch_db import scratch_database
from outreach.models import Message
from poolpatrol.queue import run_inline
from vanpools.models import Employee, Rider, Vanpool

SECRET = "bench:webhook-secret"
# One of each kind of answer a rider gives, in turn.
REPLIES = (
    "How do you measure the distance to the pickup point?",
    "I moved last month, my new address is in the portal now.",
    "OK, thanks for letting me know.",
)
QUIET_LOGGERS = ("poolpatrol.request", "outreach", "agents", "cases", "django-q")


def build_program(count: int) -> list[str]:
    shift = day_shift("DAY")
    vanpools = Vanpool.objects.bulk_create(
        bench_vanpool(f"VP-{i:05d}", f"Bench van {i}") for i in range(count)
    )
    employees = Employee.objects.bulk_create(
        bench_employee(
            f"EMP-{i:06d}",
            first_name=f"Rider{i}",
            last_name="Bench",
            email=f"rider{i}@example.com",
            home_zip=FAR_ZIP if i % 2 else NEAR_ZIP,
            shift=shift,
        )
        for i in range(2 * count)
    )
    Rider.objects.bulk_create(
        Rider(vanpool=vanpools[i // 2], employee=employee, joined=timezone.localdate())
        for i, employee in enumerate(employees)
    )
    return [vanpool.vanpool_id for vanpool in vanpools]


def reply_payload(outbound: Message, text: str, number: int) -> str:
    """Postmark's inbound JSON with "include raw email" on."""
    raw = EmailMessage()
    employee = outbound.employee
    assert employee is not None  # the bench writes to riders only
    raw["From"] = f"{employee.first_name} {employee.last_name} <{employee.email}>"
    raw["To"] = outbound.reply_to
    raw["Subject"] = f"Re: {outbound.subject}"
    raw["Message-ID"] = f"<bench-reply-{number}@mail.example.com>"
    raw["In-Reply-To"] = f"<{outbound.rfc_message_id}>"
    raw.set_content(
        f"{text}\n\n{employee.first_name}\n\nOn Monday you wrote:\n> {outbound.text_body[:200]}"
    )
    return json.dumps(
        {
            "From": employee.email,
            "To": outbound.reply_to,
            "Subject": raw["Subject"],
            "MessageID": f"pm-{number:08d}",
            "Headers": [{"Name": "Return-Path", "Value": f"<{employee.email}>"}],
            "RawEmail": raw.as_string(),
        }
    )


def timed_calls(calls: list[Callable[[], object]]) -> tuple[list[float], list[int], list[object]]:
    """Milliseconds and queries per call, and what each returned."""
    millis, queries, results = [], [], []
    for call in calls:
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            results.append(call())
            millis.append((time.perf_counter() - started) * 1000)
        queries.append(len(captured))
    return millis, queries, results


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Command(BaseCommand):
    help = "Time outreach, the inbound webhook and the reply loop on N synthetic cases."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cases", type=int, default=200)

    def handle(self, *args: object, cases: int, **options: object) -> None:
        if cases < 1:
            raise CommandError("--cases must be at least 1")
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
        with (
            scratch_database(),
            override_settings(
                ALLOWED_HOSTS=["testserver"],
                DEBUG=False,
                EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
                ANYMAIL={"WEBHOOK_SECRET": [SECRET]},
            ),
        ):
            self.run(cases)

    def run(self, cases: int) -> None:
        mail.outbox = []
        vanpool_ids = build_program(cases)
        self.line(f"program: {cases} vanpools, {2 * cases} riders ({cases} too far away)")

        started = time.perf_counter()
        with run_inline():
            audit_vanpools(vanpool_ids)
        seconds = time.perf_counter() - started
        sent = len(mail.outbox)
        self.line(
            f"audit + outreach: {Case.objects.count()} cases, {sent} emails in {seconds:.2f} s "
            f"({sent / seconds:.0f} emails/s, audit included)"
        )
        with run_inline():
            audit_vanpools(vanpool_ids)
        self.line(f"  again: {len(mail.outbox) - sent} more emails (must be 0)")

        outbound = list(
            Message.objects.filter(direction=Message.Direction.OUTBOUND)
            .select_related("employee")
            .order_by("pk")
        )
        payloads = [
            reply_payload(message, REPLIES[i % len(REPLIES)], i)
            for i, message in enumerate(outbound)
        ]
        client = Client()
        auth = "Basic " + base64.b64encode(SECRET.encode()).decode()
        url = reverse("anymail:postmark_inbound_webhook")

        def post(payload: str) -> Callable[[], int]:
            return lambda: (
                client.post(
                    url, payload, content_type="application/json", HTTP_AUTHORIZATION=auth
                ).status_code
            )

        millis, queries, statuses = timed_calls([post(p) for p in payloads])
        self.report("webhook, first delivery", millis, queries, statuses)
        stored = Message.objects.filter(direction=Message.Direction.INBOUND).count()
        millis, queries, statuses = timed_calls([post(p) for p in payloads])
        self.report("webhook, redelivery", millis, queries, statuses)
        after = Message.objects.filter(direction=Message.Direction.INBOUND).count()
        self.line(f"  inbound rows: {stored} after the first, {after} after the redelivery")

        inbound = list(
            Message.objects.filter(direction=Message.Direction.INBOUND).values_list("pk", flat=True)
        )
        emails_before = len(mail.outbox)
        with run_inline():
            millis, queries, results = timed_calls([partial(process_inbound, pk) for pk in inbound])
        self.line(
            f"reply loop: {len(inbound)} replies, median {statistics.median(millis):.1f} ms, "
            f"p95 {percentile(millis, 0.95):.1f} ms, {sum(millis) / 1000:.2f} s in all; "
            f"median {statistics.median(queries):.0f} queries; "
            f"{len(mail.outbox) - emails_before} emails"
        )
        self.line(f"  results: {dict(Counter(str(r) for r in results))}")
        emails_before = len(mail.outbox)
        with run_inline():
            again = [process_inbound(pk) for pk in inbound]
        resent = len(mail.outbox) - emails_before
        self.line(f"  again: {dict(Counter(again))}, {resent} emails (must be 0)")
        case_statuses = Counter(Case.objects.values_list("status", flat=True))
        self.line(f"cases now: {dict(case_statuses)}")
        self.line(f"({connection.vendor}; at {timezone.now():%Y-%m-%d %H:%M})")

    def report(
        self, what: str, millis: list[float], queries: list[int], statuses: list[object]
    ) -> None:
        self.line(
            f"{what}: {len(millis)} calls, median {statistics.median(millis):.1f} ms, "
            f"p95 {percentile(millis, 0.95):.1f} ms, "
            f"median {statistics.median(queries):.0f} queries, status {dict(Counter(statuses))}"
        )

    def line(self, text: str) -> None:
        self.stdout.write(text)
