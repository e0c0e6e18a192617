"""What the reader (or model) made of a reply, before anything is written.

``read_reply`` classifies a stored reply and writes nothing, so a worker can
read before it opens a write transaction; ``recorded`` saves the reading's
trace on the case once the reply is claimed.
"""

from dataclasses import dataclass

from django.conf import settings

from agents.tracing import RunTrace, save_trace_tree, timed
from cases.models import Case
from outreach.models import Message
from outreach.parsing import text_for_classification
from outreach.replies.classify import ReplyClassification, classify_reply
from outreach.replies.own_words import strip_quoted
from outreach.rider_language import detected_language
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
