"""What each kind of reply leads to (the design's table), and the cards that ask a person.

``act_on_bucket`` is the one place a read reply moves a case: an escalation is
held for review with a drafted holding reply, a question is answered, an
acknowledgment or an update is re-audited. The reply loop calls it for a
confident reading, and ``caseloop.decisions`` for a person's label.
"""

import logging

from django.db import transaction
from django.utils import timezone

from audit.decide import ALL_CHECKS
from caseloop.loop.reading import ReplyContext, reply_language
from caseloop.loop.reaudit import has_pending_actions, reaudit
from caseloop.loop.writing import AGENT, give_more_time, thread_for
from cases.kinds import CancelMembership, HoldingReply, LabelReply, ReviewEmail
from cases.lifecycle import Actor, lock_case, request_review, transition
from cases.models import Case, PendingAction
from outreach.compose import render_email, rider_facts
from outreach.inbound import reply_collapse_key
from outreach.replies.answers import answer_question, question_language
from outreach.replies.classify import ReplyClassification
from outreach.replies.own_words import strip_quoted
from outreach.sending import answer_threading, queue_template

logger = logging.getLogger(__name__)

Status = Case.Status


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
        label_payload(ctx, result, why).model_copy(
            # Drafted in advance: labelled an escalation, this is what goes for approval.
            update={"holding_reply": HoldingReply(subject=holding.subject, text=holding.text)}
        ),
        message=ctx.message,
        actor=AGENT,
        note=f"reply {ctx.message.message_id} needs a person to label it: {why}",
        collapse_key=reply_collapse_key(ctx.case, ctx.employee),
    )
    return "label_requested"


def label_payload(ctx: ReplyContext, result: ReplyClassification, why: str) -> LabelReply:
    """What a label card shows: the reader's best guess, its reason, and why a person."""
    return LabelReply(
        suggested_bucket=result.bucket,
        confidence=result.confidence,
        reasoning=result.reasoning,
        why=why,
        employee_id=ctx.employee.employee_id,
        also=result.also,
    )


def withdraw_cancellations(ctx: ReplyContext, *, to_status: str) -> ReplyContext:
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
        superseded = (
            PendingAction.objects.of(CancelMembership)
            .filter(case=ctx.case, status=PendingAction.Status.PENDING)
            .update(status=PendingAction.Status.SUPERSEDED, decided_at=timezone.now(), note=note)
        )
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
        ReviewEmail(
            employee_id=ctx.employee.employee_id,
            to=ctx.employee.email,
            template="holding_reply",
            subject=draft.subject,
            text=draft.text,
            html=draft.html,
            guardrail=ctx.message.classification.get("guardrail", ""),
            # What the reader saw, so the person knows why it is theirs.
            reasoning=ctx.message.classification.get("reasoning", ""),
            also=ctx.message.classification.get("also", ""),
        ),
        message=ctx.message,
        actor=AGENT,
        note=f"reply {ctx.message.message_id} escalated; a draft answer waits for review",
        collapse_key=reply_collapse_key(ctx.case, ctx.employee),
    )
    return "held_for_review"


def answer(ctx: ReplyContext) -> str:
    case = give_more_time(ctx.case, f"answering the question in {ctx.message.message_id}")
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
