"""The one place a case is opened or changes status.

Every caller — the case manager, the reply loop, admin actions, the dashboard,
the API — goes through ``open_case`` and ``transition``. Each locks the row,
refuses moves the lifecycle does not allow, and writes a CaseEvent saying who
(a user or an agent), from, to and why.
"""

import datetime as dt
import logging
from typing import Final, TypeAlias, cast

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, models, transaction
from django.db.models import F
from django.utils import timezone

from cases.kinds import CancelMembership, ReviewPayload, kinds_decided_only_in, payload_class
from cases.models import Case, CaseEvent, PendingAction
from poolpatrol.queue import enqueue_lesson_capture
from vanpools.models import Rider, Vanpool

logger = logging.getLogger(__name__)

Status = Case.Status
Outcome = Case.Outcome

# An actor is a staff user or the name of an agent ("case_manager").
Actor: TypeAlias = AbstractBaseUser | str


def reply_deadline_from(now: dt.datetime) -> dt.datetime:
    """The deadline for riders written to (or given more time) at ``now``."""
    return now + dt.timedelta(days=settings.REPLY_WAIT_DAYS)


ALLOWED_MOVES: dict[str, frozenset[str]] = {
    Status.OPEN: frozenset(
        {Status.PENDING_REPLY, Status.HITL_REVIEW, Status.PRE_CANCEL, Status.CLOSED}
    ),
    Status.PENDING_REPLY: frozenset(
        {Status.OPEN, Status.HITL_REVIEW, Status.PRE_CANCEL, Status.CLOSED}
    ),
    Status.HITL_REVIEW: frozenset(
        {Status.OPEN, Status.PENDING_REPLY, Status.PRE_CANCEL, Status.CLOSED}
    ),
    Status.PRE_CANCEL: frozenset({Status.HITL_REVIEW, Status.PENDING_REPLY, Status.CLOSED}),
    Status.CLOSED: frozenset(),  # closed is final; a new finding opens a new case
}


# "Leave the reply deadline as it is" (None clears it).
KEEP: Final = object()


class IllegalTransition(Exception):
    """The lifecycle does not allow this move; nothing was changed."""


def _actor_fields(actor: Actor) -> dict[str, object]:
    if isinstance(actor, str):
        if not actor.strip():
            raise ValueError("an agent actor needs a name")
        return {"actor_agent": actor}
    return {"actor_user": actor}


def _actor_label(actor: Actor) -> str:
    return f"agent:{actor}" if isinstance(actor, str) else actor.get_username()


def lock_case(case_pk: int) -> None:
    """Take the lock every writer of ``case_pk``'s guarded steps takes (docs/design.md).

    Call it first inside the transaction that takes an irreversible step, before
    the guard reads anything: a reply stored, a bounce recorded or a card
    decided on the same case then either committed before (and the guard sees
    it) or waits until this transaction ends. PostgreSQL: the case row
    (``SELECT … FOR UPDATE``). SQLite has one write lock for the database:
    with ``transaction_mode`` IMMEDIATE (settings) the transaction holds it
    from its first statement; a write that changes nothing takes it now
    under any mode, so a deferred transaction cannot read before it.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("lock_case() only means something inside a transaction")
    if connection.vendor == "sqlite":
        Case.objects.filter(pk=case_pk).update(status=F("status"))
    else:
        list(Case.objects.select_for_update().filter(pk=case_pk).values_list("pk", flat=True))


def check_move(from_status: str, to_status: str, outcome: str = "") -> None:
    if to_status not in ALLOWED_MOVES:
        raise IllegalTransition(f"unknown status {to_status!r}")
    if to_status not in ALLOWED_MOVES[from_status]:
        raise IllegalTransition(f"a case cannot move from {from_status} to {to_status}")
    if to_status == Status.CLOSED and outcome not in {o.value for o in Outcome if o.value}:
        raise IllegalTransition("closing a case needs an outcome: resolved, cancelled or dismissed")
    if to_status != Status.CLOSED and outcome:
        raise IllegalTransition("only a closed case has an outcome")


def transition(
    case: Case,
    to_status: str,
    *,
    actor: Actor,
    note: str = "",
    outcome: str = "",
    data: dict | None = None,
    reply_deadline: dt.datetime | object | None = KEEP,
) -> Case:
    """Move ``case`` to ``to_status``; returns the fresh, updated row.

    ``reply_deadline`` sets (or with None clears) the deadline in the same
    locked write; a closed case never keeps one.

    Raises IllegalTransition (and changes nothing) if the move is not allowed
    from the status the row has *now* — which may differ from the caller's copy.
    """
    with transaction.atomic():
        locked = Case.objects.select_for_update().get(pk=case.pk)
        check_move(locked.status, to_status, outcome)
        from_status = locked.status
        locked.status = to_status
        locked.outcome = outcome
        locked.closed_at = timezone.now() if to_status == Status.CLOSED else None
        if reply_deadline is not KEEP:
            locked.reply_deadline = cast("dt.datetime | None", reply_deadline)  # not KEEP
        elif to_status == Status.PENDING_REPLY and locked.reply_deadline is None:
            # A case waiting on riders always has a moment the sweep looks at it
            # again (coming back from pre_cancel, the deadline had been cleared).
            locked.reply_deadline = reply_deadline_from(timezone.now())
        if to_status == Status.CLOSED:
            locked.reply_deadline = None
        meta_updates = {"updated_by": _actor_label(actor)}
        locked.meta = {**locked.meta, **meta_updates}
        locked.save(
            update_fields=[
                "status",
                "outcome",
                "closed_at",
                "reply_deadline",
                "meta",
                "updated_at",
            ]
        )
        if to_status == Status.CLOSED:
            _supersede_pending_actions(locked, f"case closed {outcome}")
        elif to_status != from_status and kinds_decided_only_in(from_status):
            # A kind decided only in the status the case leaves (a cancellation in
            # pre_cancel): one left pending could never be approved, only clutter the queue.
            _supersede_pending_actions(
                locked,
                f"the case moved on to {to_status}",
                kinds=kinds_decided_only_in(from_status),
            )
        CaseEvent.objects.create(
            case=locked,
            from_status=from_status,
            to_status=to_status,
            note=note,
            data=data or {},
            **_actor_fields(actor),
        )
    logger.info(
        "case %s: %s → %s by %s", locked.case_id, from_status, to_status, _actor_label(actor)
    )
    if to_status == Status.CLOSED:
        _capture_lesson_after_commit(locked)
    return locked


def _capture_lesson_after_commit(case: Case) -> None:
    """Knowledge capture (docs/design.md step 10) once the close commits; one lesson per case.

    Queued, not run here: a close must never wait on, or fail because of, it.
    """
    enqueue_lesson_capture(case.pk)


def open_case(
    vanpool: Vanpool,
    *,
    actor: Actor,
    reason: str,
    failed_checks: list[str],
    details: str = "",
    extra_meta: dict | None = None,
) -> tuple[Case, bool]:
    """Return the vanpool's open case, creating it if there is none.

    The database's one-open-case-per-vanpool constraint settles races: if a
    concurrent audit created the case first, that one is returned.
    """
    if reason not in Case.Reason.values:
        raise ValueError(f"unknown case reason {reason!r}")
    existing = Case.objects.filter(vanpool=vanpool).exclude(status=Status.CLOSED).first()
    if existing:
        return existing, False
    label = _actor_label(actor)
    meta = {
        "reason": reason,
        "failed_checks": failed_checks,
        "details": details,
        "opened_by": label,
        "updated_by": label,
        **(extra_meta or {}),
    }
    try:
        with transaction.atomic():
            case = Case.objects.create(vanpool=vanpool, status=Status.OPEN, meta=meta)
            CaseEvent.objects.create(
                case=case,
                from_status="",
                to_status=Status.OPEN,
                note=details,
                data={"reason": reason, "failed_checks": failed_checks},
                **_actor_fields(actor),
            )
    except IntegrityError:
        existing = Case.objects.filter(vanpool=vanpool).exclude(status=Status.CLOSED).first()
        if existing is None:
            raise
        return existing, False
    logger.info("case %s opened for %s (%s) by %s", case.case_id, vanpool.vanpool_id, reason, label)
    return case, True


def _supersede_pending_actions(case: Case, why: str, *, kinds: list[str] | None = None) -> int:
    # Nothing may be approved on a closed case: a late approval must find the
    # action already decided and change nothing.
    pending = PendingAction.objects.filter(case=case, status=PendingAction.Status.PENDING)
    if kinds is not None:
        pending = pending.filter(kind__in=kinds)
    return pending.update(
        status=PendingAction.Status.SUPERSEDED, decided_at=timezone.now(), note=why
    )


def expire_cancellation_proposals(now: dt.datetime, *, actor: Actor) -> list[Case]:
    """Expire cancellations nobody decided within PENDING_ACTION_EXPIRE_DAYS.

    A proposal weeks old rests on evidence as old: approving it would cancel
    a seat on a record that may since have been fixed. Each expired proposal
    is marked ``expired`` (a late approval then finds it decided), and a case
    left with none goes back to waiting with its deadline due now, so the
    sweep re-audits it on today's records: resolved if fixed, proposed again,
    with fresh evidence and a fresh supervisor review, if not.

    Cards that hold a rider's words or a ruling only a person can make never
    expire: dropping them would lose what the rider said.
    Returns the cases moved back to waiting.
    """
    days = settings.PENDING_ACTION_EXPIRE_DAYS
    if not days:
        return []
    cutoff = now - dt.timedelta(days=days)
    stale = PendingAction.objects.of(CancelMembership).filter(
        status=PendingAction.Status.PENDING,
        created_at__lte=cutoff,
        case__isnull=False,
    )
    moved: list[Case] = []
    for case_pk in sorted(set(stale.values_list("case_id", flat=True))):
        case = _expire_on_case(case_pk, cutoff, days, now, actor)
        if case is not None:
            moved.append(case)
    return moved


def _expire_on_case(
    case_pk: int, cutoff: dt.datetime, days: int, now: dt.datetime, actor: Actor
) -> Case | None:
    with transaction.atomic():
        case = Case.objects.select_for_update().get(pk=case_pk)
        pending = PendingAction.objects.of(CancelMembership).filter(
            case=case, status=PendingAction.Status.PENDING
        )
        expired = pending.filter(created_at__lte=cutoff).update(
            status=PendingAction.Status.EXPIRED,
            decided_at=now,
            note=f"not decided within {days} days",
        )
        if not expired:
            return None  # decided (or expired by another sweep) since the query
        note = f"{expired} cancellation proposal(s) expired undecided after {days} days"
        if case.status != Status.PRE_CANCEL or pending.exists():
            record_event(case, actor=actor, note=note, data={"expired": expired})
            return None
        return transition(
            case,
            Status.PENDING_REPLY,
            actor=actor,
            note=f"{note}; the records are checked again now",
            data={"expired": expired},
            reply_deadline=now,
        )


FINDING_KEYS = ("reason", "failed_checks", "details", "rider_flags")


def update_findings(
    case: Case,
    *,
    actor: Actor,
    reason: str,
    failed_checks: list[str],
    details: str,
    rider_flags: dict[str, dict[str, str]],
) -> tuple[Case, bool]:
    """Record a new audit's findings on an open case; returns (case, changed).

    Findings identical to what the case holds change nothing and write no
    event, so re-running an audit is harmless.
    """
    if reason not in Case.Reason.values:
        raise ValueError(f"unknown case reason {reason!r}")
    findings = {
        "reason": reason,
        "failed_checks": failed_checks,
        "details": details,
        "rider_flags": rider_flags,
    }
    with transaction.atomic():
        locked = Case.objects.select_for_update().get(pk=case.pk)
        if locked.status == Status.CLOSED:
            raise IllegalTransition(f"{locked.case_id} is closed; its findings are final")
        if all(locked.meta.get(key) == value for key, value in findings.items()):
            return locked, False
        previous = {key: locked.meta.get(key) for key in FINDING_KEYS}
        locked.meta = {**locked.meta, **findings, "updated_by": _actor_label(actor)}
        locked.save(update_fields=["meta", "updated_at"])
        CaseEvent.objects.create(
            case=locked,
            from_status=locked.status,
            to_status=locked.status,
            note=f"findings updated: {details}",
            data={"previous": previous, "reason": reason, "failed_checks": failed_checks},
            **_actor_fields(actor),
        )
    return locked, True


def flag_case(
    case: Case, *, actor: Actor, flag: str, note: str, data: dict | None = None
) -> tuple[Case, bool]:
    """Add ``flag`` to the case's ``meta["flags"]`` (bounce, send failure, …).

    A flag already present changes nothing and writes no event, so a
    redelivered bounce or a retried task is harmless. The status is unchanged.
    """
    with transaction.atomic():
        locked = Case.objects.select_for_update().get(pk=case.pk)
        flags = list(locked.meta.get("flags", []))
        if flag in flags:
            return locked, False
        locked.meta = {**locked.meta, "flags": [*flags, flag], "updated_by": _actor_label(actor)}
        locked.save(update_fields=["meta", "updated_at"])
        CaseEvent.objects.create(
            case=locked,
            from_status=locked.status,
            to_status=locked.status,
            note=note,
            data={"flag": flag, **(data or {})},
            **_actor_fields(actor),
        )
    logger.info("case %s flagged %s by %s", locked.case_id, flag, _actor_label(actor))
    return locked, True


def request_review(
    case: Case | None,
    payload: ReviewPayload,
    *,
    actor: Actor,
    note: str,
    message: models.Model | None = None,
    rider: Rider | None = None,
    hold_in: str | None = Status.HITL_REVIEW,
    collapse_key: str = "",
) -> tuple[PendingAction, Case | None]:
    """Ask a person: the one place a PendingAction is created.

    The kind is the payload's class (``cases.kinds``); the payload is checked
    as an ask of that kind first, and one that does not fit raises
    InvalidPayload with nothing stored (a kind not in the registry,
    UnknownKind).

    The action waits on the review queue, and the case waits in ``hold_in``
    (``hitl_review`` unless said otherwise), moving there with ``note`` as the
    trail entry's reason. ``hold_in=None`` leaves the case where it is: a card
    about who sent a message, or a case a caller already moved
    (``pre_cancel``). Without a case only the action is created.

    ``collapse_key`` names what makes two asks the same (one sender on one
    case): while a card with that key waits, a new ask is counted on it
    (its ``repeats``, its message listed in ``repeat_messages``) rather
    than becoming another card. One sender sending 200 emails is one card.
    """
    if not isinstance(payload, ReviewPayload):
        raise TypeError(f"request_review takes a review kind's payload, not {type(payload)}")
    kind = payload_class(payload.kind)
    asked = kind.checked_for_asking(payload)
    if collapse_key:
        waiting = _collapse_into(asked.kind, collapse_key, message)
        if waiting is not None:
            return waiting, case
    with transaction.atomic():
        action = PendingAction.objects.create(
            collapse_key=collapse_key[:200],
            kind=asked.kind,
            case=case,
            # cases sits below outreach, so `message` is typed as any model; the FK checks it.
            message=message,  # type: ignore[misc]
            rider=rider,
            payload=asked.stored(),
            requested_by=_actor_label(actor),
        )
        if case is not None and hold_in is not None and case.status != hold_in:
            case = transition(case, hold_in, actor=actor, note=note)
    return action, case


# Beyond this a card still counts repeats; the messages stay on their thread.
REPEATS_LISTED = 200


def _collapse_into(kind: str, key: str, message: models.Model | None) -> PendingAction | None:
    """Count a repeated ask on the card already waiting for it; None when there is none."""
    with transaction.atomic():
        waiting = (
            PendingAction.objects.select_for_update()
            .filter(kind=kind, collapse_key=key[:200], status=PendingAction.Status.PENDING)
            .order_by("created_at", "pk")
            .first()
        )
        if waiting is None:
            return None
        counted = waiting.ask.counted_repeat(
            str(getattr(message, "message_id", "") or ""),
            at=timezone.now(),
            listed_at_most=REPEATS_LISTED,
        )
        waiting.payload = counted.stored()
        waiting.save(update_fields=["payload"])
    logger.info("ask collapsed into action %s (%s): %s", waiting.pk, kind, key)
    return waiting


def record_event(case: Case, *, actor: Actor, note: str, data: dict | None = None) -> CaseEvent:
    """Write a trail entry for something that happened without a status change."""
    return CaseEvent.objects.create(
        case=case,
        from_status=case.status,
        to_status=case.status,
        note=note,
        data=data or {},
        **_actor_fields(actor),
    )


def set_reply_deadline(
    case: Case, deadline: dt.datetime | None, *, actor: Actor, note: str
) -> Case:
    """Move the reply deadline of an open case (a follow-up gives the rider time)."""
    with transaction.atomic():
        locked = Case.objects.select_for_update().get(pk=case.pk)
        if locked.status == Status.CLOSED:
            raise IllegalTransition(f"{locked.case_id} is closed")
        if locked.reply_deadline == deadline:
            return locked
        previous = locked.reply_deadline
        locked.reply_deadline = deadline
        locked.save(update_fields=["reply_deadline", "updated_at"])
        record_event(
            locked,
            actor=actor,
            note=note,
            data={
                "reply_deadline": deadline.isoformat() if deadline else None,
                "previous": previous.isoformat() if previous else None,
            },
        )
    return locked


def claim_expired_deadline(case: Case, now: dt.datetime) -> bool:
    """Take a passed deadline off a waiting case, once: the sweep's claim.

    Two sweeps racing (or django-q2 delivering twice) both try; the
    conditional update lets exactly one of them act on the timeout.
    """
    return (
        Case.objects.filter(
            pk=case.pk,
            status__in=(Status.PENDING_REPLY, Status.HITL_REVIEW),
            reply_deadline__isnull=False,
            reply_deadline__lte=now,
        ).update(reply_deadline=None, updated_at=now)
        == 1
    )


def record_reaudit(case: Case, *, actor: Actor, trigger: str, result: str) -> Case:
    """Count a re-audit on the case (the loop allows settings.MAX_REAUDITS)."""
    with transaction.atomic():
        locked = Case.objects.select_for_update().get(pk=case.pk)
        locked.reaudit_count += 1
        locked.save(update_fields=["reaudit_count", "updated_at"])
        record_event(
            locked,
            actor=actor,
            note=f"re-audit {locked.reaudit_count} ({trigger}): {result}",
            data={"reaudit": locked.reaudit_count, "trigger": trigger, "result": result},
        )
    return locked
