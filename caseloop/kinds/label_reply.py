"""Deciding label_reply: the reply gets the person's bucket and is acted on as if read so."""

from typing import Any

from django.contrib.auth.models import User

from caseloop.kinds.base import InvalidDecision, KindDecision, claim, record_result, row
from caseloop.loop.buckets import act_on_bucket
from caseloop.loop.reading import ReplyContext
from cases.kinds import LabelReply
from cases.models import Case, PendingAction
from outreach.models import Message

BUCKETS = tuple(b for b in Message.Bucket.values if b)


class LabelReplyDecision(KindDecision[LabelReply]):
    payload_class = LabelReply

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
