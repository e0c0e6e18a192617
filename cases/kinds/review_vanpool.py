"""review_vanpool: a van below the §132(f) commuter-vehicle rules, for its coordinator.

The finding is about the van, not a rider: nobody is written to. The
coordinator either acts on it (reseats the van, replaces it, has the
operator's report corrected) or finds it wrong.
"""

import datetime as dt
from typing import ClassVar, Literal, Self

from pydantic import Field

from cases.kinds.base import ReviewPayload

Verdict = Literal["pass", "fail", "unknown"]


class ReviewVanpool(ReviewPayload):
    """Which rules the van's month fails, with the figures the audit read."""

    kind: ClassVar[str] = "review_vanpool"
    label: ClassVar[str] = "review a van's §132(f) finding"
    asked_with: ClassVar[frozenset[str]] = frozenset({"vanpool_id", "month", "rules"})
    # A month's figures for the coordinator: no rider waits on it, so a week.
    sla_hours: ClassVar[int] = 168

    vanpool_id: str = ""
    month: str = ""  # YYYY-MM
    # seats, occupancy, commute → pass | fail | unknown
    rules: dict[str, Verdict] = Field(default_factory=dict)
    details: str = ""  # the check's reasoning: the month's figures in sentences
    audit_date: dt.date | None = None

    @property
    def failed(self) -> list[str]:
        return [rule for rule, verdict in self.rules.items() if verdict == "fail"]

    @classmethod
    def sample(cls, employee_id: str) -> Self:
        return cls(
            vanpool_id="VP-115",
            month="2026-10",
            rules={"seats": "pass", "occupancy": "pass", "commute": "fail"},
            details="VP-115 in 2026-10: 11 seats not counting the driver (at least 6 needed). "
            "Commute share 72 % as reported (at least 80 % needed). Fails: commute.",
            audit_date=dt.date(2026, 11, 23),
        )
