"""review_email: a drafted reply (to an escalation) a person sends, edits or drops."""

from typing import ClassVar, Self

from cases.kinds.base import ReviewPayload


class ReviewEmail(ReviewPayload):
    """The draft as written; the action links the rider's message it answers."""

    kind: ClassVar[str] = "review_email"
    label: ClassVar[str] = "review email"
    asked_with: ClassVar[frozenset[str]] = frozenset({"employee_id", "subject", "text"})

    employee_id: str = ""
    to: str = ""
    # The template it was drafted from; "reviewed" when it was not one.
    template: str = "reviewed"
    subject: str = ""
    text: str = ""
    html: str = ""
    # What the reader saw, so the person knows why it is theirs.
    guardrail: str = ""
    reasoning: str = ""
    also: str = ""

    def about(self) -> str:
        return self.employee_id

    @classmethod
    def sample(cls, employee_id: str) -> Self:
        return cls(
            employee_id=employee_id,
            to="rider@example.com",
            template="holding_reply",
            subject="Re: your vanpool seat",
            text="Thank you for your message. A coordinator will write to you within two days.",
            guardrail="asks_for_a_person",
            reasoning="The rider asks to speak to a person.",
        )
