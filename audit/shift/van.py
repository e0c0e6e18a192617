"""The van's schedule: its own, else its riders' majority shift."""

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Literal

from agents.contracts import Citation
from audit.facts import RiderFacts, ShiftFacts, VanpoolFacts
from audit.shift.readings import RiderShift, Schedule, Unreadable, read_weekly

ScheduleSource = Literal["vanpool", "majority_shift"]


@dataclass(frozen=True)
class VanSchedule:
    schedule: Schedule
    source: ScheduleSource
    hours: str  # "Mon–Fri 07:00–15:30"
    provenance: str  # where the hours came from, for the vanpool's reasoning
    cites: tuple[Citation, ...]

    @property
    def sentence_hours(self) -> str:
        """The hours as a rider's own reason states them, naming a borrowed schedule."""
        borrowed = " (its riders' majority shift)" if self.source == "majority_shift" else ""
        return f"{self.hours}{borrowed}"


def read_van_schedule(facts: VanpoolFacts, shifts: dict[str, RiderShift]) -> VanSchedule:
    """The van's weekly schedule, else the plurality of its riders' readable shifts.

    Raises Unreadable when the van's own schedule is malformed, or it has none
    and no single shift leads among its riders.
    """
    own = Citation(record="vanpool", id=facts.vanpool_id, field="schedule")
    if facts.schedule:
        try:
            schedule = read_weekly(facts.schedule, "schedule")
        except Unreadable as exc:
            raise Unreadable(exc.value, f"the van {exc.reason}") from None
        return VanSchedule(schedule, "vanpool", schedule.describe(), "its own schedule", (own,))
    return _majority_schedule(facts, shifts, own)


def _majority_schedule(
    facts: VanpoolFacts, shifts: dict[str, RiderShift], own: Citation
) -> VanSchedule:
    # Riders are grouped by the hours they work rather than by shift ID: two
    # shift records with the same days and hours are the same trip for the van.
    groups: dict[Hashable, list[RiderFacts]] = {}
    for rider in facts.riders:
        shift = shifts.get(rider.employee_id)
        if shift is not None and not shift.readings:  # hours read two ways cast no vote
            groups.setdefault(shift.schedule.key(), []).append(rider)
    ranked = sorted(groups.values(), key=len, reverse=True)
    if not ranked:
        raise Unreadable("", "the van has no schedule and none of its riders' shifts can be read")
    if len(ranked) > 1 and len(ranked[0]) == len(ranked[1]):
        tied = ", ".join(_shift_label(group) for group in ranked if len(group) == len(ranked[0]))
        raise Unreadable(
            tied, f"the van has no schedule and no majority shift among its riders (a tie: {tied})"
        )
    winners = ranked[0]
    # Every rider in a group has a readable shift; name the group by its commonest record.
    shift_id = Counter(_shift_of(rider).shift_id for rider in winners).most_common(1)[0][0]
    record = next(_shift_of(r) for r in winners if _shift_of(r).shift_id == shift_id)
    rider_shift = shifts[winners[0].employee_id]
    cite = Citation(record="shift", id=shift_id, field=rider_shift.field)
    provenance = (
        f"no schedule of its own: its riders' majority shift, {record.name or shift_id}, "
        f"{len(winners)} of {len(facts.riders)} riders"
    )
    return VanSchedule(
        rider_shift.schedule,
        "majority_shift",
        rider_shift.schedule.describe(),
        provenance,
        (own, cite),
    )


def _shift_of(rider: RiderFacts) -> ShiftFacts:
    if rider.shift is None:  # only riders with a readable shift are grouped
        raise ValueError(f"{rider.employee_id} has no shift")
    return rider.shift


def _shift_label(group: list[RiderFacts]) -> str:
    shift = _shift_of(group[0])
    return f"{shift.name or shift.shift_id} ×{len(group)}"
