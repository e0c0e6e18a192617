"""The reply loop: claim a stored reply once, read it, and route it.

The reply is read before the write transaction opens; the claim and all it
leads to commit together. A reply waits (visibly) while the model is down or
an earlier reply on its thread waits; a person reads it when a cancellation
is waiting (unless it is a clear update the re-audit confirms), the rider
escalated before, the case is closed or already with a person, or the reader
is unsure; otherwise ``act_on_bucket`` acts on it.
"""

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from caseloop.loop.buckets import (
    act_on_bucket,
    ask_for_label,
    label_payload,
    withdraw_cancellations,
)
from caseloop.loop.languages import asked_language, honour_language_request, request_reading
from caseloop.loop.reading import (
    GIVE_UP_SEAT,
    Reading,
    ReplyContext,
    is_answer,
    mark_processed,
    read_reply,
    recorded,
)
from caseloop.loop.reaudit import only_readings_pending, propose_own_cancellation, reaudit_alone
from caseloop.loop.writing import AGENT
from cases.kinds import CancelMembership
from cases.lifecycle import lock_case, record_event, request_review
from cases.models import Case, PendingAction
from outreach.inbound import reply_collapse_key
from outreach.models import Message
from outreach.replies.classify import (
    CLASSIFICATION_FAILED,
    MODEL_UNAVAILABLE,
    ReplyClassification,
)
from poolpatrol.logcontext import log_context

logger = logging.getLogger(__name__)

Status = Case.Status
AT_THE_LIMIT = "the rider replied while a cancellation was waiting, after the last re-audit"
WHILE_CANCELLING = "the rider replied while a cancellation was waiting"


def _claimable(message_pk: int) -> QuerySet[Message]:
    """The reply if it is still waiting to be read: from a known rider, on a thread."""
    return Message.objects.filter(
        pk=message_pk,
        direction=Message.Direction.INBOUND,
        kind=Message.Kind.REPLY,
        status__in=(Message.Status.RECEIVED, Message.Status.MODEL_WAIT),
        thread__isnull=False,
        employee__isnull=False,
        processed_at__isnull=True,
    )


def process_inbound(message_pk: int) -> str:
    """Classify a stored reply from a known rider and act on it, once.

    The reply is read (the reader, or a model call of seconds) before the
    write transaction opens: on the embedded SQLite database a transaction
    holds the one write lock, and webhook deliveries must not wait behind a
    model. The claim and everything it leads to then commit together: a
    crash rolls the claim back and the redelivered task starts over.
    """
    candidate = _claimable(message_pk).select_related("thread__case").first()
    if candidate is None:
        return "skipped"
    # A reply that only names a language is not read (caseloop.loop.languages).
    skip = _earlier_reply_waiting(candidate) or asked_language(candidate)
    reading = None if skip else read_reply(candidate)
    with transaction.atomic():
        if _claimable(message_pk).update(processed_at=timezone.now()) != 1:
            return "skipped"  # another worker read it meanwhile; this reading is dropped
        # The case's lock before reading the case: the order an approval takes
        # it in, and the status acted on is the current one.
        assert candidate.thread is not None  # _claimable takes only a message on a thread
        lock_case(candidate.thread.case_id)
        message = Message.objects.select_related("thread__case__vanpool", "employee").get(
            pk=message_pk
        )
        # The claim above took only a message with a thread and a sender.
        assert message.thread is not None and message.employee is not None
        case = message.thread.case
        with log_context(case_id=case.case_id, vanpool_id=case.vanpool.vanpool_id):
            return _act_on_reply(ReplyContext(case, message, message.employee), reading)


def _act_on_reply(ctx: ReplyContext, reading: Reading | None) -> str:
    message = ctx.message
    asked = asked_language(message)
    if ctx.case.status == Status.CLOSED:
        outcome = _after_closing(ctx, reading or read_reply(message))
        if asked:
            honour_language_request(ctx, asked)
        return outcome
    earlier = _earlier_reply_waiting(message)
    if earlier is not None:
        # Replies on a case are read in the order they came: this one waits behind it.
        return _wait_for_model(message, f"an earlier reply ({earlier.message_id}) waits")
    if asked:
        return _on_language_request(ctx, asked)
    result = recorded(reading or read_reply(message), message, ctx.case)
    if result.failure == MODEL_UNAVAILABLE:
        return _wait_for_model(message, result.reasoning)
    escalated_before = _had_escalation(ctx.case, message)
    mark_processed(message, result)
    to_a_person = _to_a_person_first(ctx, result, escalated_before=escalated_before)
    if to_a_person:
        return to_a_person
    if result.failure == CLASSIFICATION_FAILED:
        return ask_for_label(ctx, result, why="the model's answer was unusable twice")
    if result.hitl and result.bucket != "escalation":
        if is_answer(result):
            why = result.reasoning
        elif result.possible_escalation:
            why = "it may be an escalation"
        else:
            why = "the reader was not confident"
        return ask_for_label(ctx, result, why=why)
    if result.rule == GIVE_UP_SEAT:
        return propose_own_cancellation(ctx, why=result.reasoning)
    return act_on_bucket(ctx, result.bucket, actor=AGENT)


def _to_a_person_first(
    ctx: ReplyContext, result: ReplyClassification, *, escalated_before: bool
) -> str:
    """Whatever the reply says, these go to a person; '' when none applies."""
    if ctx.case.status == Status.PRE_CANCEL or _cancellation_waiting(ctx.case):
        # Product rule: nothing is cancelled over the rider's newer words. The
        # waiting cancellations are withdrawn; an ordinary update is checked
        # against the records at once, and anything else waits for a person.
        why = AT_THE_LIMIT if ctx.case.reaudit_count >= settings.MAX_REAUDITS else WHILE_CANCELLING
        ctx = withdraw_cancellations(ctx, to_status=Status.HITL_REVIEW)
        if _acts_alone(result) and result.bucket == "update" and not escalated_before:
            return _check_update_while_cancelling(ctx, result, why=why)
        return ask_for_label(ctx, result, why=why)
    if escalated_before:
        # Product rule: once a rider has escalated, a person reads every later reply.
        return ask_for_label(ctx, result, why="the rider escalated earlier on this case")
    if ctx.case.status == Status.HITL_REVIEW and not only_readings_pending(ctx.case):
        # A person is deciding something of substance on this case (a draft, a
        # ruling); this reply joins the queue rather than moving the case under
        # their feet.
        return ask_for_label(ctx, result, why="the case is already waiting for a person")
    return ""


def _on_language_request(ctx: ReplyContext, language: str) -> str:
    """A reply that only names a language: honoured at once, and otherwise a reply like any.

    It is not read for a bucket; where any reply would go to a person, so does
    this one (with the request said on the card).
    """
    escalated_before = _had_escalation(ctx.case, ctx.message)
    mark_processed(ctx.message)
    honour_language_request(ctx, language)
    reading = request_reading(language)
    return _to_a_person_first(ctx, reading, escalated_before=escalated_before) or "language_changed"


def _acts_alone(result: ReplyClassification) -> bool:
    """A clear ordinary reading the loop may act on with no person."""
    return not result.hitl and not result.failure and result.bucket != "escalation"


def _check_update_while_cancelling(
    ctx: ReplyContext, result: ReplyClassification, *, why: str
) -> str:
    """An update while a cancellation waited: the records decide, then a person if need be.

    The cancellations are already withdrawn. If the re-audit of the failed
    checks finds the records now match, the case resolves with no person:
    nothing irreversible is left to decide. If they still fail, a person reads
    the reply, as for any other reply while a cancellation waited.
    """
    case = reaudit_alone(ctx.case, trigger="update")
    if case.status == Status.CLOSED:
        return "resolved"
    ctx = ReplyContext(case, ctx.message, ctx.employee)
    return ask_for_label(ctx, result, why=f"{why}; the re-audit it led to still fails")


def _earlier_reply_waiting(message: Message) -> Message | None:
    return (
        Message.objects.filter(
            thread_id=message.thread_id,
            direction=Message.Direction.INBOUND,
            status=Message.Status.MODEL_WAIT,
        )
        .filter(
            Q(received_at__lt=message.received_at)
            | Q(received_at=message.received_at, pk__lt=message.pk)
        )
        .order_by("received_at", "pk")
        .first()
    )


def _wait_for_model(message: Message, why: str) -> str:
    """Put the claimed reply back, visibly waiting: the sweep reads it when the model answers.

    Nothing acts on the reader's guess meanwhile: with a model configured,
    its reading is the one this deployment chose to trust.
    """
    Message.objects.filter(pk=message.pk).update(
        status=Message.Status.MODEL_WAIT,
        processed_at=None,
        attempts=message.attempts + 1,
        last_error=why[:2000],
    )
    logger.warning("reply %s waits for the model: %s", message.message_id, why)
    return "waiting_for_model"


def read_waiting_replies() -> dict[str, int]:
    """Read the replies waiting for the model, oldest first, until one has to wait again.

    Run by the sweep. Stopping at the first that waits keeps the order (and
    spares a down endpoint a burst of calls); each claim is the same
    conditional update as a first delivery, so a reply is never read twice.
    """
    counts = {"read": 0, "still_waiting": 0}
    waiting = Message.objects.filter(
        direction=Message.Direction.INBOUND, status=Message.Status.MODEL_WAIT
    ).order_by("received_at", "pk")
    for pk in list(waiting.values_list("pk", flat=True)):
        outcome = process_inbound(pk)
        if outcome == "waiting_for_model":
            counts["still_waiting"] = waiting.count()
            break
        if outcome != "skipped":
            counts["read"] += 1
    return counts


def _after_closing(ctx: ReplyContext, reading: Reading) -> str:
    """A reply to a closed case ("please reinstate my seat") reaches a person.

    Nothing reopens on its own: a card on the queue names the closed case, with
    the reader's reading; the case stays closed while the person decides.
    """
    result = recorded(reading, ctx.message, ctx.case)
    mark_processed(ctx.message, result)
    why = (
        f"{ctx.case.case_id} is closed ({ctx.case.outcome or 'no outcome'}); the rider wrote after"
    )
    record_event(
        ctx.case,
        actor=AGENT,
        note=f"reply {ctx.message.message_id} arrived after the case closed; a person reads it",
        data={"message_id": ctx.message.message_id},
    )
    request_review(
        ctx.case,
        label_payload(ctx, result, why),
        message=ctx.message,
        actor=AGENT,
        note=why,
        hold_in=None,
        collapse_key=reply_collapse_key(ctx.case, ctx.employee),
    )
    return "after_closing"


def _cancellation_waiting(case: Case) -> bool:
    return PendingAction.objects.of(CancelMembership).filter(case=case).pending().exists()


def _had_escalation(case: Case, message: Message) -> bool:
    """Whether an earlier reply on the case was an escalation (read or labelled so)."""
    return (
        Message.objects.filter(
            thread__case=case,
            direction=Message.Direction.INBOUND,
            bucket="escalation",
        )
        .exclude(pk=message.pk)
        .exists()
    )
