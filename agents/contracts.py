"""The one contract every specialist returns, whichever backend produced it.

``verdict`` pass | fail | unknown, ``confidence`` 1-5, ``reasoning`` in plain
sentences a rider's manager could read, ``evidence`` as typed items that each
cite the records and fields they came from, and a flag per rider. Ridership,
parking and the vanpool rules return the same shape; the vanpool rules judge the
van, so their evidence names no rider (``employee_id`` is blank) and they flag none.
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Verdict = Literal["pass", "fail", "unknown"]
CheckName = Literal["location", "shift", "ridership", "parking", "vanpool_rules"]


class Citation(BaseModel):
    """Where a fact came from: a record type, its public ID and the field."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    record: Literal[
        "employee",
        "vanpool",
        "shift",
        "leave",
        "seat",
        "holiday",
        "trip",
        "ride_day",
        "badge_swipe",
        "data_coverage",
        "parking_permit",
        "vanpool_month",
    ]
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


class RidershipEvidence(_Evidence):
    """A rider's days aboard against their counted workdays (docs/audit.md, ridership).

    ``calendar`` marks each scheduled workday of the window: ``aboard``,
    ``missed``, ``not_covered`` (no data that day), ``holiday``, ``leave`` or
    ``before_joined`` — what the case page draws.
    """

    type: Literal["ridership_summary"] = "ridership_summary"
    window_start: str
    window_end: str
    rule: str  # "3 days a week (3 of the rider's 5)" or "80 % of workdays"
    # The rule as numbers, for a rider's letter in their language: one of the two is set.
    min_share: float | None = None
    min_days_per_week: float | None = None
    scheduled: int  # S: scheduled workdays in the window
    counted: int  # C: not excused
    covered: int  # K: counted and covered by data
    aboard: int  # A: covered days the data shows the rider aboard
    required: int  # R
    min_workdays: int = 0  # fewer counted workdays than this are too few to judge
    sources: list[str] = Field(default_factory=list)  # the kinds of data that covered days
    calendar: dict[str, str] = Field(default_factory=dict)
    note: str = ""


class ParkingEvidence(_Evidence):
    """One permit the rider holds, and whether it overlaps the seat on the audit date."""

    type: Literal["parking_permit"] = "parking_permit"
    permit_id: str
    lot: str
    valid_from: str
    valid_to: str  # "" = no end
    status: str
    kind: str
    seat_joined: str
    in_force: bool  # on the audit date
    conflict: bool  # in force, a standard permit, and the seat active that day


class VanpoolMonthEvidence(_Evidence):
    """A van's month against the §132(f) rules: seats, occupancy, commute share."""

    type: Literal["vanpool_month"] = "vanpool_month"
    employee_id: str = ""  # the van, not a rider
    vanpool_id: str
    month: str  # YYYY-MM
    seats: int | None
    seats_source: Literal["month", "vanpool", "none"]
    trips: int
    passenger_trips: int
    days_operated: int
    trips_source: Literal["trips", "ride_days", "none"]
    average_passengers: float | None  # passenger trips ÷ trips
    occupancy: float | None  # average passengers per trip ÷ seats
    occupancy_percent: int | None
    vehicle_miles: float | None
    miles_per_trip: float | None
    commute_share: float | None
    commute_percent: int | None
    commute_source: Literal["given", "computed", "none"]
    rules: dict[str, Verdict]  # seats, occupancy, commute
    # The bars: {"seats": 6, "occupancy_percent": 50, "commute_percent": 80}.
    minimums: dict[str, float] = Field(default_factory=dict)


class NoDataEvidence(_Evidence):
    """A check the data does not let the rules decide: a gap a person should see."""

    type: Literal["no_data"] = "no_data"
    employee_id: str = ""  # blank: the whole van
    missing: str  # "trips, ride days or badge swipes", "parking permits", …
    detail: str


Evidence = Annotated[
    DistanceEvidence
    | ShiftDayEvidence
    | ShiftSummaryEvidence
    | UnknownEvidence
    | RidershipEvidence
    | ParkingEvidence
    | VanpoolMonthEvidence
    | NoDataEvidence,
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
