"""The approve-versus-reply race, replayed against a running server (``bench_race``, its tests).

Each try is one case in pre_cancel with one cancellation waiting. Two
threads are released together: a coordinator approves the cancellation
(``POST /queue/<pk>/decide/``, a real session and CSRF token) and the rider's
reply arrives through the Postmark inbound webhook. Every third try the
"reply" is a delivery the product cannot read, addressed to the case's reply
address, so it is quarantined on the thread. Whichever wins, a seat must
never be cancelled against a reply (or quarantined message) stored before
the approval committed: that is what ``count_against_replies`` counts, from
the rows' own timestamps, which the locks keep in commit order.

The scenes are written by this process into the database the server uses;
point it at a scratch database, never at real data.
"""

import base64
import http.client
import json
import secrets
import threading
import time
from dataclasses import dataclass
from email.message import EmailMessage
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import override_settings
from django.urls import reverse
from django.utils import timezone

from caseloop.audits import audit_vanpool
from caseloop.loop.reaudit import enter_pre_cancel
from caseloop.supervisor.review import review_for_decision
from cases.kinds import CancelMembership
from cases.models import Case, PendingAction
from evals.bench_scene import FAR_ZIP, NEAR_ZIP, bench_employee, bench_vanpool, day_shift
from outreach.models import Message
from poolpatrol.queue import run_inline
from vanpools.models import Rider, Shift

PERMISSIONS = ("cases.view_case", "cases.decide_pendingaction")
POSTMARK_INBOUND = "/anymail/postmark/inbound/"


@dataclass(frozen=True)
class Scene:
    action_pk: int
    case_pk: int
    payload: str  # the rider's reply, as Postmark posts it


@dataclass(frozen=True)
class Outcome:
    approve_status: int
    reply_status: int


def build_scenes(count: int, run: str) -> list[Scene]:
    """``count`` cases in pre_cancel, each with one cancellation waiting and its review made."""
    shift = day_shift("RACE-DAY")
    scenes = []
    # Outreach is queued and sent in this process, to nobody: the server's
    # backend is not involved, and nothing leaves the machine.
    with override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"):
        for n in range(count):
            scenes.append(_scene(shift, run, n))
    return scenes


def _scene(shift: Shift, run: str, n: int) -> Scene:
    vanpool = bench_vanpool(f"VP-R{run}{n:04d}"[:20], f"Race van {n}")
    vanpool.save()
    for role, zip_code in (("n", NEAR_ZIP), ("f", FAR_ZIP)):
        employee = bench_employee(
            f"E-R{run}{n:04d}{role}"[:20],
            first_name=f"Rider{n}{role}",
            last_name="Race",
            email=f"race-{run}-{n}-{role}@example.com",
            home_zip=zip_code,
            shift=shift,
        )
        employee.save()
        Rider.objects.create(vanpool=vanpool, employee=employee, joined=timezone.localdate())
    with run_inline():
        audit_vanpool(vanpool.vanpool_id)
        case = enter_pre_cancel(
            Case.objects.exclude(status=Case.Status.CLOSED).get(vanpool=vanpool), why="race bench"
        )
        review_for_decision(case)
    action = PendingAction.objects.of(CancelMembership).get(case=case)
    outbound = Message.objects.filter(
        thread__case=case, direction=Message.Direction.OUTBOUND, employee__isnull=False
    ).first()
    assert outbound is not None and outbound.employee is not None  # the audit wrote to them
    quarantined = n % 3 == 2
    payload = _poison(outbound, run, n) if quarantined else _reply(outbound, run, n)
    return Scene(action.pk, case.pk, payload)


def _reply(outbound: Message, run: str, n: int) -> str:
    """Postmark's inbound JSON with "include raw email" on: the rider asks to keep the seat."""
    employee = outbound.employee
    assert employee is not None
    raw = EmailMessage()
    raw["From"] = f"{employee.first_name} Race <{employee.email}>"
    raw["To"] = outbound.reply_to
    raw["Subject"] = f"Re: {outbound.subject}"
    raw["Message-ID"] = f"<race-{run}-{n}@mail.example.com>"
    raw["In-Reply-To"] = f"<{outbound.rfc_message_id}>"
    raw.set_content("Please do NOT cancel my seat, I moved back near the pickup.")
    return json.dumps(
        {
            "From": employee.email,
            "To": outbound.reply_to,
            "Subject": raw["Subject"],
            "MessageID": f"race-{run}-{n}",
            "Headers": [],
            "RawEmail": raw.as_string(),
        }
    )


def _poison(outbound: Message, run: str, n: int) -> str:
    """A parsed delivery to the case's reply address that anymail cannot read (an attachment
    without a type): the product quarantines it on the case's thread."""
    employee = outbound.employee
    assert employee is not None
    return json.dumps(
        {
            "From": employee.email,
            "FromFull": {"Email": employee.email, "Name": employee.first_name},
            "To": outbound.reply_to,
            "ToFull": [{"Email": outbound.reply_to, "Name": ""}],
            "Subject": "Re: Please do NOT cancel my seat",
            "MessageID": f"race-{run}-{n}",
            "TextBody": "Please do NOT cancel my seat.",
            "Headers": [],
            "Attachments": [{"Name": "proof-of-address.pdf"}],
        }
    )


def coordinator_cookies(run: str) -> dict[str, str]:
    """A coordinator's session and CSRF cookies, made in the database the server reads."""
    user = get_user_model().objects.create_user(
        username=f"race-coordinator-{run}", password=secrets.token_urlsafe(24), is_staff=True
    )
    for name in PERMISSIONS:
        app_label, codename = name.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    client = Client()
    client.force_login(user)
    return {
        settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value,
        settings.CSRF_COOKIE_NAME: secrets.token_hex(16),  # 32 characters, as Django's own
    }


def race(base_url: str, secret: str, scenes: list[Scene], cookies: dict[str, str]) -> list[Outcome]:
    """Release each scene's approval and reply together; the HTTP answers, in order."""
    parts = urlsplit(base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    cookie = "; ".join(f"{name}={value}" for name, value in cookies.items())
    csrf = cookies[settings.CSRF_COOKIE_NAME]
    auth = "Basic " + base64.b64encode(secret.encode()).decode()
    outcomes = []
    for n, scene in enumerate(scenes):
        approve = (
            "POST",
            reverse("action-decide", args=[scene.action_pk]),
            urlencode({"decision": "approve", "confirm": "on", "override": "on",
                       "note": "Lives too far from the pickup (race bench)."}),
            {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie,
             "X-CSRFToken": csrf, "HX-Request": "true"},
        )  # fmt: skip
        reply = (
            "POST",
            POSTMARK_INBOUND,
            scene.payload,
            {"Content-Type": "application/json", "Authorization": auth},
        )
        # The reply sets off 0–90 ms after the approval (an approval's request
        # does more before its transaction than a delivery does), so that over
        # the tries each wins, and they overlap, some of the time.
        lead = 0.015 * (n % 7)
        answers = _together(host, port, [(approve, 0.0), (reply, lead)])
        outcomes.append(Outcome(*answers))
    return outcomes


def _together(host: str, port: int, requests: list[tuple[tuple, float]]) -> list[int]:
    """Send each request from its own thread, released by one barrier; their statuses."""
    barrier = threading.Barrier(len(requests))
    statuses = [0] * len(requests)

    def send(i: int, request: tuple, delay: float) -> None:
        method, path, body, headers = request
        connection = http.client.HTTPConnection(host, port, timeout=120)
        try:
            connection.connect()  # connected before the barrier: only the request races
            barrier.wait(timeout=60)
            if delay:
                time.sleep(delay)
            connection.request(method, path, body.encode(), headers)
            response = connection.getresponse()
            response.read()
            statuses[i] = response.status
        finally:
            connection.close()

    threads = [
        threading.Thread(target=send, args=(i, request, delay))
        for i, (request, delay) in enumerate(requests)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    return statuses


def count_against_replies(scenes: list[Scene]) -> int:
    """Cancellations approved although a reply or quarantined message came first.

    "Came first": stored on the case's thread after the proposal and before
    the approval's claim. Both timestamps are taken after the case's lock,
    so their order is the order the two transactions committed in.
    """
    against = 0
    for scene in scenes:
        action = PendingAction.objects.get(pk=scene.action_pk)
        if action.status != PendingAction.Status.APPROVED or action.decided_at is None:
            continue
        earlier = Message.objects.filter(
            thread__case_id=scene.case_pk,
            direction=Message.Direction.INBOUND,
            received_at__gt=action.created_at,
            received_at__lt=action.decided_at,
        )
        if earlier.exists():
            against += 1
    return against


def tally(scenes: list[Scene]) -> dict[str, int]:
    """How the tries ended: approved (seat cancelled), refused or withdrawn."""
    counts: dict[str, int] = {}
    for status in PendingAction.objects.filter(pk__in=[s.action_pk for s in scenes]).values_list(
        "status", flat=True
    ):
        counts[status] = counts.get(status, 0) + 1
    return counts


def database_label() -> str:
    return "PostgreSQL" if connection.vendor == "postgresql" else connection.vendor


__all__ = [
    "Outcome",
    "Scene",
    "build_scenes",
    "coordinator_cookies",
    "count_against_replies",
    "database_label",
    "race",
    "tally",
]
