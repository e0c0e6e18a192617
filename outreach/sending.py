"""Outbound email: one outbox row per (case, rider, purpose), sent by exactly one worker.

``queue_email`` writes the Message row (keyed by an idempotency key, so a
retried task finds the row instead of adding a second) and enqueues the send
once the transaction commits. ``send_message`` claims the row with a
conditional update (queued → sending) before talking to the provider: a
second delivery of the same task finds nothing to claim and sends nothing.
A failed send is recorded and retried with backoff up to
``EMAIL_SEND_MAX_ATTEMPTS``; the last failure flags the case.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import make_msgid

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from cases.lifecycle import flag_case
from outreach.answer_page import choices_for, issue_link
from outreach.compose import INITIAL_TEMPLATES, RenderedEmail, render_email, rider_facts
from outreach.models import EmailThread, Message, RiderReplyToken
from outreach.rider_language import rider_language
from poolpatrol.queue import enqueue_send
from vanpools.models import Employee

# The emails that ask the rider to act carry the answer page's link (plain, and buttons in HTML).
ASKS_TO_ACT = frozenset({*INITIAL_TEMPLATES.values(), "reminder"})

logger = logging.getLogger(__name__)

AGENT = "outreach"
# A claim older than this means the worker died mid-send: we cannot know
# whether the provider accepted it, so a person decides instead of a retry.
STUCK_SENDING_AFTER = timedelta(minutes=30)

Status = Message.Status


@dataclass(frozen=True)
class Threading:
    """In-Reply-To / References for a message that answers an earlier one."""

    in_reply_to: str = ""
    references: tuple[str, ...] = ()


def reply_address(thread: EmailThread, employee: Employee | None = None) -> str:
    """The address a reply comes back to: the rider's own on this thread, when one is named.

    The thread's shared token is only for mail not written to one rider; a
    rider's own token lets inbound tell that a reply from another address is
    not theirs (a co-rider, or whoever they forwarded the email to).
    """
    token = thread.reply_token if employee is None else rider_reply_token(thread, employee)
    return f"{settings.INBOUND_LOCAL_PREFIX}+{token}@{settings.INBOUND_DOMAIN}"


def rider_reply_token(thread: EmailThread, employee: Employee) -> str:
    """The rider's own token on the thread, made on first use (once, whoever races)."""
    token, _ = RiderReplyToken.objects.get_or_create(thread=thread, employee=employee)
    return token.token


def new_rfc_message_id() -> str:
    return make_msgid(domain=settings.INBOUND_DOMAIN).strip("<>")


def coordinator_copy(thread: EmailThread) -> list[str]:
    if not settings.OUTREACH_COPY_COORDINATOR:
        return []
    coordinator = thread.case.vanpool.coordinator
    return [coordinator.email] if coordinator and coordinator.email else []


def queue_template(
    thread: EmailThread,
    employee: Employee,
    template: str,
    *,
    key: str,
    threading: Threading | None = None,
    **extra: object,
) -> Message | None:
    """Render ``template`` for one rider and queue it; None if the address bounced.

    Written in the rider's language (``outreach.rider_language``) unless
    ``lang`` names one.
    """
    existing = Message.objects.filter(idempotency_key=key).first()
    if existing:
        return existing
    lang = str(extra.pop("lang", "") or rider_language(employee).code)
    facts = rider_facts(thread.case, employee)
    if template in ASKS_TO_ACT and not employee.email_undeliverable_at:
        # A link of its own in each email that asks the rider to act; only its hash is kept.
        extra.setdefault("answer_url", issue_link(thread, employee))
        extra.setdefault("answer_choices", choices_for(facts.failed_checks))
    rendered = render_email(template, facts, lang=lang, **extra)
    return queue_email(
        thread, employee, rendered, template=template, key=key, threading=threading, language=lang
    )


def queue_email(
    thread: EmailThread,
    employee: Employee,
    rendered: RenderedEmail,
    *,
    template: str,
    key: str,
    threading: Threading | None = None,
    language: str = "",
) -> Message | None:
    """Store the outbox row for one rider (once per key) and send it after commit."""
    if employee.email_undeliverable_at:
        logger.info("not writing to %s: address bounced", employee.employee_id)
        return None
    threading = threading or _thread_references(thread, employee)
    try:
        with transaction.atomic():
            message, created = Message.objects.get_or_create(
                idempotency_key=key,
                defaults={
                    "thread": thread,
                    "direction": Message.Direction.OUTBOUND,
                    "employee": employee,
                    "template": template,
                    "language": language,
                    "from_email": settings.OUTREACH_FROM_EMAIL,
                    "to": [employee.email],
                    "cc": coordinator_copy(thread),
                    "reply_to": reply_address(thread, employee),
                    "subject": rendered.subject,
                    "text_body": rendered.text,
                    "html_body": rendered.html,
                    "in_reply_to": threading.in_reply_to,
                    "references": " ".join(threading.references),
                    "rfc_message_id": new_rfc_message_id(),
                    "status": Status.QUEUED,
                },
            )
    except IntegrityError:  # a concurrent worker queued the same key first
        return Message.objects.get(idempotency_key=key)
    if created:
        enqueue_send(message.pk)
    return message


def _thread_references(thread: EmailThread, employee: Employee) -> Threading:
    """Follow-ups to a rider thread under our first message to them."""
    first = (
        Message.objects.filter(
            thread=thread, employee=employee, direction=Message.Direction.OUTBOUND
        )
        .order_by("created_at", "id")
        .values_list("rfc_message_id", flat=True)
        .first()
    )
    if not first:
        return Threading()
    return Threading(in_reply_to=first, references=(first,))


def answer_threading(inbound: Message) -> Threading:
    """Threading for a reply to ``inbound``: its references plus its own id."""
    references = [ref for ref in inbound.references.split() if ref][:9]
    if inbound.rfc_message_id:
        references.append(inbound.rfc_message_id)
    return Threading(in_reply_to=inbound.rfc_message_id, references=tuple(references))


def send_message(message_pk: int) -> str:
    """Send one queued message; returns what happened (sent, failed, skipped)."""
    claimed = Message.objects.filter(
        pk=message_pk, direction=Message.Direction.OUTBOUND, status=Status.QUEUED
    ).update(status=Status.SENDING, attempts=F("attempts") + 1, next_attempt_at=timezone.now())
    if claimed != 1:
        logger.info("message %s not queued: nothing to send", message_pk)
        return "skipped"
    message = Message.objects.select_related("thread__case").get(pk=message_pk)
    email = build_email(message)
    try:
        email.send()
    except Exception as exc:  # any provider or network failure: record it, retry later
        return _record_failure(message, exc)
    provider_id = _provider_message_id(email)
    Message.objects.filter(pk=message.pk).update(
        status=Status.SENT,
        sent_at=timezone.now(),
        provider_message_id=provider_id,
        next_attempt_at=None,
        last_error="",
    )
    logger.info("sent %s to %s", message.message_id, ", ".join(message.to))
    return "sent"


# Templates the reply loop sends on its own in answer to a rider's email.
AUTOMATIC_ANSWERS = frozenset({"answer", "still_shows", "resolved"})


def build_email(message: Message) -> EmailMultiAlternatives:
    headers = {"Message-ID": f"<{message.rfc_message_id}>"}
    if message.in_reply_to:
        headers["In-Reply-To"] = f"<{message.in_reply_to}>"
    if message.references:
        headers["References"] = " ".join(f"<{ref}>" for ref in message.references.split())
    # Tell well-behaved auto-responders not to answer (RFC 3834 / Microsoft).
    headers["X-Auto-Response-Suppress"] = "OOF, AutoReply"
    if message.template in AUTOMATIC_ANSWERS:
        # Written by the loop in answer to a rider's email with no person in
        # between (RFC 3834): their auto-responder must not answer it back.
        headers["Auto-Submitted"] = "auto-replied"
    email = EmailMultiAlternatives(
        subject=message.subject,
        body=message.text_body,
        from_email=message.from_email,
        to=message.to,
        cc=message.cc,
        reply_to=[message.reply_to] if message.reply_to else None,
        headers=headers,
    )
    if message.html_body:
        email.attach_alternative(message.html_body, "text/html")
    return email


def _provider_message_id(email: EmailMultiAlternatives) -> str:
    # anymail backends report the ESP's id; Django's own backends have none.
    status = getattr(email, "anymail_status", None)
    provider_id = getattr(status, "message_id", None) if status else None
    return str(provider_id) if provider_id else ""


def _record_failure(message: Message, exc: Exception) -> str:
    error = f"{type(exc).__name__}: {exc}"[:2000]
    attempts = message.attempts  # already counted by the claim
    final = attempts >= settings.EMAIL_SEND_MAX_ATTEMPTS
    retry_at = None if final else timezone.now() + _backoff(attempts)
    Message.objects.filter(pk=message.pk).update(
        status=Status.FAILED, last_error=error, next_attempt_at=retry_at
    )
    logger.warning(
        "send of %s failed (attempt %s/%s): %s",
        message.message_id,
        attempts,
        settings.EMAIL_SEND_MAX_ATTEMPTS,
        error,
    )
    # The message row shows every failure; the case is flagged once retries are spent.
    if final and message.thread is not None:
        flag_case(
            message.thread.case,
            actor=AGENT,
            flag=f"send_failed:{message.message_id}",
            note=(
                f"Email {message.message_id} to {', '.join(message.to)} could not be sent "
                f"after {attempts} attempts ({error})."
            ),
            data={"message_id": message.message_id, "attempts": attempts},
        )
    return "failed"


def _backoff(attempts: int) -> timedelta:
    return timedelta(seconds=settings.EMAIL_RETRY_BASE_SECONDS * 2 ** (attempts - 1))


def retry_due_sends(now: datetime | None = None) -> int:
    """Re-queue failed sends whose backoff has passed (the sweep calls this)."""
    now = now or timezone.now()
    due = list(
        Message.objects.filter(
            direction=Message.Direction.OUTBOUND,
            status=Status.FAILED,
            next_attempt_at__isnull=False,
            next_attempt_at__lte=now,
        ).values_list("pk", flat=True)
    )
    requeued = 0
    for pk in due:
        if Message.objects.filter(pk=pk, status=Status.FAILED).update(status=Status.QUEUED):
            enqueue_send(pk)
            requeued += 1
    return requeued


def fail_stuck_sends(now: datetime | None = None) -> int:
    """A send claimed long ago and never finished: fail it for a person to check.

    Not retried: the provider may have accepted it before the worker died,
    and a rider must never get the same email twice.
    """
    now = now or timezone.now()
    stuck = Message.objects.filter(
        direction=Message.Direction.OUTBOUND,
        status=Status.SENDING,
        next_attempt_at__lte=now - STUCK_SENDING_AFTER,
    ).select_related("thread__case")
    count = 0
    for message in stuck:
        updated = Message.objects.filter(pk=message.pk, status=Status.SENDING).update(
            status=Status.FAILED,
            next_attempt_at=None,
            last_error="the worker stopped mid-send; not retried to avoid a duplicate",
        )
        if updated and message.thread is not None:
            flag_case(
                message.thread.case,
                actor=AGENT,
                flag=f"send_failed:{message.message_id}",
                note=f"Email {message.message_id} may not have been sent; check and resend.",
                data={"message_id": message.message_id},
            )
        count += updated
    return count
