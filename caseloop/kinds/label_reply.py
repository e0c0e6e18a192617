"""Deciding label_reply: the reply gets the person's bucket and is acted on as if read so."""

from typing import Any, ClassVar

from django.contrib.auth.models import User
from pydantic import Field, field_validator

from caseloop.kinds.base import (
    InvalidDecision,
    KindDecision,
    KindEdits,
    Reason,
    claim,
    record_result,
    row,
)
from caseloop.loop.buckets import act_on_bucket
from caseloop.loop.reading import ReplyContext
from cases.kinds import LabelReply
from cases.models import Case, PendingAction
from outreach.models import Message

BUCKETS = tuple(b for b in Message.Bucket.values if b)


class LabelReplyEdits(KindEdits):
    bucket: str = Field(
        "",
        description=f"The bucket it belongs in: one of {', '.join(BUCKETS)}.",
        json_schema_extra={"enum": list(BUCKETS)},
    )

    @field_validator("bucket")
    @classmethod
    def _a_bucket(cls, value: str) -> str:
        if value not in BUCKETS:
            raise ValueError(f"{value!r} is not one of: {', '.join(BUCKETS)}")
        return value


class LabelReplyDecision(KindDecision[LabelReply]):
    payload_class = LabelReply
    edits_class: ClassVar[type[KindEdits]] = LabelReplyEdits

    reasons: ClassVar[tuple[Reason, ...]] = (
        Reason("reader_right", "The reader's guess was right", "approve"),
        Reason("reader_wrong", "The reader's guess was wrong; relabelled", "approve"),
        Reason("not_a_reply", "Not a reply to the audit", "reject"),
        Reason("needs_contact", "A person must contact the rider first", "reject"),
    )

    def approve(
        self, action: PendingAction, ask: LabelReply, *, by: User, note: str, edits: dict[str, Any]
    ) -> None:
        """Label with ``edits["bucket"]`` (the reader's guess when none is given)."""
        bucket = edits.get("bucket") or ask.suggested_bucket
        if bucket not in BUCKETS:
            raise InvalidDecision(f"label the reply as one of: {', '.join(BUCKETS)}")
        claim(action, PendingAction.Status.APPROVED, by, note)
        message = row(Message.objects.select_related("employee"), action.message_id)
        message.bucket = bucket
        message.bucket_confidence = 1.0
        message.classification = {**message.classification, "labelled_by": by.get_username()}
        message.save(update_fields=["bucket", "bucket_confidence", "classification"])
        case = row(Case.objects.select_related("vanpool"), action.case_id)
        if case.status == Case.Status.CLOSED:
            record_result(action, {"bucket": bucket, "outcome": "case closed"})
            return
        assert message.employee is not None  # only a known rider's reply is sent for labelling
        outcome = act_on_bucket(ReplyContext(case, message, message.employee), bucket, actor=by)
        record_result(action, {"bucket": bucket, "outcome": outcome})
