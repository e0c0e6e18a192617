"""The rider's answer page: one link per rider per case, the choices that fit, the answer stored.

A link's token is 160 random bits, in the email only; the database keeps its
SHA-256 (``AnswerLink``). A link names one rider on one case and stops working
when the case closes. Opening the page reads and never writes (mail scanners
follow every link); an answer is a POST with Django's CSRF token, stored as an
inbound reply on the case's thread — the same row, the same lock and the same
task as a reply by email (``outreach.inbound``), so the reply loop, the guard
against cancelling over an unread reply and every rule about replies see it.

The choices are data (``CHOICES``): what each says, which findings it fits,
whether it takes the rider's words or a date, and how the loop reads it
(``caseloop.loop.reading.answer_reading``).
"""

import datetime as dt
import hashlib
import logging
import secrets
from dataclasses import dataclass
from typing import Literal

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from cases.lifecycle import lock_case
from cases.models import Case
from outreach.models import AnswerLink, EmailThread, Message
from poolpatrol.queue import enqueue_inbound_processing
from poolpatrol.write_lock import one_writer_at_a_time
from vanpools.models import Employee

logger = logging.getLogger(__name__)

Fits = Literal["location", "shift", "ridership", "parking", "any"]
# What the loop does with a choice (caseloop.loop.reading.answer_reading):
# "recheck" re-audits the failed checks now; "read" reads the rider's words as
# a reply; "question" answers them; "person" asks a person; "escalate" drafts a
# holding reply for a person to send; "give_up_seat" proposes ending the seat
# at the rider's own request, for a person to approve.
Route = Literal["recheck", "read", "question", "person", "escalate", "give_up_seat"]
TOKEN_BYTES = 20


@dataclass(frozen=True)
class Choice:
    name: str
    label: str | Promise
    fits: Fits
    route: Route
    takes_text: bool = False
    needs_text: bool = False
    takes_date: bool = False


CHOICES: tuple[Choice, ...] = (
    Choice("address_updated", _("I've updated my home address with HR"), "location", "recheck"),
    Choice(
        "address_right",
        _("My address on record is right — let me explain"),
        "location",
        "read",
        takes_text=True,
        needs_text=True,
    ),
    Choice(
        "staying_elsewhere",
        _("I'm staying somewhere else for a while"),
        "location",
        "person",
        takes_text=True,
        takes_date=True,
    ),
    Choice("shift_updated", _("HR has my new shift"), "shift", "recheck"),
    Choice(
        "on_leave", _("I'm on leave until…"), "shift", "person", takes_text=True, takes_date=True
    ),
    # The gate or the trip log can miss a rider who is aboard: only a person can hear that out.
    Choice(
        "rides_not_recorded",
        _("I ride but don't always badge in"),
        "ridership",
        "person",
        takes_text=True,
    ),
    Choice("permit_returned", _("I've returned my parking permit"), "parking", "recheck"),
    Choice("give_up_seat", _("I don't need my seat any more"), "any", "give_up_seat"),
    Choice("question", _("I have a question"), "any", "question", takes_text=True, needs_text=True),
    Choice("talk_to_person", _("I'd like to talk to a person"), "any", "escalate", takes_text=True),
    Choice("not_me", _("This isn't me / wrong person"), "any", "person", takes_text=True),
)
BY_NAME: dict[str, Choice] = {choice.name: choice for choice in CHOICES}
TEXT_LIMIT = 4000


def choices_for(failed_checks: tuple[str, ...] | list[str]) -> list[Choice]:
    """The choices that fit a rider's findings, in the page's order; the always-present last."""
    return [c for c in CHOICES if c.fits == "any" or c.fits in failed_checks]


# --- Links -----------------------------------------------------------------------------------


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue_link(thread: EmailThread, employee: Employee) -> str:
    """A new link for this rider on this case: its absolute URL. Only the hash is stored."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    AnswerLink.objects.create(thread=thread, employee=employee, token_sha256=token_hash(token))
    path = reverse("answer-page", args=[thread.case.case_id, token])
    return settings.PUBLIC_BASE_URL.rstrip("/") + path


class Refused(Exception):
    """A link that cannot answer: why, for the page that says what to do."""

    def __init__(self, why: Literal["unknown", "closed", "expired"], status: int) -> None:
        super().__init__(why)
        self.why = why
        self.status = status


def open_link(case_id: str, token: str) -> AnswerLink:
    """The link for this token on this case, or ``Refused``. Reads only.

    A forged token, or one given for another case, is "unknown" (404: the
    page cannot tell which rider it is, so it says nothing about any case);
    a case that closed, or a link older than ``ANSWER_LINK_DAYS``, is
    "closed"/"expired" (410).
    """
    if not token or len(token) > 64:
        raise Refused("unknown", 404)
    link = (
        AnswerLink.objects.select_related("thread__case__vanpool", "employee__shift")
        .filter(token_sha256=token_hash(token), thread__case__case_id=case_id)
        .first()
    )
    if link is None:
        raise Refused("unknown", 404)
    if link.thread.case.status == Case.Status.CLOSED:
        raise Refused("closed", 410)
    if timezone.now() - link.created_at > dt.timedelta(days=settings.ANSWER_LINK_DAYS):
        raise Refused("expired", 410)
    return link


def answers_given(link: AnswerLink) -> list[Message]:
    """What this rider answered on the page for this case, oldest first (the latest stands)."""
    return list(
        Message.objects.filter(
            thread_id=link.thread_id, employee_id=link.employee_id, answer_link__isnull=False
        ).order_by("received_at", "pk")
    )


# --- Answering -------------------------------------------------------------------------------


class TooManyAnswers(Exception):
    """More answers through one link within the hour than ``ANSWER_PAGE_HOURLY_LIMIT``."""


@dataclass(frozen=True)
class Answer:
    choice: Choice
    text: str = ""
    until: dt.date | None = None

    def as_text(self) -> str:
        """The answer as the thread shows it: the choice, the date, the rider's words."""
        lines = [str(self.choice.label)]
        if self.until is not None:
            lines.append(str(_("Until: %(date)s")) % {"date": self.until.isoformat()})
        if self.text.strip():
            lines += ["", self.text.strip()]
        return "\n".join(lines)


def store_answer(case_id: str, token: str, answer: Answer) -> Message:
    """Store the answer as the rider's reply on the thread and queue it for the loop.

    Inside one transaction, after the case's lock (as an inbound reply takes it,
    before the row exists): the link is looked up again there, so a case that
    closed meanwhile refuses, and an approval either committed first or sees
    this reply unread. The rate limit counts under the same lock.
    """
    with one_writer_at_a_time(), transaction.atomic():
        link = open_link(case_id, token)
        lock_case(link.thread.case_id)
        link = open_link(case_id, token)  # read again after the lock
        since = timezone.now() - dt.timedelta(hours=1)
        if (
            Message.objects.filter(answer_link=link, received_at__gte=since).count()
            >= settings.ANSWER_PAGE_HOURLY_LIMIT
        ):
            raise TooManyAnswers(link.pk)
        now = timezone.now()
        message = Message.objects.create(
            direction=Message.Direction.INBOUND,
            kind=Message.Kind.REPLY,
            status=Message.Status.RECEIVED,
            thread=link.thread,
            employee=link.employee,
            from_email=link.employee.email,
            to=[],
            subject=str(_("Answer on the answer page")),
            text_body=answer.as_text()[: TEXT_LIMIT + 200],
            answer_link=link,
            answer={
                "choice": answer.choice.name,
                "route": answer.choice.route,
                "until": answer.until.isoformat() if answer.until else "",
                "text": answer.text.strip()[:TEXT_LIMIT],
            },
            flags=["answer_page"],
            received_at=now,
        )
        enqueue_inbound_processing(message.pk)
    logger.info(
        "answer %s stored: %s on %s", message.message_id, answer.choice.name, link.thread.thread_id
    )
    return message
