"""What the reader (or model) made of a reply, before anything is written.

``read_reply`` classifies a stored reply and writes nothing, so a worker can
read before it opens a write transaction; ``recorded`` saves the reading's
trace on the case once the reply is claimed.
"""

from dataclasses import dataclass

from django.conf import settings

from agents.tracing import RunTrace, save_trace_tree, timed
from cases.models import Case
from outreach.answer_page import BY_NAME
from outreach.models import Message
from outreach.parsing import text_for_classification
from outreach.replies.classify import ReplyClassification, classify_reply
from outreach.replies.own_words import strip_quoted
from outreach.rider_language import detected_language
from vanpools.models import Employee

# The rule a reading from the answer page carries (ReplyClassification.rule).
ANSWER_RULE = "answer_page"
GIVE_UP_SEAT = "answer_page:give_up_seat"


@dataclass(frozen=True)
class ReplyContext:
    case: Case
    message: Message
    employee: Employee


@dataclass(frozen=True)
class Reading:
    """What the reader (or model) made of a reply, before anything is written."""

    result: ReplyClassification
    trace: RunTrace
    truncated: bool


def read_reply(message: Message) -> Reading:
    """Classify the reply; writes nothing (the trace is saved with the action).

    An answer from the answer page is read from the rider's choice
    (``answer_reading``); its words, when the choice takes them, are read like
    any reply first.
    """
    if message.answer:
        return answer_reading(message)
    return _classified(message, message.text_body)


def _classified(message: Message, body: str) -> Reading:
    text, truncated = text_for_classification(body)
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


def answer_reading(message: Message) -> Reading:
    """What the rider's choice on the answer page means for the loop (``outreach.answer_page``).

    The choice is the rider's own statement, so a re-check, a question or a
    request to give up the seat is acted on without guessing. Their words
    still go through the reader first: an escalation or a guardrail in them
    goes to a person whatever was chosen. "Let me explain" is read exactly
    like a reply; choices that need a person's judgement (a stay elsewhere,
    leave, "not me") go to a person, with the choice as the reason.
    """
    answer = message.answer
    choice = BY_NAME.get(str(answer.get("choice", "")))
    words = str(answer.get("text", ""))
    if choice is None:  # a choice no version offers any more: a person reads it
        return _read_as(message, "update", hitl=True, why="an answer the product cannot read")
    if choice.route == "read" or (words.strip() and choice.route != "escalate"):
        read = _classified(message, words)
        if choice.route == "read" or read.result.bucket == "escalation" or read.result.guardrail:
            return read
    until = f" (until {answer['until']})" if answer.get("until") else ""
    said = f"the rider chose \u201c{choice.label}\u201d on the answer page{until}"
    if choice.route == "recheck":
        return _read_as(message, "update", hitl=False, why=said)
    if choice.route == "question":
        return _read_as(message, "question", hitl=False, why=said)
    if choice.route == "escalate":
        return _read_as(message, "escalation", hitl=True, why=said)
    if choice.route == "give_up_seat":
        return _read_as(message, "update", hitl=False, why=said, rule=GIVE_UP_SEAT)
    return _read_as(message, "update", hitl=True, why=f"{said}; a person decides")


def _read_as(message: Message, bucket: str, *, hitl: bool, why: str, rule: str = "") -> Reading:
    result = ReplyClassification(
        bucket=bucket,  # type: ignore[arg-type]  # one of the four, named above
        confidence=1.0,
        reasoning=why,
        hitl=hitl,
        rule=rule or ANSWER_RULE,
    )
    trace = RunTrace(
        agent="classifier",
        backend="answer_page",
        input={"message_id": message.message_id, "answer": message.answer},
        output=result.model_dump(),
    )
    return Reading(result, trace, truncated=False)


def is_answer(result: ReplyClassification) -> bool:
    """Whether the reading came from a choice on the answer page (its reason says which)."""
    return result.rule in (ANSWER_RULE, GIVE_UP_SEAT)


def recorded(reading: Reading, message: Message, case: Case) -> ReplyClassification:
    """Save the reading's trace on the case (and flag a cut reply); its classification."""
    if reading.truncated and "truncated" not in message.flags:
        message.flags = [*message.flags, "truncated"]
    save_trace_tree(reading.trace, vanpool_pk=case.vanpool_id, case=case)
    return reading.result


def mark_processed(message: Message, result: ReplyClassification | None = None) -> None:
    """The reply is read: its reading kept, and the language of the rider's own words."""
    message.status = Message.Status.PROCESSED
    message.language = detected_language(strip_quoted(message.text_body))
    fields = ["status", "flags", "language"]
    if result is not None:
        message.bucket = result.bucket
        message.bucket_confidence = result.confidence
        message.classification = result.model_dump()
        fields += ["bucket", "bucket_confidence", "classification"]
    message.save(update_fields=fields)
