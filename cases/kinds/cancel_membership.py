"""cancel_membership: end a flagged rider's seat — only a person may (docs/design.md step 9)."""

from typing import ClassVar, Self

from pydantic import Field

from cases.kinds.base import ReviewPayload


class CancelMembership(ReviewPayload):
    """Asked at pre_cancel, one per flagged rider; the action links the seat (``rider``)."""

    kind: ClassVar[str] = "cancel_membership"
    label: ClassVar[str] = "cancel membership"
    asked_with: ClassVar[frozenset[str]] = frozenset({"employee_id", "failed_checks", "why"})
    # Proposed on evidence gathered for pre_cancel: once the case moves on, it is stale.
    decided_only_in: ClassVar[str | None] = "pre_cancel"

    employee_id: str = ""
    vanpool_id: str = ""
    # The checks the rider still fails (the evidence the card shows).
    failed_checks: list[str] = Field(default_factory=list)
    # The case's reason and details when it was proposed.
    reason: str = ""
    details: str = ""
    reaudit_count: int = Field(default=0, ge=0)
    # Why the case reached pre_cancel ("no reply by the deadline…").
    why: str = ""

    def about(self) -> str:
        return self.employee_id

    @classmethod
    def sample(cls, employee_id: str) -> Self:
        return cls(
            employee_id=employee_id,
            vanpool_id="VP-1001",
            failed_checks=["location"],
            reason="location_mismatch",
            details="Home 82 miles from the pickup point (limit 50).",
            reaudit_count=1,
            why="no reply by the deadline and the record still fails",
        )
