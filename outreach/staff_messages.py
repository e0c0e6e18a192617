"""A staff member writes to a rider on a case's thread.

The message goes through the same outbox as the case loop (``queue_email``):
one Message row per idempotency key, sent after commit by exactly one worker.
A retried request — same writer, rider and text, or the same client-supplied
idempotency key — finds the row it already made instead of sending twice.
"""

import hashlib
import logging
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.html import escape, linebreaks

from cases.lifecycle import record_event
from outreach.compose import RenderedEmail
from outreach.models import EmailThread, Message
from outreach.sending import Threading, answer_threading, queue_email
from outreach.subjects import clean_subject
from vanpools.models import Employee

logger = logging.getLogger(__name__)

TEMPLATE = "staff"


class CannotWrite(ValueError):
    """The rider cannot be written to (not on the van, or the address bounced)."""


@dataclass(frozen=True)
class StaffMessage:
    message: Message
    created: bool


def add_staff_message(
    thread: EmailThread,
    *,
    by: AbstractBaseUser,
    employee: Employee,
    text: str,
    subject: str = "",
    idempotency_key: str = "",
) -> StaffMessage:
    """Queue ``text`` to ``employee`` on ``thread``, once; returns the outbox row."""
    case = thread.case
    if not Employee.objects.filter(
        pk=employee.pk, memberships__vanpool_id=case.vanpool_id
    ).exists():
        raise CannotWrite(f"{employee.employee_id} has no seat on {case.vanpool.vanpool_id}")
    if employee.email_undeliverable_at:
        raise CannotWrite(f"{employee.employee_id}'s address bounced; HR must fix it first")
    text = text.strip()
    # SubjectError (a ValueError) names the subject: a line break would fail every send.
    subject = clean_subject(subject) or clean_subject(f"Re: {thread.subject}")
    key = _key(case.case_id, employee.employee_id, by, subject, text, idempotency_key)
    existing = Message.objects.filter(idempotency_key=key).first()
    if existing:
        return StaffMessage(existing, created=False)
    with transaction.atomic():
        message = queue_email(
            thread,
            employee,
            RenderedEmail(subject=subject, text=text, html=linebreaks(escape(text))),
            template=TEMPLATE,
            key=key,
            threading=_threading(thread, employee),
        )
        if message is None:  # the address bounced between the check and the write
            raise CannotWrite(f"{employee.employee_id}'s address bounced; HR must fix it first")
        record_event(
            case,
            actor=by,
            note=f"{by.get_username()} wrote to {employee.employee_id}: {subject}",
            data={"message_id": message.message_id, "employee_id": employee.employee_id},
        )
    logger.info("%s queued by %s to %s", message.message_id, by.get_username(), employee)
    return StaffMessage(message, created=True)


def _key(
    case_id: str, employee_id: str, by: AbstractBaseUser, subject: str, text: str, given: str
) -> str:
    # Without a client key, the same person sending the same words to the same
    # rider is taken as a retry of one request: a rider never gets it twice.
    basis = f"{by.pk}\nkey\n{given}" if given else f"{by.pk}\ntext\n{subject}\n{text}"
    digest = hashlib.sha256(basis.encode()).hexdigest()[:24]
    return f"{case_id}:staff:{employee_id}:{digest}"


def _threading(thread: EmailThread, employee: Employee) -> Threading | None:
    """Answer the rider's latest reply when there is one; else follow our first letter."""
    latest = (
        Message.objects.filter(
            thread=thread, employee=employee, direction=Message.Direction.INBOUND
        )
        .order_by("-created_at", "-id")
        .first()
    )
    return answer_threading(latest) if latest and latest.rfc_message_id else None
