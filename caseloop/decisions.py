"""A person's decision on a PendingAction: the one place each kind is carried out.

The dashboard, the admin, the API and commands call ``approve`` / ``reject``.
Each claims the action with a conditional update (pending → approved or
rejected) inside the same transaction as its effects: a second approval, or
an approval of an action that was superseded or expired, claims nothing,
raises ``AlreadyDecided`` and changes nothing.

A cancellation is approved only after the supervisor has reviewed the case
(``caseloop.supervisor.review``); when that review failed, approving needs
``edits={"override": true, "override_reason": "…"}``, and the override is
written to the case's trail and the action's result.
"""

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.html import escape, linebreaks

from caseloop.audits import AlreadyDecided, decide_verification
from caseloop.loop.buckets import act_on_bucket
from caseloop.loop.reading import ReplyContext
from caseloop.loop.reaudit import has_pending_actions
from caseloop.loop.writing import thread_for
from caseloop.supervisor.review import review_for_decision
from cases.lifecycle import lock_case, record_event, transition
from cases.models import Case, CaseReview, PendingAction
from outreach.compose import RenderedEmail
from outreach.models import EmailThread, Message
from outreach.sending import answer_threading, queue_email, queue_template
from outreach.subjects import SubjectError, clean_subject
from poolpatrol.queue import enqueue_inbound_processing, enqueue_outreach
from poolpatrol.write_lock import one_writer_at_a_time
from vanpools.models import Employee, Rider
from vanpools.scope import is_scoped, visible

logger = logging.getLogger(__name__)
_M = TypeVar("_M", bound=models.Model)

Kind = PendingAction.Kind
Status = Case.Status
DECIDE_PERMISSION = "cases.decide_pendingaction"
BUCKETS = tuple(b for b in Message.Bucket.values if b)


class InvalidDecision(ValueError):
    """The decision is missing something or does not fit the action; nothing changed."""


class NewerReplyWaiting(AlreadyDecided):
    """The rider wrote after the proposal and the reply is not read yet: a conflict (409)."""


def approve(
    action: PendingAction, *, by: User, note: str = "", edits: dict | None = None
) -> PendingAction:
    """Approve ``action`` (with a reviewer's edits where the kind takes them)."""
    require_decider(by)
    edits = edits or {}
    require_in_scope(by, action, edits)
    if action.kind == Kind.CANCEL_MEMBERSHIP:
        # Ahead of the transaction only so that a model call is never made
        # while holding the write lock; the review is read again inside.
        _review_before_deciding(action)
    handlers: dict[str, Callable[[PendingAction, User, str, dict], None]] = {
        Kind.CANCEL_MEMBERSHIP: _approve_cancellation,
        Kind.REVIEW_EMAIL: _approve_email,
        Kind.LABEL_REPLY: _approve_label,
        Kind.MATCH_INBOUND: _approve_match,
        Kind.DECIDE_VERIFICATION: _approve_verification,
    }
    with one_writer_at_a_time(), transaction.atomic():
        # The guards run here, after the lock the inbound store also takes
        # (docs/design.md, "A guard runs where the step is taken"): a reply
        # stored before this point is seen; one stored after waits for the commit.
        if action.case_id is not None:
            lock_case(action.case_id)
        if action.kind == Kind.CANCEL_MEMBERSHIP:
            _refuse_over_an_unread_reply(action)
        handlers[action.kind](action, by, note, edits)
        _release_repeats(action, approved=True)
    logger.info("action %s (%s) approved by %s", action.pk, action.kind, by.get_username())
    return PendingAction.objects.get(pk=action.pk)


def reject(action: PendingAction, *, by: User, note: str = "") -> PendingAction:
    require_decider(by)
    require_in_scope(by, action, {})
    if action.kind == Kind.DECIDE_VERIFICATION:
        raise InvalidDecision("rule pass or fail for each rider instead of rejecting")
    with one_writer_at_a_time(), transaction.atomic():
        if action.case_id is not None:
            lock_case(action.case_id)
        _claim(action, PendingAction.Status.REJECTED, by, note)
        case = Case.objects.get(pk=action.case_id) if action.case_id else None
        if action.kind == Kind.CANCEL_MEMBERSHIP:
            _dismiss(case, by, note)
        elif action.kind == Kind.MATCH_INBOUND:
            _set_aside(action.message, "a person found it belongs to no case")
        elif case is not None:
            # A rejected draft or label: nothing is sent; the case waits again.
            _resume_waiting(case, by, f"{action.get_kind_display()} rejected. {note}".strip())
        _record_result(action, {"rejected": True})
        _release_repeats(action, approved=False)
    logger.info("action %s (%s) rejected by %s", action.pk, action.kind, by.get_username())
    return PendingAction.objects.get(pk=action.pk)


def _release_repeats(action: PendingAction, *, approved: bool) -> None:
    """The emails counted on a collapsed card, once the card is decided.

    A later reply from the same rider is read again now (in the order it
    came): clear ones are acted on, and the first that needs a person makes
    the next card. Emails held as a flood stay set aside; the person saw
    their count. An unknown sender's later emails follow the card's decision:
    matched to the same thread, or set aside with it.
    """
    ids = action.payload.get("repeat_messages") or []
    if not ids:
        return
    repeats = list(
        Message.objects.filter(message_id__in=ids, direction=Message.Direction.INBOUND).order_by(
            "received_at", "pk"
        )
    )
    if action.kind == Kind.MATCH_INBOUND:
        _follow_the_match(action, repeats, approved)
        return
    for message in repeats:
        if "flood" in message.flags or message.thread_id is None or message.employee_id is None:
            continue
        Message.objects.filter(pk=message.pk).update(
            status=Message.Status.RECEIVED, processed_at=None
        )
        enqueue_inbound_processing(message.pk)


def _follow_the_match(action: PendingAction, repeats: list[Message], approved: bool) -> None:
    if not approved:
        for message in repeats:
            _set_aside(message, "a person found its sender's first email belongs to no case")
        return
    matched = _row(Message.objects.all(), action.message_id)
    for message in repeats:
        message.thread_id, message.employee_id = matched.thread_id, matched.employee_id
        message.flags = [f for f in message.flags if f not in ("unmatched", "unknown_sender")]
        message.save(update_fields=["thread", "employee", "flags"])
        if message.status == Message.Status.QUARANTINED:
            _read_by_a_person(message)
        if message.kind == Message.Kind.REPLY and message.status == Message.Status.RECEIVED:
            enqueue_inbound_processing(message.pk)


def _refuse_over_an_unread_reply(action: PendingAction) -> None:
    """Nothing is cancelled over the rider's newer words that nobody has read yet.

    A reply stored after the proposal but not yet processed by the worker may
    say "don't cancel": the approval waits until it is read (which withdraws
    the proposal and asks a person, see ``caseloop.loop.inbound``). So does any
    message quarantined on the case's thread (one we could not read, addressed
    to its reply address) until a person has decided its card. Runs after
    ``lock_case``, inside the approval's transaction.
    """
    if action.case_id is None:
        return
    # A quarantined message holds whenever it came: nobody has read it, before
    # the proposal or after.
    unread = (
        Message.objects.filter(thread__case_id=action.case_id, direction=Message.Direction.INBOUND)
        .filter(
            Q(kind=Message.Kind.REPLY, processed_at__isnull=True, received_at__gt=action.created_at)
            | Q(status=Message.Status.QUARANTINED)
        )
        .order_by("received_at", "pk")
        .first()
    )
    if unread is None:
        return
    if unread.status == Message.Status.QUARANTINED:
        raise NewerReplyWaiting(
            f"a message ({unread.message_id}) came on this case's thread and could not be "
            "read; a person must look at its card before anything is cancelled"
        )
    raise NewerReplyWaiting(
        f"the rider replied ({unread.message_id}) after this cancellation was proposed and "
        "the reply has not been read yet; try again once it is"
    )


def require_decider(user: User) -> None:
    """Only active staff with the decide permission (Coordinators, Auditors) decide."""
    if not (user.is_active and user.is_staff and user.has_perm(DECIDE_PERMISSION)):
        raise PermissionDenied("deciding pending actions needs the coordinator or auditor role")


def require_in_scope(user: User, action: PendingAction, edits: dict) -> None:
    """Under COORDINATOR_SCOPE=sites a decider decides on their own vanpools only.

    The pages and the API find only such actions (a 404 otherwise); the rule
    holds here too, and for a thread an edit names, which is refused in the
    words an unknown thread is (vanpools/scope.py).
    """
    if not is_scoped(user):
        return
    if not visible(PendingAction.objects.filter(pk=action.pk), user).exists():
        raise PermissionDenied("this action is not about a vanpool you coordinate")
    thread = str(edits.get("thread") or "")
    if "\x00" in thread:  # the kind's own check says so; PostgreSQL would refuse to look
        return
    if thread and not visible(EmailThread.objects.filter(thread_id=thread), user).exists():
        raise InvalidDecision(f"no thread {thread}")


def _claim(action: PendingAction, status: str, by: User, note: str) -> None:
    claimed = PendingAction.objects.filter(
        pk=action.pk, status=PendingAction.Status.PENDING
    ).update(status=status, decided_by=by, decided_at=timezone.now(), note=note)
    if claimed != 1:
        current = PendingAction.objects.filter(pk=action.pk).values_list("status", flat=True)
        raise AlreadyDecided(f"this action is already {current.first() or 'gone'}")


def _row(rows: models.QuerySet[_M], pk: int | None) -> _M:
    """``rows.get(pk=pk)``; an action without that link finds no row, as before."""
    if pk is None:
        return rows.none().get()  # raises the model's DoesNotExist without a query
    return rows.get(pk=pk)


def _record_result(action: PendingAction, result: dict[str, Any]) -> None:
    PendingAction.objects.filter(pk=action.pk).update(executed_at=timezone.now(), result=result)


def _resume_waiting(case: Case, by: User, note: str) -> None:
    if case.status == Status.HITL_REVIEW and not has_pending_actions(case):
        transition(case, Status.PENDING_REPLY, actor=by, note=note)


# --- cancel_membership ---------------------------------------------------------------------


def _approve_cancellation(action: PendingAction, by: User, note: str, edits: dict) -> None:
    _claim(action, PendingAction.Status.APPROVED, by, note)
    case = _row(Case.objects.select_related("vanpool"), action.case_id)
    if case.status != Status.PRE_CANCEL:
        raise InvalidDecision(f"{case.case_id} is {case.status}, not waiting on a cancellation")
    review = review_for_decision(case)
    override = _override_of(review, edits)
    rider = _row(Rider.objects.select_for_update().select_related("employee"), action.rider_id)
    employee = rider.employee
    if override:
        record_event(
            case,
            actor=by,
            note=f"cancellation of {employee.employee_id} approved over a failed supervisor "
            f"review ({review.score}/100): {override['override_reason']}",
            data={
                **override,
                "employee_id": employee.employee_id,
                "action": action.pk,
                "review": review.pk,
                "review_score": review.score,
            },
        )
    if rider.status == Rider.Status.ACTIVE:
        rider.status = Rider.Status.CANCELLED
        rider.cancelled_at = timezone.now()
        rider.cancelled_by = by
        rider.cancel_reason = _cancel_reason(case, action, by, note)
        rider.save(update_fields=["status", "cancelled_at", "cancelled_by", "cancel_reason"])
    record_event(
        case,
        actor=by,
        note=f"seat of {employee.employee_id} on {case.vanpool.vanpool_id} cancelled",
        data={"employee_id": employee.employee_id, "action": action.pk},
    )
    email = queue_template(
        thread_for(case),
        employee,
        "cancelled",
        key=f"{case.case_id}:cancelled:{employee.employee_id}",
    )
    _record_result(
        action,
        {
            "rider_status": rider.status,
            "email": email.message_id if email else None,
            "review": review.pk,
            "review_score": review.score,
            "review_passed": review.passed,
            "override": bool(override),
            **({"override_reason": override["override_reason"]} if override else {}),
        },
    )
    remaining = PendingAction.objects.filter(
        case=case, kind=Kind.CANCEL_MEMBERSHIP, status=PendingAction.Status.PENDING
    )
    if not remaining.exists():
        transition(
            case,
            Status.CLOSED,
            actor=by,
            outcome=Case.Outcome.CANCELLED,
            note="every flagged rider's cancellation was decided",
        )


def _review_before_deciding(action: PendingAction) -> None:
    """Make sure the supervisor has reviewed the case before anyone approves a cancellation.

    Normally the review task ran when the case entered pre_cancel. If it has
    not (yet), the supervisor runs now, in its own transaction: an approval
    refused for want of an override must not roll the review back with it.
    """
    if not PendingAction.objects.filter(pk=action.pk, status=PendingAction.Status.PENDING).exists():
        return  # the claim will say it is already decided
    case = _row(Case.objects.all(), action.case_id)
    if case.status == Status.PRE_CANCEL:
        review_for_decision(case)


OVERRIDE_TRUE = (True, 1, "1", "true", "on", "yes")


def _override_of(review: CaseReview, edits: dict) -> dict[str, Any]:
    """{} when the review passed; else the reviewer's explicit override, or InvalidDecision."""
    if review.passed:
        return {}
    reason = str(edits.get("override_reason") or "").strip()
    if edits.get("override") not in OVERRIDE_TRUE or not reason:
        raise InvalidDecision(
            f"the supervisor's review of this case failed ({review.score}/100: "
            f"{_worst_issues(review)}); approving the cancellation needs an explicit override "
            'with a reason: {"override": true, "override_reason": "…"}'
        )
    return {"override": True, "override_reason": reason}


def _worst_issues(review: CaseReview, limit: int = 2) -> str:
    order = {"high": 0, "medium": 1, "low": 2}
    issues = sorted(review.issues, key=lambda issue: order.get(issue.get("severity"), 3))
    text = "; ".join(issue.get("description", "") for issue in issues[:limit])
    more = len(issues) - limit
    return text + (f" (+{more} more)" if more > 0 else "") if text else "weak justification"


def _cancel_reason(case: Case, action: PendingAction, by: User, note: str) -> str:
    checks = ", ".join(action.payload.get("failed_checks", [])) or case.meta.get("reason", "")
    reason = f"{case.case_id}: {checks} check failed; approved by {by.get_username()}."
    return f"{reason} {note}".strip()


def _dismiss(case: Case | None, by: User, note: str) -> None:
    if case is None or case.status == Status.CLOSED:
        return
    transition(
        case,
        Status.CLOSED,
        actor=by,
        outcome=Case.Outcome.DISMISSED,
        note=f"cancellation rejected: {note}" if note else "cancellation rejected",
    )


# --- review_email --------------------------------------------------------------------------


def _approve_email(action: PendingAction, by: User, note: str, edits: dict) -> None:
    _claim(action, PendingAction.Status.APPROVED, by, note)
    payload = action.payload
    try:
        subject = clean_subject(str(edits.get("subject") or payload["subject"]))
    except SubjectError as exc:  # a line break would fail every send of the holding reply
        raise InvalidDecision(f"subject: {exc}") from None
    text = str(edits.get("text") or payload["text"]).strip()
    if not subject or not text:
        raise InvalidDecision("an email needs a subject and a body")
    edited = subject != payload["subject"] or text != payload["text"].strip()
    # An edited body gets a plain HTML twin: the drafted HTML no longer says the same.
    html = linebreaks(escape(text)) if edited else payload.get("html", "")
    case = _row(Case.objects.all(), action.case_id)
    employee = Employee.objects.get(employee_id=payload["employee_id"])
    threading = answer_threading(action.message) if action.message is not None else None
    email = queue_email(
        thread_for(case),
        employee,
        RenderedEmail(subject=subject, text=text, html=html),
        template=payload.get("template", "reviewed"),
        key=f"{case.case_id}:reviewed:{action.pk}",
        threading=threading,
    )
    _record_result(action, {"edited": edited, "email": email.message_id if email else None})
    _resume_waiting(case, by, "reviewed reply approved and sent")


# --- label_reply ---------------------------------------------------------------------------


def _approve_label(action: PendingAction, by: User, note: str, edits: dict) -> None:
    bucket = edits.get("bucket") or action.payload.get("suggested_bucket")
    if bucket not in BUCKETS:
        raise InvalidDecision(f"label the reply as one of: {', '.join(BUCKETS)}")
    _claim(action, PendingAction.Status.APPROVED, by, note)
    message = _row(Message.objects.select_related("employee"), action.message_id)
    message.bucket = bucket
    message.bucket_confidence = 1.0
    message.classification = {**message.classification, "labelled_by": by.get_username()}
    message.save(update_fields=["bucket", "bucket_confidence", "classification"])
    case = _row(Case.objects.select_related("vanpool"), action.case_id)
    if case.status == Status.CLOSED:
        _record_result(action, {"bucket": bucket, "outcome": "case closed"})
        return
    assert message.employee is not None  # only a known rider's reply is sent for labelling
    outcome = act_on_bucket(ReplyContext(case, message, message.employee), bucket, actor=by)
    _record_result(action, {"bucket": bucket, "outcome": outcome})


# --- match_inbound -------------------------------------------------------------------------


def _approve_match(action: PendingAction, by: User, note: str, edits: dict) -> None:
    message = _row(Message.objects.all(), action.message_id)
    thread = _thread_from(edits.get("thread") or (message.thread and message.thread.thread_id))
    # A message we could not read may not say who sent it: the person who read
    # it names the rider when they can, and the case is told either way.
    quarantined = message.status == Message.Status.QUARANTINED
    employee = _rider_of(thread.case, edits.get("employee_id"), message, required=not quarantined)
    _claim(action, PendingAction.Status.APPROVED, by, note)
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
    _record_result(action, {"thread": thread.thread_id, "employee_id": employee_id})


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


def _set_aside(message: Message | None, why: str) -> None:
    if message is None:
        return
    message.status = Message.Status.SET_ASIDE
    message.flags = [*message.flags, "dismissed"]
    message.save(update_fields=["status", "flags"])
    logger.info("%s set aside: %s", message.message_id, why)


# --- decide_verification -------------------------------------------------------------------


def _approve_verification(action: PendingAction, by: User, note: str, edits: dict) -> None:
    rulings = edits.get("rulings")
    if not isinstance(rulings, dict):
        raise InvalidDecision("rule pass or fail for each rider: {employee_id: pass|fail}")
    case = decide_verification(action, rulings, by=by, note=note)
    if case.status == Status.OPEN:
        enqueue_outreach(case.pk)


__all__ = ["AlreadyDecided", "InvalidDecision", "NewerReplyWaiting", "approve", "reject"]
