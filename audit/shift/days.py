"""The days of the audit window: compared with the van's, excused by leave, or off its days."""

import datetime as dt
from dataclasses import dataclass, field

from agents.contracts import Citation
from audit.facts import LeaveSpan, RiderFacts
from audit.shift.readings import Schedule
from vanpools.schedules import Span, minutes_of_day

MINUTES_PER_DAY = 24 * 60


@dataclass(frozen=True)
class DayCheck:
    date: dt.date
    rider: Span
    van: Span
    miss: int  # the larger of the start and end gaps, in minutes
    matches: bool


@dataclass
class Tally:
    compared: list[DayCheck] = field(default_factory=list)
    on_leave: int = 0  # working days excused by leave
    leave_on_van_days: int = 0  # of those, days the van also runs
    off_van: list[dt.date] = field(default_factory=list)  # working days the van does not run
    leave_cites: dict[Citation, None] = field(default_factory=dict)  # ordered set

    @property
    def mismatched(self) -> list[DayCheck]:
        return [check for check in self.compared if not check.matches]


def clock_gap(a: str, b: str) -> int:
    """Minutes between two times of day on a 24-hour circle (23:50 and 00:10 are 20 apart)."""
    gap = abs(minutes_of_day(a) - minutes_of_day(b)) % MINUTES_PER_DAY
    return min(gap, MINUTES_PER_DAY - gap)


def compare_day(day: dt.date, rider: Span, van: Span, tolerance: int) -> DayCheck:
    # Start against arrival and end against departure, each on the circular
    # clock, so a 22:00→06:30 rider matches a 22:15→06:30 van without special
    # cases, while a night shift against a day van is hours apart at both ends.
    miss = max(clock_gap(rider.start, van.start), clock_gap(rider.end, van.end))
    return DayCheck(day, rider, van, miss, miss <= tolerance)


def tally_window(
    rider: RiderFacts, schedule: Schedule, van: Schedule, window: list[dt.date], tolerance: int
) -> Tally:
    tally = Tally()
    for day in window:
        span = schedule.span_on(day)
        if span is None:
            continue  # not a working day: nothing to ride
        van_span = van.span_on(day)
        excuse = _leave_on(rider, day)
        if excuse is not None:
            tally.on_leave += 1
            tally.leave_on_van_days += van_span is not None
            tally.leave_cites[excuse] = None
        elif van_span is None:
            tally.off_van.append(day)
        else:
            tally.compared.append(compare_day(day, span, van_span, tolerance))
    return tally


def _leave_on(rider: RiderFacts, day: dt.date) -> Citation | None:
    """The record that excuses this date, if any: a leave span, else HR's on-leave status."""
    for leave in rider.leave:
        if leave.covers(day):
            return _leave_cite(rider.employee_id, leave)
    if rider.status == "on_leave":
        # Marked on leave with no dates: HR's status is current, so it excuses the window.
        return Citation(record="employee", id=rider.employee_id, field="status")
    return None


def _leave_cite(employee_id: str, leave: LeaveSpan) -> Citation:
    # Leave rows have no public ID; the employee and the dates identify one.
    span = f"{leave.start.isoformat()}..{leave.end.isoformat()}"
    return Citation(record="leave", id=f"{employee_id}:{span}", field=leave.kind)
