"""The case loop after an audit: write to the riders, act on replies, time out, pre-cancel.

docs/design.md steps 5-9. Every status change goes through ``cases.lifecycle``;
every email through ``outreach.sending`` with an idempotency key naming the
case, the rider and the purpose, so a task delivered twice queues nothing new.

- ``start_outreach``: one thread per case, one message per flagged rider
  (riders never see each other's data), then ``pending_reply`` with a deadline.
- ``process_inbound``: classify a stored reply and act on its bucket.
- ``process_timeouts``: reminders, re-audits at the deadline, send retries.
- ``enter_pre_cancel``: one ``cancel_membership`` action per flagged rider.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from agents.tracing import RunTrace, save_trace_tree, timed
from audit.decide import ALL_CHECKS
from caseloop.audits import AuditOutcome, audit_vanpool
from caseloop.supervisor import latest_pre_cancel_event
from cases.lifecycle import (
    Actor,
    claim_expired_deadline,
    expire_cancellation_proposals,
    lock_case,
    record_event,
    record_reaudit,
    reply_deadline_from,
    request_review,
    set_reply_deadline,
    transition,
)
from cases.models import Case, PendingAction
from outreach.compose import (
    RIDER_COPY_LANGUAGES,
    initial_template_for,
    render_email,
    rider_facts,
)
from outreach.inbound import reply_collapse_key
from outreach.models import EmailThread, Message
from outreach.parsing import text_for_classification
from outreach.replies.answers import answer_question, question_language
from outreach.replies.classify import (
    CLASSIFICATION_FAILED,
    MODEL_UNAVAILABLE,
    ReplyClassification,
    classify_reply,
    strip_quoted,
)
from outreach.sending import (
    answer_threading,
    fail_stuck_sends,
    queue_email,
    queue_template,
    retry_due_sends,
)
from poolpatrol.logcontext import log_context
from poolpatrol.queue import enqueue_supervisor_review
from vanpools.models import Employee, Rider

logger = logging.getLogger(__name__)

AGENT = "outreach"
Status = Case.Status
Kind = PendingAction.Kind
WAITING = (Status.OPEN, Status.PENDING_REPLY)
AT_THE_LIMIT = "the rider replied while a cancellation was waiting, after the last re-audit"
WHILE_CANCELLING = "the rider replied while a cancellation was waiting"


# --- Who is written to ---------------------------------------------------------------------


def failing_checks(case: Case, employee_id: str) -> list[str]:
    checks = case.meta.get("rider_flags", {}).get(employee_id, {})
    return sorted(check for check, verdict in checks.items() if verdict == "fail")


def flagged_riders(case: Case) -> list[Rider]:
    """Active seats on the case's vanpool whose rider fails at least one check."""
    failing = [emp for emp in case.meta.get("rider_flags", {}) if failing_checks(case, emp)]
    return list(
        Rider.objects.filter(
            vanpool_id=case.vanpool_id,
            status=Rider.Status.ACTIVE,
            employee__employee_id__in=failing,
        )
        .select_related("employee")
        .order_by("employee__employee_id")
    )


def thread_for(case: Case) -> EmailThread:
    thread, _ = EmailThread.objects.get_or_create(
        case=case,
        defaults={"subject": f"Your vanpool seat on {case.vanpool.vanpool_id} ({case.case_id})"},
    )
    return thread


# --- Outreach ------------------------------------------------------------------------------


def start_outreach(case_pk: int) -> int:
    """Write to every flagged rider not yet written to; returns messages queued."""
    case = Case.objects.select_related("vanpool").get(pk=case_pk)
    with log_context(case_id=case.case_id, vanpool_id=case.vanpool.vanpool_id):
        if case.status not in WAITING:
            logger.info("no outreach: case is %s", case.status)
            return 0
        with transaction.atomic():
            # The deadline first: the letters quote it.
            if case.status == Status.OPEN:
                case = transition(
                    case,
                    Status.PENDING_REPLY,
                    actor=AGENT,
                    note=f"writing to {len(flagged_riders(case))} flagged rider(s)",
                    reply_deadline=reply_deadline_from(timezone.now()),
                )
            return _write_to_flagged(case)


def _write_to_flagged(case: Case) -> int:
    thread = thread_for(case)
    queued = 0
    for rider in flagged_riders(case):
        employee = rider.employee
        key = f"{case.case_id}:initial:{employee.employee_id}"
        if Message.objects.filter(idempotency_key=key).exists():
            continue
        template = initial_template_for(failing_checks(case, employee.employee_id))
        if queue_template(thread, employee, template, key=key):
            queued += 1
    return queued


# --- Replies -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplyContext:
    case: Case
    message: Message
    employee: Employee


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
    reading = None if _earlier_reply_waiting(candidate) else read_reply(candidate)
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


def _act_on_reply(ctx: ReplyContext, reading: "Reading | None") -> str:
    message = ctx.message
    if ctx.case.status == Status.CLOSED:
        return _after_closing(ctx, reading or read_reply(message))
    earlier = _earlier_reply_waiting(message)
    if earlier is not None:
        # Replies on a case are read in the order they came: this one waits behind it.
        return _wait_for_model(message, f"an earlier reply ({earlier.message_id}) waits")
    result = _recorded(reading or read_reply(message), message, ctx.case)
    if result.failure == MODEL_UNAVAILABLE:
        return _wait_for_model(message, result.reasoning)
    escalated_before = _had_escalation(ctx.case, message)
    _mark_processed(message, result)
    if ctx.case.status == Status.PRE_CANCEL or _cancellation_waiting(ctx.case):
        # Product rule: nothing is cancelled over the rider's newer words. The
        # waiting cancellations are withdrawn; an ordinary update is checked
        # against the records at once, and anything else waits for a person.
        why = AT_THE_LIMIT if ctx.case.reaudit_count >= settings.MAX_REAUDITS else WHILE_CANCELLING
        ctx = _withdraw_cancellations(ctx, to_status=Status.HITL_REVIEW)
        if _acts_alone(result) and result.bucket == "update" and not escalated_before:
            return _check_update_while_cancelling(ctx, result, why=why)
        return ask_for_label(ctx, result, why=why)
    if escalated_before:
        # Product rule: once a rider has escalated, a person reads every later reply.
        return ask_for_label(ctx, result, why="the rider escalated earlier on this case")
    if ctx.case.status == Status.HITL_REVIEW and not _only_readings_pending(ctx.case):
        # A person is deciding something of substance on this case (a draft, a
        # ruling); this reply joins the queue rather than moving the case under
        # their feet.
        return ask_for_label(ctx, result, why="the case is already waiting for a person")
    if result.failure == CLASSIFICATION_FAILED:
        return ask_for_label(ctx, result, why="the model's answer was unusable twice")
    if result.hitl and result.bucket != "escalation":
        why = (
            "it may be an escalation"
            if result.possible_escalation
            else "the reader was not confident"
        )
        return ask_for_label(ctx, result, why=why)
    return act_on_bucket(ctx, result.bucket, actor=AGENT)


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
    before = set(_failing_employee_ids(ctx.case))
    checks = ctx.case.meta.get("failed_checks") or list(ALL_CHECKS)
    outcome = audit_vanpool(ctx.case.vanpool.vanpool_id, checks=list(checks), actor=AGENT)
    case = record_reaudit(ctx.case, actor=AGENT, trigger="update", result=_outcome_label(outcome))
    _tell_cleared_riders(case, before)
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


def reply_language(message: Message) -> str:
    """The language we write back in: the rider's, where our letters exist in it.

    The reader names the reply's language when it is sure of it (a holding
    reply to a reply in Korean is in Korean once the rider copy is); else the
    question reader's English or Spanish.
    """
    detected = (message.classification or {}).get("language", "")
    if detected in RIDER_COPY_LANGUAGES:
        return str(detected)
    return question_language(strip_quoted(message.text_body))


def _after_closing(ctx: ReplyContext, reading: "Reading") -> str:
    """A reply to a closed case ("please reinstate my seat") reaches a person.

    Nothing reopens on its own: a card on the queue names the closed case, with
    the reader's reading; the case stays closed while the person decides.
    """
    result = _recorded(reading, ctx.message, ctx.case)
    _mark_processed(ctx.message, result)
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
        Kind.LABEL_REPLY,
        message=ctx.message,
        payload=_label_payload(ctx, result, why),
        actor=AGENT,
        note=why,
        hold_in=None,
        collapse_key=reply_collapse_key(ctx.case, ctx.employee),
    )
    return "after_closing"


def _label_payload(ctx: ReplyContext, result: ReplyClassification, why: str) -> dict:
    """What a label card shows: the reader's best guess, its reason, and why a person."""
    return {
        "suggested_bucket": result.bucket,
        "confidence": result.confidence,
        "reasoning": result.reasoning,
        "why": why,
        "employee_id": ctx.employee.employee_id,
        "also": result.also,
    }


def _cancellation_waiting(case: Case) -> bool:
    return PendingAction.objects.filter(
        case=case, kind=Kind.CANCEL_MEMBERSHIP, status=PendingAction.Status.PENDING
    ).exists()


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


def _only_readings_pending(case: Case) -> bool:
    """All a person is asked on this case is how to read earlier replies.

    Then the rider's newer, clear words are acted on at once (a fixed record
    closes the case); an unsure or escalated reply still goes to a person.
    """
    pending = PendingAction.objects.filter(case=case, status=PendingAction.Status.PENDING)
    return not pending.exclude(kind=Kind.LABEL_REPLY).exists()


@dataclass(frozen=True)
class Reading:
    """What the reader (or model) made of a reply, before anything is written."""

    result: ReplyClassification
    trace: RunTrace
    truncated: bool


def read_reply(message: Message) -> Reading:
    """Classify the reply; writes nothing (the trace is saved with the action)."""
    text, truncated = text_for_classification(message.text_body)
    trace = RunTrace(
        agent="classifier",
        backend=settings.LLM_BACKEND,
        input={"message_id": message.message_id, "subject": message.subject, "chars": len(text)},
    )
    ours = tuple(
        Message.objects.filter(thread_id=message.thread_id, direction=Message.Direction.OUTBOUND)
        .values_list("subject", flat=True)
        .distinct()
    )
    with timed(trace):
        result = classify_reply(
            text,
            message.subject,
            trace=trace,
            ours=ours,
            hidden_text="hidden_text" in message.flags,
        )
    trace.output = result.model_dump()
    return Reading(result, trace, truncated)


def _recorded(reading: Reading, message: Message, case: Case) -> ReplyClassification:
    """Save the reading's trace on the case (and flag a cut reply); its classification."""
    if reading.truncated and "truncated" not in message.flags:
        message.flags = [*message.flags, "truncated"]
    save_trace_tree(reading.trace, vanpool_pk=case.vanpool_id, case=case)
    return reading.result


def _mark_processed(message: Message, result: ReplyClassification | None = None) -> None:
    message.status = Message.Status.PROCESSED
    fields = ["status", "flags"]
    if result is not None:
        message.bucket = result.bucket
        message.bucket_confidence = result.confidence
        message.classification = result.model_dump()
        fields += ["bucket", "bucket_confidence", "classification"]
    message.save(update_fields=fields)


def act_on_bucket(ctx: ReplyContext, bucket: str, *, actor: Actor) -> str:
    """The design's table: what each kind of reply leads to."""
    case = _back_to_waiting(ctx.case, actor, f"reply {ctx.message.message_id}: {bucket}")
    ctx = ReplyContext(case, ctx.message, ctx.employee)
    if bucket == "escalation":
        return hold_for_review(ctx)
    if bucket == "question":
        return answer(ctx)
    if bucket == "acknowledgment":
        return reaudit(case, ALL_CHECKS, trigger="acknowledgment", reply=ctx)
    if bucket == "update":
        checks = case.meta.get("failed_checks") or list(ALL_CHECKS)
        return reaudit(case, checks, trigger="update", reply=ctx)
    raise ValueError(f"unknown bucket {bucket!r}")


def _back_to_waiting(case: Case, actor: Actor, note: str) -> Case:
    """Out of review once nothing else on the case waits for a person."""
    if case.status not in (Status.HITL_REVIEW, Status.OPEN) or has_pending_actions(case):
        return case
    return transition(case, Status.PENDING_REPLY, actor=actor, note=note)


def has_pending_actions(case: Case) -> bool:
    return PendingAction.objects.filter(case=case, status=PendingAction.Status.PENDING).exists()


def ask_for_label(ctx: ReplyContext, result: ReplyClassification, *, why: str) -> str:
    """A card for a person: the reader's best guess, its reason and a holding reply.

    An escalation never waits as a bare label: its drafted holding reply goes
    to the queue for approval (``hold_for_review``), whatever the path here.
    """
    if result.bucket == "escalation":
        return hold_for_review(ctx)
    holding = render_email(
        "holding_reply", rider_facts(ctx.case, ctx.employee), lang=reply_language(ctx.message)
    )
    request_review(
        ctx.case,
        Kind.LABEL_REPLY,
        message=ctx.message,
        payload={
            **_label_payload(ctx, result, why),
            # Drafted in advance: labelled an escalation, this is what goes for approval.
            "holding_reply": {"subject": holding.subject, "text": holding.text},
        },
        actor=AGENT,
        note=f"reply {ctx.message.message_id} needs a person to label it: {why}",
        collapse_key=reply_collapse_key(ctx.case, ctx.employee),
    )
    return "label_requested"


def _withdraw_cancellations(ctx: ReplyContext, *, to_status: str) -> ReplyContext:
    """The rider spoke up before anyone approved ending their seat.

    Nothing is cancelled on evidence older than the rider's last word: the
    waiting cancellations are superseded. Below the re-audit limit the case
    goes back to waiting and the reply is treated like any other (docs/design.md
    step 6) — an update that fixes the record closes the case, a question is
    answered, an escalation or an unsure reading goes to a person; a case
    still failing returns to ``pre_cancel`` at the next deadline with a fresh
    review. At the limit a person reads the reply first (``hitl_review``).
    """
    note = f"superseded by reply {ctx.message.message_id}"
    with transaction.atomic():
        # The case first, as an approval takes it before it claims an action:
        # the same order everywhere, so the two never wait on each other.
        lock_case(ctx.case.pk)
        superseded = PendingAction.objects.filter(
            case=ctx.case, kind=Kind.CANCEL_MEMBERSHIP, status=PendingAction.Status.PENDING
        ).update(status=PendingAction.Status.SUPERSEDED, decided_at=timezone.now(), note=note)
        case = transition(
            ctx.case,
            to_status,
            actor=AGENT,
            note=f"the rider replied ({ctx.message.message_id}) while a cancellation was "
            f"waiting for approval; {superseded} cancellation(s) withdrawn",
            data={"message_id": ctx.message.message_id, "withdrawn": superseded},
        )
    logger.info("reply during pre-cancel withdrew %s cancellation(s)", superseded)
    return ReplyContext(case, ctx.message, ctx.employee)


def hold_for_review(ctx: ReplyContext) -> str:
    """Draft a reply a coordinator approves, edits or rejects before it goes out."""
    facts = rider_facts(ctx.case, ctx.employee)
    # In the rider's language: a Spanish reply is answered in Spanish.
    draft = render_email("holding_reply", facts, lang=reply_language(ctx.message))
    request_review(
        ctx.case,
        Kind.REVIEW_EMAIL,
        message=ctx.message,
        payload={
            "employee_id": ctx.employee.employee_id,
            "to": ctx.employee.email,
            "template": "holding_reply",
            "subject": draft.subject,
            "text": draft.text,
            "html": draft.html,
            "guardrail": ctx.message.classification.get("guardrail", ""),
            # What the reader saw, so the person knows why it is theirs.
            "reasoning": ctx.message.classification.get("reasoning", ""),
            "also": ctx.message.classification.get("also", ""),
        },
        actor=AGENT,
        note=f"reply {ctx.message.message_id} escalated; a draft answer waits for review",
        collapse_key=reply_collapse_key(ctx.case, ctx.employee),
    )
    return "held_for_review"


def answer(ctx: ReplyContext) -> str:
    case = _give_more_time(ctx.case, f"answering the question in {ctx.message.message_id}")
    question = strip_quoted(ctx.message.text_body)
    facts = rider_facts(case, ctx.employee)
    # The email is in the question's language; answer_question picks the same
    # one from the same words, so paragraphs and letter always agree.
    queue_template(
        thread_for(case),
        ctx.employee,
        "answer",
        key=f"{case.case_id}:answer:{ctx.message.message_id}",
        threading=answer_threading(ctx.message),
        answer_paragraphs=answer_question(question, facts),
        question_excerpt=question,
        lang=question_language(question),
    )
    return "answered"


def _give_more_time(case: Case, note: str) -> Case:
    deadline = reply_deadline_from(timezone.now())
    if case.reply_deadline is None or case.reply_deadline < deadline:
        return set_reply_deadline(case, deadline, actor=AGENT, note=f"{note}; deadline moved")
    return case


# --- Re-audits -----------------------------------------------------------------------------


def reaudit(
    case: Case,
    checks: Sequence[str],
    *,
    trigger: str,
    reply: ReplyContext | None = None,
) -> str:
    """Audit again, count it, and move the case on from what it finds."""
    before = set(_failing_employee_ids(case))
    outcome = audit_vanpool(case.vanpool.vanpool_id, checks=list(checks), actor=AGENT)
    case = record_reaudit(case, actor=AGENT, trigger=trigger, result=_outcome_label(outcome))
    _tell_cleared_riders(case, before)
    if case.status == Status.CLOSED:
        return "resolved"
    if case.status == Status.HITL_REVIEW and (
        outcome.status == "unknown" or trigger == "timeout" or not _only_readings_pending(case)
    ):
        # A person rules first (an unknown check, a draft), or is reading a
        # reply: nothing goes to pre_cancel under them.
        return "needs_decision"
    if trigger == "timeout" or case.reaudit_count > settings.MAX_REAUDITS:
        enter_pre_cancel(case, why=_pre_cancel_reason(case, trigger))
        return "pre_cancel"
    if reply is None or failing_checks(case, reply.employee.employee_id):
        # A rider still working on it gets another week; one whose reply
        # cleared them buys none for the riders who stayed silent.
        case = _give_more_time(case, f"re-audit {case.reaudit_count} still failing")
    _write_to_flagged(case)  # anyone newly flagged hears about it
    if reply is not None:
        _still_shows(case, reply)
    return "still_failing"


def _outcome_label(outcome: AuditOutcome) -> str:
    return outcome.status if not outcome.reason else f"{outcome.status} ({outcome.reason})"


def _pre_cancel_reason(case: Case, trigger: str) -> str:
    if trigger == "timeout":
        return "no reply by the deadline and the record still fails"
    return f"still failing after {case.reaudit_count - 1} re-audit(s), the most allowed"


def _failing_employee_ids(case: Case) -> list[str]:
    return [emp for emp in case.meta.get("rider_flags", {}) if failing_checks(case, emp)]


def _tell_cleared_riders(case: Case, before: set[str]) -> None:
    """Riders who were flagged and now pass hear that they are done."""
    still = set() if case.status == Status.CLOSED else set(_failing_employee_ids(case))
    cleared = sorted(before - still)
    if not cleared:
        return
    thread = thread_for(case)
    for employee in Employee.objects.filter(employee_id__in=cleared).order_by("employee_id"):
        queue_template(
            thread,
            employee,
            "resolved",
            key=f"{case.case_id}:resolved:{employee.employee_id}",
        )


def _still_shows(case: Case, reply: ReplyContext) -> None:
    if not failing_checks(case, reply.employee.employee_id):
        return  # this rider is clear; others are still being chased
    queue_template(
        thread_for(case),
        reply.employee,
        "still_shows",
        key=f"{case.case_id}:still_shows:{reply.message.message_id}",
        threading=answer_threading(reply.message),
    )


# --- Pre-cancel ----------------------------------------------------------------------------


def enter_pre_cancel(case: Case, *, why: str) -> Case:
    """Ask a person to approve ending each flagged rider's seat."""
    with transaction.atomic():
        case = transition(case, Status.PRE_CANCEL, actor=AGENT, note=why, reply_deadline=None)
        for rider in flagged_riders(case):
            employee_id = rider.employee.employee_id
            exists = PendingAction.objects.filter(
                case=case, rider=rider, kind=Kind.CANCEL_MEMBERSHIP, status="pending"
            ).exists()
            if exists:
                continue
            request_review(
                case,
                Kind.CANCEL_MEMBERSHIP,
                rider=rider,
                payload={
                    "employee_id": employee_id,
                    "vanpool_id": case.vanpool.vanpool_id,
                    "failed_checks": failing_checks(case, employee_id),
                    "reason": case.meta.get("reason", ""),
                    "details": case.meta.get("details", ""),
                    "reaudit_count": case.reaudit_count,
                    "why": why,
                },
                actor=AGENT,
                note=why,
                hold_in=None,  # already in pre_cancel, where cancellations wait
            )
        # The supervisor checks the evidence package once this entry commits.
        entry = latest_pre_cancel_event(case)
        if entry is not None:
            enqueue_supervisor_review(entry.pk)
    return case


# --- Timeouts ------------------------------------------------------------------------------


def process_timeouts(now: datetime | None = None) -> dict[str, int]:
    """The sweep: reminders, deadline re-audits, send retries. Safe to run twice."""
    now = now or timezone.now()
    counts = {"reminders": send_reminders(now), "timeouts": 0, "resolved": 0, "pre_cancel": 0}
    counts.update({f"model_{k}": v for k, v in read_waiting_replies().items()})
    # Before the deadlines: a case whose proposal expired is due for a re-audit now.
    counts["proposals_expired"] = len(expire_cancellation_proposals(now, actor=AGENT))
    for case in _expired_cases(now):
        with log_context(case_id=case.case_id, vanpool_id=case.vanpool.vanpool_id):
            result = _time_out(case, now)
        if result:
            counts["timeouts"] += 1
            if result in ("resolved", "pre_cancel"):
                counts[result] += 1
    counts["sends_retried"] = retry_due_sends(now)
    counts["sends_stuck"] = fail_stuck_sends(now)
    logger.info("timeouts sweep: %s", counts)
    return counts


def _expired_cases(now: datetime) -> list[Case]:
    """Waiting cases past their deadline, and those a person is only asked to read.

    A case waiting on a label for a reply still gets its deadline re-audit, so
    a silent fix closes it; a failing one waits for the person, never goes to
    ``pre_cancel`` under them.
    """
    waiting = Case.objects.filter(status=Status.PENDING_REPLY, reply_deadline__lte=now)
    reading = Case.objects.filter(status=Status.HITL_REVIEW, reply_deadline__lte=now).exclude(
        pk__in=PendingAction.objects.filter(status=PendingAction.Status.PENDING)
        .exclude(kind=Kind.LABEL_REPLY)
        .values("case_id")
    )
    return list((waiting | reading).select_related("vanpool").order_by("reply_deadline", "pk"))


def _time_out(case: Case, now: datetime) -> str:
    with transaction.atomic():
        if not claim_expired_deadline(case, now):
            return ""  # another sweep, or a reply, got here first
        return reaudit(case, ALL_CHECKS, trigger="timeout")


def send_reminders(now: datetime) -> int:
    if not settings.REMINDER_DAYS_BEFORE:
        return 0
    window_end = now + timedelta(days=settings.REMINDER_DAYS_BEFORE)
    sent = 0
    cases = Case.objects.filter(
        status=Status.PENDING_REPLY, reply_deadline__gt=now, reply_deadline__lte=window_end
    ).select_related("vanpool")
    for case in cases:
        thread = thread_for(case)
        assert case.reply_deadline is not None  # the filter above took cases with a deadline
        stamp = case.reply_deadline.strftime("%Y%m%dT%H%M")
        for rider in flagged_riders(case):
            employee = rider.employee
            if _has_replied(thread, employee):
                continue
            key = f"{case.case_id}:reminder:{stamp}:{employee.employee_id}"
            if Message.objects.filter(idempotency_key=key).exists():
                continue
            if queue_template(thread, employee, "reminder", key=key):
                sent += 1
    return sent


def _has_replied(thread: EmailThread, employee: Employee) -> bool:
    # Their own reply, not their out-of-office: an auto-reply says they are away,
    # which is a reason to remind them, not to stop.
    return Message.objects.filter(
        thread=thread,
        employee=employee,
        direction=Message.Direction.INBOUND,
        kind=Message.Kind.REPLY,
    ).exists()


__all__ = [
    "act_on_bucket",
    "enter_pre_cancel",
    "process_inbound",
    "process_timeouts",
    "queue_email",
    "start_outreach",
]
