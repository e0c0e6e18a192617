"""Deciding match_inbound: put the email on the thread a person names, or set it aside.

A message we could not read may not say who sent it: the person who read it
names the rider when they can, and the case is told either way. The sender's
later emails counted on the card follow its decision.
"""

from typing import Any, ClassVar

from django.contrib.auth.models import User
from django.utils import timezone

from caseloop.kinds.base import (
    InvalidDecision,
    KindDecision,
    claim,
    record_result,
    row,
    set_aside,
)
from cases.kinds import MatchInbound
from cases.lifecycle import record_event
from cases.models import Case, PendingAction
from outreach.models import EmailThread, Message
from poolpatrol.queue import enqueue_inbound_processing
from vanpools.models import Employee

Status = Case.Status


class MatchInboundDecision(KindDecision[MatchInbound]):
    payload_class = MatchInbound
    # The card's later emails are the same sender's: they go where the first one went.
    repeats_follow_the_decision: ClassVar[bool] = True

    def approve(
        self,
        action: PendingAction,
        ask: MatchInbound,
        *,
        by: User,
        note: str,
        edits: dict[str, Any],
    ) -> None:
        """``edits["thread"]`` (THREAD-…) and, when the sender is not on file, ``employee_id``."""
        message = row(Message.objects.all(), action.message_id)
        thread = _thread_from(edits.get("thread") or (message.thread and message.thread.thread_id))
        quarantined = message.status == Message.Status.QUARANTINED
        employee = _rider_of(
            thread.case, edits.get("employee_id"), message, required=not quarantined
        )
        claim(action, PendingAction.Status.APPROVED, by, note)
        message.thread = thread
        message.employee = employee
        message.flags = [f for f in message.flags if f not in ("unmatched", "unknown_sender")]
        message.save(update_fields=["thread", "employee", "flags"])
        if quarantined:
            _read_by_a_person(message)
        employee_id = employee.employee_id if employee is not None else ""
        sender = message.from_email or "an unreadable sender"
        record_event(
            thread.case,
            actor=by,
            note=f"{message.message_id} from {sender} matched to this case by hand"
            + (" (a person read the quarantined message)" if quarantined else ""),
            data={"message_id": message.message_id, "employee_id": employee_id},
        )
        if message.kind == Message.Kind.REPLY and message.status == Message.Status.RECEIVED:
            enqueue_inbound_processing(message.pk)
        record_result(action, {"thread": thread.thread_id, "employee_id": employee_id})

    def reject(self, action: PendingAction, case: Case | None, *, by: User, note: str) -> None:
        set_aside(action.message, "a person found it belongs to no case")

    def release_repeats(
        self, action: PendingAction, repeats: list[Message], *, approved: bool
    ) -> None:
        """An unknown sender's later emails: matched to the same thread, or set aside with it."""
        if not approved:
            for message in repeats:
                set_aside(message, "a person found its sender's first email belongs to no case")
            return
        matched = row(Message.objects.all(), action.message_id)
        for message in repeats:
            message.thread_id, message.employee_id = matched.thread_id, matched.employee_id
            message.flags = [f for f in message.flags if f not in ("unmatched", "unknown_sender")]
            message.save(update_fields=["thread", "employee", "flags"])
            if message.status == Message.Status.QUARANTINED:
                _read_by_a_person(message)
            if message.kind == Message.Kind.REPLY and message.status == Message.Status.RECEIVED:
                enqueue_inbound_processing(message.pk)


def _read_by_a_person(message: Message) -> None:
    """A quarantined message a person has read: it no longer holds a cancellation."""
    Message.objects.filter(pk=message.pk, status=Message.Status.QUARANTINED).update(
        status=Message.Status.PROCESSED,
        processed_at=timezone.now(),
        flags=[*message.flags, "read_by_person"],
    )


def _thread_from(thread_id: object) -> EmailThread:
    if not thread_id:
        raise InvalidDecision("choose the thread (THREAD-…) this message belongs to")
    thread_id = str(thread_id)
    if "\x00" in thread_id:  # PostgreSQL refuses NUL in text: not an ID, not a 500
        raise InvalidDecision("a thread ID cannot contain a NUL character")
    thread = EmailThread.objects.select_related("case").filter(thread_id=thread_id).first()
    if thread is None:
        raise InvalidDecision(f"no thread {thread_id}")
    if thread.case.status == Status.CLOSED:
        raise InvalidDecision(f"{thread.case.case_id} is closed")
    return thread


def _rider_of(
    case: Case, employee_id: object, message: Message, *, required: bool = True
) -> Employee | None:
    riders = Employee.objects.filter(memberships__vanpool_id=case.vanpool_id).distinct()
    if employee_id:
        if "\x00" in str(employee_id):
            raise InvalidDecision("an employee ID cannot contain a NUL character")
        employee = riders.filter(employee_id=str(employee_id)).first()
    elif message.from_email:
        employee = riders.filter(email__iexact=message.from_email).first()
    else:
        employee = None
    if employee is None and (required or employee_id):
        raise InvalidDecision(
            f"say which rider of {case.vanpool.vanpool_id} wrote this (employee_id)"
        )
    return employee
