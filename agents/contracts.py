"""The one contract every specialist returns, whichever backend produced it.

``verdict`` pass | fail | unknown, ``confidence`` 1-5, ``reasoning`` in plain
sentences a rider's manager could read, ``evidence`` as typed items that each
cite the records and fields they came from, and a flag per rider. New checks
(badge swipes, parking) return the same shape.
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Verdict = Literal["pass", "fail", "unknown"]
CheckName = Literal["location", "shift"]


class Citation(BaseModel):
    """Where a fact came from: a record type, its public ID and the field."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    record: Literal["employee", "vanpool", "shift", "leave"]
    id: str
    field: str


class _Evidence(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    employee_id: str
    cites: list[Citation] = Field(default_factory=list)


class DistanceEvidence(_Evidence):
    type: Literal["distance_check"] = "distance_check"
    home_zip: str
    home_source: Literal["stored_coordinates", "zip_centroid"]
    pickup: str  # the vanpool ID whose pickup point was measured to
    pickup_source: Literal["pickup_coordinates", "pickup_zip_centroid", "work_site"]
    straight_miles: float
    miles: float  # commute miles: straight-line × circuity (or the routing provider's)
    threshold_miles: float
    provider: str
    note: str = ""  # e.g. why stored coordinates were passed over for the ZIP


class ShiftDayEvidence(_Evidence):
    """One operating day compared: the rider's hours against the van's."""

    type: Literal["shift_day"] = "shift_day"
    date: str
    day: str
    rider_start: str
    rider_end: str
    van_arrival: str
    van_departure: str
    tolerance_minutes: int
    matches: bool


class ShiftSummaryEvidence(_Evidence):
    """A rider's shift check in one line: days compared, mismatched, excused."""

    type: Literal["shift_summary"] = "shift_summary"
    shift_id: str
    rider_schedule: str
    van_schedule: str
    van_schedule_source: Literal["vanpool", "majority_shift"]
    days_compared: int
    days_mismatched: int
    days_on_leave: int
    # Working days in the window on which the van does not run (ISO dates):
    # the evidence when a rider never works a day the van runs.
    off_van_days: list[str] = Field(default_factory=list)
    note: str = ""


class UnknownEvidence(_Evidence):
    """A fact the rules could not use (bad ZIP, unparseable schedule…)."""

    type: Literal["unknown_input"] = "unknown_input"
    value: str
    reason: str


Evidence = Annotated[
    DistanceEvidence | ShiftDayEvidence | ShiftSummaryEvidence | UnknownEvidence,
    Field(discriminator="type"),
]


class RiderFlag(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    employee_id: str
    verdict: Verdict
    reason: str


class SpecialistResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    check: CheckName
    verdict: Verdict
    confidence: int = Field(ge=1, le=5)
    reasoning: str
    evidence: list[Evidence] = Field(default_factory=list)
    riders: list[RiderFlag] = Field(default_factory=list)

    @property
    def flagged(self) -> list[str]:
        """Employee IDs whose verdict is not pass."""
        return [flag.employee_id for flag in self.riders if flag.verdict != "pass"]

    def rider_verdicts(self) -> dict[str, str]:
        return {flag.employee_id: flag.verdict for flag in self.riders}


def combine_verdicts(verdicts: list[str]) -> Verdict:
    """Any fail fails; otherwise any unknown is unknown; all pass (or none) passes."""
    if "fail" in verdicts:
        return "fail"
    if "unknown" in verdicts:
        return "unknown"
    return "pass"


class ModelJudgement(BaseModel):
    """What a model may answer for a specialist: verdicts only, never evidence.

    Evidence stays the rules engine's (it cites records); the model reads what
    the rules could not, and its answer is cross-checked against them.
    """

    model_config = ConfigDict(extra="forbid")
    check: CheckName
    verdict: Verdict
    confidence: int = Field(ge=1, le=5)
    reasoning: str
    riders: list[RiderFlag]


class ModelDayHours(BaseModel):
    """One working day as a model read it from HR's text, in the stored weekly shape."""

    model_config = ConfigDict(extra="forbid")
    day: Literal["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    start: str = Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    end: str = Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")


class ModelShiftFlag(BaseModel):
    model_config = ConfigDict(extra="forbid")
    employee_id: str
    verdict: Verdict
    reason: str
    # The rider's working week as the model read it (empty: it could not).
    # The rules check this reading against the van's schedule themselves.
    schedule: list[ModelDayHours] = Field(default_factory=list)


class ModelShiftJudgement(BaseModel):
    """The shift specialist's answer: a verdict per rider and the week it read.

    A verdict alone cannot be checked; a week can: the rules compare it with
    the van's schedule, and only a confident reading they find fits may pass a
    rider without a person (``audit/resolve.py``).
    """

    model_config = ConfigDict(extra="forbid")
    check: CheckName
    verdict: Verdict
    confidence: int = Field(ge=1, le=5)
    reasoning: str
    riders: list[ModelShiftFlag]
