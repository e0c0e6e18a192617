"""What the reader (or model) made of a reply, before anything is written.

``read_reply`` classifies a stored reply and writes nothing, so a worker can
read before it opens a write transaction; ``recorded`` saves the reading's
trace on the case once the reply is claimed.
"""

from dataclasses import dataclass

from django.conf import settings

from agents.tracing import RunTrace, save_trace_tree, timed
from cases.models import Case
from outreach.compose import RIDER_COPY_LANGUAGES
from outreach.models import Message
from outreach.parsing import text_for_classification
from outreach.replies.answers import question_language
from outreach.replies.classify import ReplyClassification, classify_reply
from outreach.replies.own_words import strip_quoted
from vanpools.models import Employee


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


def recorded(reading: Reading, message: Message, case: Case) -> ReplyClassification:
    """Save the reading's trace on the case (and flag a cut reply); its classification."""
    if reading.truncated and "truncated" not in message.flags:
        message.flags = [*message.flags, "truncated"]
    save_trace_tree(reading.trace, vanpool_pk=case.vanpool_id, case=case)
    return reading.result


def mark_processed(message: Message, result: ReplyClassification | None = None) -> None:
    message.status = Message.Status.PROCESSED
    fields = ["status", "flags"]
    if result is not None:
        message.bucket = result.bucket
        message.bucket_confidence = result.confidence
        message.classification = result.model_dump()
        fields += ["bucket", "bucket_confidence", "classification"]
    message.save(update_fields=fields)


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
