"""A reply that asks for another language: remembered, and the latest letter sent again in it.

Every email says how to get it in English, and an English one how to get it in
each shipped language: reply with the language's name
(``outreach.replies.language_requests``). Such a reply is not read for a
bucket. The rider's choice is kept (``Employee.requested_language``, first in
``outreach.rider_language``'s order), the case's trail says so, and the latest
letter this rider had on the case is written again, now in that language, as
an answer to their reply. Every later email follows the choice.

The request is still a reply: the reply loop's rules for a person (a
cancellation waiting, an escalation before, a person already deciding, a
closed case) apply to it as to any other.
"""

from caseloop.loop.reading import ReplyContext
from caseloop.loop.writing import AGENT, thread_for
from cases.lifecycle import record_event
from outreach.compose import INITIAL_TEMPLATES
from outreach.models import Message
from outreach.replies.classify import ReplyClassification
from outreach.replies.language_requests import own_words, requested_language
from outreach.sending import answer_threading, queue_template
from poolpatrol.languages import language_name
from vanpools.history import record_updates
from vanpools.models import Employee

# The letters that say where the rider stands from the case's facts alone,
# and so can be written again in another language. An answer (it quotes the
# rider's question) and a holding reply (a person may have edited it) cannot.
RESENDABLE = frozenset(
    {*INITIAL_TEMPLATES.values(), "reminder", "still_shows", "resolved", "cancelled"}
)
# Stored on the reply instead of a bucket: the reminder sweep does not count it
# as an answer, and the timeline shows what was asked.
REQUEST_KEY = "language_request"


def asked_language(message: Message) -> str | None:
    """The language this reply asks for, when that is all it says."""
    return requested_language(own_words(message.text_body))


def honour_language_request(ctx: ReplyContext, language: str) -> Message | None:
    """Keep the rider's choice, note it on the case, and send their latest letter in it."""
    message = ctx.message
    Message.objects.filter(pk=message.pk).update(
        classification={
            REQUEST_KEY: language,
            "reasoning": f"The reply asks for emails in {language_name(language)}.",
        }
    )
    chosen = Employee.objects.filter(pk=ctx.employee.pk)
    chosen.update(requested_language=language)
    record_updates(Employee, chosen)  # an UPDATE sends no signal: the history row is ours
    ctx.employee.requested_language = language
    letter = _latest_letter(ctx)
    record_event(
        ctx.case,
        actor=AGENT,
        note=f"{ctx.employee.employee_id} asked for emails in {language_name(language)} "
        f"(reply {message.message_id})" + (f"; {letter} sent again in it" if letter else ""),
        data={"message_id": message.message_id, "language": language, "resent": letter},
    )
    if not letter:
        return None
    return queue_template(
        thread_for(ctx.case),
        ctx.employee,
        letter,
        key=f"{ctx.case.case_id}:language:{message.message_id}",
        threading=answer_threading(message),
        lang=language,
    )


def request_reading(language: str) -> ReplyClassification:
    """What a card shows when a person must read the request: no bucket is claimed."""
    return ReplyClassification(
        bucket="question",
        confidence=0.0,
        reasoning=f"The reply only asks for emails in {language_name(language)}; the latest "
        "letter went again in it.",
        hitl=True,
    )


def _latest_letter(ctx: ReplyContext) -> str:
    template = (
        Message.objects.filter(
            thread__case=ctx.case,
            employee=ctx.employee,
            direction=Message.Direction.OUTBOUND,
            template__in=RESENDABLE,
        )
        .order_by("-created_at", "-pk")
        .values_list("template", flat=True)
        .first()
    )
    return template or ""
