"""What deciding any review kind shares: the claim, the result, the case waiting again.

``caseloop.decisions`` runs the frame every decision goes through (the
permission, the case lock, the claim's transaction); each kind's module
(``caseloop/kinds/<kind>.py``) says what approving and rejecting it does,
as a ``KindDecision`` found through the registry (``caseloop.kinds``).
"""

import logging
from typing import Any, ClassVar, Generic, TypeVar

from django.contrib.auth.models import User
from django.db import models
from django.utils import timezone

from caseloop.audits import AlreadyDecided
from caseloop.loop.reaudit import has_pending_actions
from cases.kinds import ReviewPayload
from cases.lifecycle import transition
from cases.models import Case, PendingAction
from outreach.models import Message
from poolpatrol.queue import enqueue_inbound_processing

logger = logging.getLogger(__name__)
_M = TypeVar("_M", bound=models.Model)
P = TypeVar("P", bound=ReviewPayload)
Status = Case.Status


class InvalidDecision(ValueError):
    """The decision is missing something or does not fit the action; nothing changed."""


class KindDecision(Generic[P]):
    """How a person's decision on one kind is carried out. One subclass per kind.

    ``approve`` runs inside the decision's transaction, after ``lock_case``
    and ``guard``; it claims the action itself (``claim``) at the point its
    checks allow, so a refused decision changes nothing. ``reject`` runs after
    the frame has claimed the action.
    """

    payload_class: type[P]
    # Where a rejection is refused outright (a ruling has no "reject").
    rejection_refused: ClassVar[str] = ""
    # The emails counted on the card go where the decision sends the first
    # one (``release_repeats``), rather than being read again.
    repeats_follow_the_decision: ClassVar[bool] = False

    def before_deciding(self, action: PendingAction) -> None:
        """Work done before the transaction (a model call must never hold the write lock)."""

    def guard(self, action: PendingAction) -> None:
        """A check that runs after the case lock, before anything is claimed (principle 7)."""

    def approve(
        self, action: PendingAction, ask: P, *, by: User, note: str, edits: dict[str, Any]
    ) -> None:
        raise NotImplementedError

    def reject(self, action: PendingAction, case: Case | None, *, by: User, note: str) -> None:
        """A rejected draft or label: nothing is sent; the case waits again."""
        if case is not None:
            resume_waiting(case, by, f"{action.get_kind_display()} rejected. {note}".strip())

    def release_repeats(
        self, action: PendingAction, repeats: list[Message], *, approved: bool
    ) -> None:
        """The emails counted on the card, once it is decided: read again, in the order they came.

        Clear ones are acted on, and the first that needs a person makes the
        next card. Emails held as a flood stay set aside; the person saw their count.
        """
        for message in repeats:
            if "flood" in message.flags or message.thread_id is None or message.employee_id is None:
                continue
            Message.objects.filter(pk=message.pk).update(
                status=Message.Status.RECEIVED, processed_at=None
            )
            enqueue_inbound_processing(message.pk)


def claim(action: PendingAction, status: str, by: User, note: str) -> None:
    """pending → ``status``, once: AlreadyDecided when another decision (or expiry) got there."""
    claimed = PendingAction.objects.filter(
        pk=action.pk, status=PendingAction.Status.PENDING
    ).update(status=status, decided_by=by, decided_at=timezone.now(), note=note)
    if claimed != 1:
        current = PendingAction.objects.filter(pk=action.pk).values_list("status", flat=True)
        raise AlreadyDecided(f"this action is already {current.first() or 'gone'}")


def row(rows: models.QuerySet[_M], pk: int | None) -> _M:
    """``rows.get(pk=pk)``; an action without that link finds no row, as before."""
    if pk is None:
        return rows.none().get()  # raises the model's DoesNotExist without a query
    return rows.get(pk=pk)


def record_result(action: PendingAction, result: dict[str, Any]) -> None:
    PendingAction.objects.filter(pk=action.pk).update(executed_at=timezone.now(), result=result)


def resume_waiting(case: Case, by: User, note: str) -> None:
    if case.status == Status.HITL_REVIEW and not has_pending_actions(case):
        transition(case, Status.PENDING_REPLY, actor=by, note=note)


def set_aside(message: Message | None, why: str) -> None:
    if message is None:
        return
    message.status = Message.Status.SET_ASIDE
    message.flags = [*message.flags, "dismissed"]
    message.save(update_fields=["status", "flags"])
    logger.info("%s set aside: %s", message.message_id, why)
