"""What deciding any review kind shares: the claim, the result, the case waiting again.

``caseloop.decisions`` runs the frame every decision goes through (the
permission, the case lock, the claim's transaction); each kind's module
(``caseloop/kinds/<kind>.py``) says what approving and rejecting it does,
as a ``KindDecision`` found through the registry (``caseloop.kinds``).
"""

import logging
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

from django.contrib.auth.models import User
from django.db import models
from django.utils import timezone
from pydantic import BaseModel, ConfigDict, field_validator

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


class KindEdits(BaseModel):
    """What a reviewer may change or supply when approving one kind; this base: nothing.

    Each kind with edits subclasses it beside its decision; the API checks an
    approval's ``edits`` with the action's kind's class and its schema lists
    each class. Every field is optional but never null and holds no NUL; keys a
    kind does not read are dropped, as they always were.
    """

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True, frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _given(cls, value: object) -> object:
        if value is None:
            raise ValueError("may not be null")
        if isinstance(value, str) and "\x00" in value:  # no database column takes a NUL
            raise ValueError("Null characters are not allowed.")
        return value

    def given(self) -> dict[str, Any]:
        """The edits the reviewer gave, as the decision reads them."""
        return self.model_dump(exclude_unset=True)


Decision = Literal["approve", "reject"]
# Every kind's list ends with this: a reason the list lacks, said in the note.
OTHER = "other"


@dataclass(frozen=True)
class Reason:
    """Why a person decided a card: one entry of its kind's short list, kept and counted."""

    code: str
    label: str
    decision: Decision


def other_reason(decision: Decision) -> Reason:
    return Reason(OTHER, "Other (say why in the note)", decision)


class KindDecision(Generic[P]):
    """How a person's decision on one kind is carried out. One subclass per kind.

    ``approve`` runs inside the decision's transaction, after ``lock_case``
    and ``guard``; it claims the action itself (``claim``) at the point its
    checks allow, so a refused decision changes nothing. ``reject`` runs after
    the frame has claimed the action.
    """

    payload_class: type[P]
    # What approving it takes from a reviewer (the API checks and documents it).
    edits_class: ClassVar[type[KindEdits]] = KindEdits
    # Where a rejection is refused outright (a ruling has no "reject").
    rejection_refused: ClassVar[str] = ""
    # The emails counted on the card go where the decision sends the first
    # one (``release_repeats``), rather than being read again.
    repeats_follow_the_decision: ClassVar[bool] = False
    # Why a person approves or rejects this kind: its short list (``other`` is added).
    reasons: ClassVar[tuple[Reason, ...]] = ()

    def reasons_for(self, decision: Decision) -> list[Reason]:
        """The list a person picks from for ``decision``, ``other`` last."""
        own = [reason for reason in self.reasons if reason.decision == decision]
        return [*own, other_reason(decision)]

    def check_reason(self, decision: Decision, code: str, note: str) -> None:
        """A reason must be on the kind's list for that decision; ``other`` needs a note.

        An empty code is allowed (callers from before reasons existed); it is counted as none.
        """
        if not code:
            return
        codes = [reason.code for reason in self.reasons_for(decision)]
        if code not in codes:
            kind = self.payload_class.kind
            raise InvalidDecision(
                f"{code!r} is not a reason to {decision} a {kind}; one of: {', '.join(codes)}"
            )
        if code == OTHER and not note.strip():
            raise InvalidDecision("the reason 'other' needs a note saying why")

    def approvals_needed(self) -> int:
        """How many people must approve before the approval takes effect (four-eyes: 2)."""
        return 1

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
