"""label_reply: a person says which bucket a rider's reply belongs in (the reader was unsure)."""

from typing import ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field

from cases.kinds.base import ReviewPayload


class HoldingReply(BaseModel):
    """Drafted in advance: labelled an escalation, this is what goes for approval."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subject: str
    text: str


class LabelReply(ReviewPayload):
    """The reader's best guess and why a person; the action links the reply."""

    kind: ClassVar[str] = "label_reply"
    label: ClassVar[str] = "label reply"

    # "" when the reader had no guess (a flood of emails is not read at all).
    suggested_bucket: str = ""
    confidence: float | None = Field(default=None, ge=0, le=1)
    reasoning: str = ""
    why: str = ""
    employee_id: str = ""
    # Beside an escalation, the likeliest ordinary reading.
    also: str = ""
    holding_reply: HoldingReply | None = None
    # The rider sent more than INBOUND_SENDER_HOURLY_LIMIT emails; the rest are kept unread.
    flood: bool = False

    def about(self) -> str:
        return self.employee_id

    @classmethod
    def sample(cls, employee_id: str) -> Self:
        return cls(
            suggested_bucket="question",
            confidence=0.4,
            reasoning="The reply asks what to do next.",
            why="the reader was not confident",
            employee_id=employee_id,
            holding_reply=HoldingReply(
                subject="Re: your vanpool seat", text="Thank you; a coordinator will reply."
            ),
        )
