"""decide_verification: a person rules pass or fail where the rules could not decide."""

import datetime as dt
from typing import ClassVar, Literal, Self

from pydantic import Field

from cases.kinds.base import ReviewPayload


class DecideVerification(ReviewPayload):
    """Riders and checks an audit left ``unknown``, with the facts the rules could not use."""

    kind: ClassVar[str] = "decide_verification"
    label: ClassVar[str] = "decide verification"
    asked_with: ClassVar[frozenset[str]] = frozenset({"checks", "riders"})

    checks: list[str] = Field(default_factory=list)
    # employee_id → {check: "unknown"}: what the person rules on.
    riders: dict[str, dict[str, Literal["unknown"]]] = Field(default_factory=dict)
    audit_date: dt.date | None = None
    details: str = ""
    # employee_id → check → the fact the rules could not use (schedule text, ZIP…):
    # a ruling stands while it is unchanged (caseloop.audits.with_standing_rulings).
    inputs: dict[str, dict[str, str]] = Field(default_factory=dict)

    def employee_ids(self) -> frozenset[str]:
        return frozenset(self.riders)

    @classmethod
    def sample(cls, employee_id: str) -> Self:
        return cls(
            checks=["shift"],
            riders={employee_id: {"shift": "unknown"}},
            audit_date=dt.date(2026, 11, 23),
            details="HR's schedule note could not be read.",
            inputs={employee_id: {"shift": "nights mostly, some days"}},
        )
