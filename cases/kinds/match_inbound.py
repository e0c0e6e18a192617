"""match_inbound: a person says which case an email belongs to (its sender or thread unknown)."""

from typing import ClassVar, Self

from pydantic import AliasChoices, Field

from cases.kinds.base import ReviewPayload


class MatchInbound(ReviewPayload):
    """Why the email was not matched; the action links the email, and its case when known."""

    kind: ClassVar[str] = "match_inbound"
    label: ClassVar[str] = "match inbound email"

    reason: str = ""
    # Stored under "from" (the email's From).
    sender: str = Field(
        default="",
        validation_alias=AliasChoices("from", "sender"),
        serialization_alias="from",
    )
    subject: str = ""
    # The message could not be read at all (docs/design.md, "quarantined").
    quarantined: bool = False

    @classmethod
    def sample(cls, employee_id: str) -> Self:
        return cls(
            reason="the reply token matches no thread",
            sender="rider@example.com",
            subject="Re: your vanpool seat",
        )
