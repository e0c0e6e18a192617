"""The shift specialist: does each rider work the hours the van runs?

A pure function of preloaded facts (no database, no clock): for every date of
the audit window on which the van runs and the rider works, the rider's start
must sit within a tolerance of the van's arrival at the work site and the
rider's end within a tolerance of its departure. Leave excuses a date. A
schedule the rules cannot read makes the rider ``unknown`` — for the model or a
human — never a silent pass or fail.
"""

import datetime as dt
import json
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

from django.conf import settings

from agents.contracts import (
    Citation,
    Evidence,
    RiderFlag,
    ShiftDayEvidence,
    ShiftSummaryEvidence,
    SpecialistResult,
    UnknownEvidence,
    Verdict,
    combine_verdicts,
)
from audit.facts import LeaveSpan, RiderFacts, ShiftFacts, VanpoolFacts
from vanpools.hr_text import (
    AmbiguousHours,
    NoDaysGiven,
    RotatingHours,
    RotationLeg,
    read_schedule_text,
    readings_for_part_of_day,
)
from vanpools.schedules import (
    WEEKDAYS,
    DaySpan,
    Rotation,
    Span,
    format_compact_weekly,
    minutes_of_day,
    parse_rotation,
    parse_weekly,
)

MINUTES_PER_DAY = 24 * 60
# A miss this close to the tolerance may be rounding in HR's data, not a
# different shift: still a fail, but said with less confidence.
BORDERLINE_MINUTES = 15
MAX_DAY_ITEMS = 3  # mismatched days kept as evidence per rider; the summary counts them all
UNKNOWN_CONFIDENCE = 2
RECHECK_CONFIDENCE = 3  # a pass that rests on leave or an empty window, not on compared days
DEFAULT_CASE_AUDIT_DATE = "2026-11-23"

ScheduleSource = Literal["vanpool", "majority_shift"]


# --- Schedules the rules can read ------------------------------------------------------


@dataclass(frozen=True)
class WeeklySchedule:
    spans: tuple[DaySpan, ...]  # in week order; a missing day is a day off

    def span_on(self, day: dt.date) -> Span | None:
        weekday = WEEKDAYS[day.weekday()]
        return next((span for span in self.spans if span.day == weekday), None)

    def describe(self) -> str:
        # HR's compact form keeps a night crew's week whole ("Sun–Thu"), which
        # describe_weekly would split at Monday; en dashes as in all our text.
        compact = format_compact_weekly(list(self.spans))
        return compact.replace(",", "/").replace(";", ",").replace("-", "–")

    def key(self) -> Hashable:
        return tuple((span.day, span.start, span.end) for span in self.spans)


@dataclass(frozen=True)
class RotatingSchedule:
    rotation: Rotation

    def span_on(self, day: dt.date) -> Span | None:
        return self.rotation.span_on(day)

    def describe(self) -> str:
        days = self.rotation.days
        working = [span for span in days if span is not None]
        hours = " / ".join(dict.fromkeys(_hours(span) for span in working))
        return (
            f"rotating {len(working)} on / {len(days) - len(working)} off {hours}, "
            f"cycle from {self.rotation.cycle_start.isoformat()}"
        )

    def key(self) -> Hashable:
        days = tuple((span.start, span.end) if span else None for span in self.rotation.days)
        return (self.rotation.cycle_start, days)


Schedule = WeeklySchedule | RotatingSchedule


ShiftField = Literal["schedule", "rotation", "schedule_text"]


class Unreadable(Exception):
    """A schedule the rules cannot use: what was on record, in which field, and why."""

    def __init__(self, value: str, reason: str, field: ShiftField = "schedule") -> None:
        super().__init__(reason)
        self.value = value
        self.reason = reason
        self.field = field


@dataclass(frozen=True)
class RiderShift:
    """A rider's shift read into a schedule, and which field of the shift it came from.

    ``readings`` holds every plausible schedule when HR's text has no am/pm
    ("9 to 5"): the rider is judged on each, and decided only if all agree.
    """

    schedule: Schedule
    field: ShiftField
    readings: tuple[Schedule, ...] = ()
    doubt: str = ""  # what makes HR's text read several ways, for the rider's sentence
    label: str = ""  # how the rider's hours are named when no one reading is theirs


def read_shift(shift: ShiftFacts | None) -> RiderShift:
    """Weekly days, else a rotation, else HR's text (hr_text); raises Unreadable otherwise."""
    if shift is None:
        raise Unreadable("", "has no shift on record")
    if shift.schedule:
        return RiderShift(_weekly(shift.schedule, "weekly schedule"), "schedule")
    if shift.rotation:
        return RiderShift(_rotating(shift.rotation), "rotation")
    text = (shift.text or "").strip()
    if not text:
        raise Unreadable("", f"has shift {shift.shift_id} with no days, rotation or text")
    try:
        spans = read_schedule_text(text)
    except AmbiguousHours as ambiguous:
        # A shift named "Warehouse days" keeps only the readings that start in the day.
        kept = readings_for_part_of_day(ambiguous.readings, shift.name, text)
        if len(kept) == 1:
            return RiderShift(WeeklySchedule(tuple(kept[0])), "schedule_text")
        readings = tuple(WeeklySchedule(tuple(reading)) for reading in kept)
        shown = " or ".join(reading.describe() for reading in readings)
        days_differ = "lone day letter" in str(ambiguous)
        doubt = "HR's text names a day letter two ways" if days_differ else "HR's text has no am/pm"
        return RiderShift(readings[0], "schedule_text", readings, f"{doubt}: read as {shown}")
    except RotatingHours as rotation:
        return _rotation_shift(rotation.legs)
    except NoDaysGiven as no_days:
        # Any day of the week could be theirs: one reading per day and hours.
        readings = tuple(
            WeeklySchedule(tuple(parse_weekly([{"day": day, "start": start, "end": end}])))
            for start, end in no_days.hours
            for day in WEEKDAYS
        )
        hours = " or ".join(f"{start}–{end}" for start, end in no_days.hours)
        doubt = f"HR's text gives hours ({hours}) but no days: read on each day of the week"
        return RiderShift(readings[0], "schedule_text", readings, doubt)
    except ValueError:
        raise Unreadable(
            text,
            f"has shift {shift.shift_id} written as free text the rules cannot read",
            "schedule_text",
        ) from None
    return RiderShift(WeeklySchedule(tuple(spans)), "schedule_text")


@dataclass(frozen=True)
class RotationShift(RiderShift):
    """HR's text names two or more sets of hours worked in turn ("D/N rotation").

    ``legs`` holds each turn's readings; a turn that names no days is read on
    each day of the week, since a crew rotation works every day in turn.
    """

    legs: tuple[tuple[Schedule, ...], ...] = ()


def _rotation_shift(legs: list[RotationLeg]) -> RotationShift:
    read = []
    for leg in legs:
        if leg.readings:
            read.append(tuple(WeeklySchedule(tuple(reading)) for reading in leg.readings))
        else:
            read.append(
                tuple(
                    WeeklySchedule(tuple(parse_weekly([{"day": d, "start": s, "end": e}])))
                    for s, e in leg.hours
                    for d in WEEKDAYS
                )
            )
    shown = " / ".join(_leg_label(leg, original) for leg, original in zip(read, legs, strict=True))
    every = tuple(reading for leg in read for reading in leg)  # cast no vote for the majority
    return RotationShift(
        every[0], "schedule_text", every, f"HR's text rotates between {shown}", legs=tuple(read)
    )


def _leg_label(leg: tuple[Schedule, ...], original: RotationLeg) -> str:
    if not original.readings:
        return " or ".join(f"{s}–{e}" for s, e in original.hours) + " (days not named)"
    return " or ".join(reading.describe() for reading in leg)


def _weekly(data: object, what: str) -> WeeklySchedule:
    # Stored JSON can hold anything an import or an admin typed: any shape
    # error becomes Unreadable, never an exception out of the audit.
    try:
        return WeeklySchedule(tuple(parse_weekly(data)))
    except (ValueError, TypeError) as exc:
        raise Unreadable(_as_text(data), f"has a {what} that cannot be read ({exc})") from None


def _rotating(data: object) -> RotatingSchedule:
    try:
        return RotatingSchedule(parse_rotation(data))
    except (ValueError, TypeError) as exc:
        raise Unreadable(
            _as_text(data), f"has a rotation that cannot be read ({exc})", "rotation"
        ) from None


def _as_text(data: object) -> str:
    if isinstance(data, str):
        return data[:300]
    try:
        text = json.dumps(data, default=str)
    except (TypeError, ValueError):
        text = repr(data)
    return text[:300]


def _hours(span: Span) -> str:
    return f"{span.start}–{span.end}"


# --- The van's schedule: its own, else its riders' majority shift ----------------------


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
            schedule = _weekly(facts.schedule, "schedule")
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


# --- One rider across the audit window -------------------------------------------------


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


@dataclass(frozen=True)
class Audit:
    """What every rider is judged against."""

    vanpool_id: str
    van: VanSchedule
    window: list[dt.date]
    tolerance: int


@dataclass
class RiderOutcome:
    employee_id: str
    verdict: Verdict
    confidence: int
    reason: str  # the rider's flag reason, and their sentence in the vanpool's reasoning
    evidence: list[Evidence]
    recheck: bool = False  # a pass resting on leave or an empty window, not on compared days


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    confidence: int  # before lowering for where the schedules came from
    sentence: str
    note: str = ""
    recheck: bool = False


def judge_rider(rider: RiderFacts, shift: RiderShift, audit: Audit) -> RiderOutcome:
    if isinstance(shift, RotationShift):
        return _judge_rotation(rider, shift, audit)
    if shift.readings:
        return _judge_readings(rider, shift, audit)
    tally = tally_window(rider, shift.schedule, audit.van.schedule, audit.window, audit.tolerance)
    judgement = _judge(tally, audit)
    # A schedule borrowed from the majority, or read from HR's free text, is
    # one more inference between the records and the verdict.
    confidence = judgement.confidence - (audit.van.source == "majority_shift")
    notes = [judgement.note]
    if shift.field == "schedule_text" and rider.shift is not None:
        confidence -= 1
        notes.append(f"read from HR's text “{rider.shift.text.strip()}”")
    rider_cites = _rider_cites(rider, shift.field)
    summary = ShiftSummaryEvidence(
        employee_id=rider.employee_id,
        cites=[*rider_cites, *audit.van.cites, *tally.leave_cites],
        shift_id=rider.shift.shift_id if rider.shift else "",
        rider_schedule=shift.schedule.describe(),
        van_schedule=audit.van.hours,
        van_schedule_source=audit.van.source,
        days_compared=len(tally.compared),
        days_mismatched=len(tally.mismatched),
        days_on_leave=tally.on_leave,
        off_van_days=[day.isoformat() for day in tally.off_van],
        note="; ".join(filter(None, notes)),
    )
    days = [
        _day_evidence(rider.employee_id, check, audit, rider_cites)
        for check in tally.mismatched[:MAX_DAY_ITEMS]
    ]
    return RiderOutcome(
        employee_id=rider.employee_id,
        verdict=judgement.verdict,
        confidence=max(1, min(5, confidence)),
        reason=f"{rider.employee_id} works {_rider_label(rider, shift)}. {judgement.sentence}",
        evidence=[summary, *days],
        recheck=judgement.recheck,
    )


def _judge_readings(rider: RiderFacts, shift: RiderShift, audit: Audit) -> RiderOutcome:
    """HR's hours without am/pm: decided when every reading agrees, else unknown."""
    text = rider.shift.text.strip() if rider.shift else ""
    outcomes = [
        judge_rider(rider, RiderShift(reading, shift.field, label=f"“{text}”"), audit)
        for reading in shift.readings
    ]
    verdicts = [outcome.verdict for outcome in outcomes]
    if len(set(verdicts)) > 1:
        readings = ", ".join(
            f"{reading.describe()} would {verdict}"
            for reading, verdict in zip(shift.readings, verdicts, strict=True)
        )
        problem = Unreadable(
            text,
            f"has a shift that reads several ways, and the readings disagree ({shift.doubt}; "
            f"{readings})",
            "schedule_text",
        )
        sentence = f"{rider.employee_id} {problem.reason} (“{text}”)."
        cites = _rider_cites(rider, "schedule_text")
        return unknown_rider(rider.employee_id, problem, cites, sentence)
    first = outcomes[0]
    summary, *days = first.evidence
    assert isinstance(summary, ShiftSummaryEvidence)  # judge_rider leads with its summary
    every = f"{shift.doubt}; each reading {'fails' if first.verdict == 'fail' else 'passes'}"
    summary = summary.model_copy(update={"note": f"{summary.note}; {every}"})
    return RiderOutcome(
        employee_id=rider.employee_id,
        verdict=first.verdict,
        confidence=max(1, first.confidence - 1),
        reason=f"{first.reason} {every[0].upper()}{every[1:]}.",
        evidence=[summary, *days],
        recheck=any(outcome.recheck for outcome in outcomes),
    )


def _judge_rotation(rider: RiderFacts, shift: RotationShift, audit: Audit) -> RiderOutcome:
    """Every leg of a rotation is worked in turn: one that misses the van is a fail.

    A leg misses when each of its readings mismatches the van on the days compared;
    it fits when each reading that meets a van day matches. Readings that meet no
    van day (a leg read on a Saturday for a weekday van) say nothing either way.
    The rotation passes only when every leg fits; anything else goes to a person.
    """
    text = rider.shift.text.strip() if rider.shift else ""
    states: list[tuple[str, Schedule | None]] = []
    for leg in shift.legs:
        tallies = [
            (
                reading,
                tally_window(rider, reading, audit.van.schedule, audit.window, audit.tolerance),
            )
            for reading in leg
        ]
        counted = [(reading, tally) for reading, tally in tallies if tally.compared]
        if counted and all(tally.mismatched for _, tally in counted):
            states.append(("fail", counted[0][0]))
        elif counted and not any(tally.mismatched for _, tally in counted):
            states.append(("pass", counted[0][0]))
        else:
            states.append(("unknown", None))
    verdicts = [state for state, _ in states]
    deciding: Verdict | None = (
        "fail" if "fail" in verdicts else "pass" if set(verdicts) == {"pass"} else None
    )
    if deciding is None:
        problem = Unreadable(
            text,
            f"has a rotation whose turns cannot all be settled against the van ({shift.doubt})",
            "schedule_text",
        )
        sentence = f"{rider.employee_id} {problem.reason} (“{text}”)."
        return unknown_rider(
            rider.employee_id, problem, _rider_cites(rider, "schedule_text"), sentence
        )
    reading = next(schedule for state, schedule in states if state == deciding)
    assert reading is not None
    first = judge_rider(rider, RiderShift(reading, shift.field, label=f"“{text}”"), audit)
    every = (
        f"{shift.doubt}; the turn read as {reading.describe()} misses the van"
        if deciding == "fail"
        else f"{shift.doubt}; every turn fits the van"
    )
    summary, *days = first.evidence
    # judge_rider's first item is always the rider's ShiftSummaryEvidence.
    assert isinstance(summary, ShiftSummaryEvidence)
    summary = summary.model_copy(update={"note": f"{summary.note}; {every}"})
    return RiderOutcome(
        employee_id=rider.employee_id,
        verdict=deciding,
        confidence=max(1, first.confidence - 1),
        reason=f"{first.reason} {every[0].upper()}{every[1:]}.",
        evidence=[summary, *days],
        recheck=first.recheck,
    )


def _judge(tally: Tally, audit: Audit) -> Judgement:
    if tally.mismatched:
        return Judgement("fail", _fail_confidence(tally.mismatched, audit), _mismatch(tally, audit))
    if tally.compared:
        leave = f"; {_days(tally.on_leave)} excused as leave" if tally.on_leave else ""
        return Judgement(
            "pass", 5, f"Matches the van on all {_days(len(tally.compared))} compared{leave}."
        )
    if tally.off_van and not tally.leave_on_van_days:
        # Working, not on leave, yet never on a day the van runs: the seat
        # cannot be serving this rider's commute.
        worked = ", ".join(_date_label(day) for day in tally.off_van)
        sentence = (
            f"The van runs {audit.van.sentence_hours}: it does not run on any day they work "
            f"in the audit window ({worked})."
        )
        return Judgement("fail", 5, sentence, "the van does not run on any day this rider works")
    if tally.on_leave:
        # Leave covers every day they would ride: nothing to hold against
        # them this week, nor anything that shows the seat is used.
        note = "on leave through the audit window; re-check later"
        sentence = "They are on leave on every day they would ride in the audit window"
        return Judgement(
            "pass", RECHECK_CONFIDENCE, f"{sentence}; re-check later.", note, recheck=True
        )
    note = "no working days in the audit window; re-check later"
    return Judgement("pass", RECHECK_CONFIDENCE, f"They have {note}.", note, recheck=True)


def _fail_confidence(mismatched: list[DayCheck], audit: Audit) -> int:
    # If even the worst miss is within a quarter hour of the tolerance, the
    # rider may simply be recorded with rounded times: a softer fail.
    worst = max(check.miss for check in mismatched)
    return 3 if worst <= audit.tolerance + BORDERLINE_MINUTES else 5


def _mismatch(tally: Tally, audit: Audit) -> str:
    compared, mismatched = len(tally.compared), len(tally.mismatched)
    if compared == 1:
        count = "The one day compared does not match"
    elif mismatched == compared:
        count = f"None of the {compared} days compared match"
    else:
        count = f"{mismatched} of the {compared} days compared do not match"
    first = tally.mismatched[0]
    return (
        f"The van runs {audit.van.sentence_hours}. {count} "
        f"(e.g. {_date_label(first.date)}: {_hours(first.rider)} against the van's "
        f"{_hours(first.van)}, {first.miss} minutes off, tolerance {audit.tolerance})."
    )


def _rider_label(rider: RiderFacts, shift: RiderShift) -> str:
    name = rider.shift.name if rider.shift else ""
    label = ", ".join(filter(None, [name, "part-time" if rider.time_type == "part_time" else ""]))
    return (shift.label or shift.schedule.describe()) + (f" ({label})" if label else "")


def _days(count: int) -> str:
    return f"{count} day" if count == 1 else f"{count} days"


def _date_label(day: dt.date) -> str:
    return f"{WEEKDAYS[day.weekday()]} {day.isoformat()}"


def _rider_cites(rider: RiderFacts, field_name: ShiftField) -> list[Citation]:
    cites = [Citation(record="employee", id=rider.employee_id, field="shift")]
    if rider.shift is not None:
        cites.append(Citation(record="shift", id=rider.shift.shift_id, field=field_name))
    return cites


def _day_evidence(
    employee_id: str, check: DayCheck, audit: Audit, rider_cites: list[Citation]
) -> ShiftDayEvidence:
    return ShiftDayEvidence(
        employee_id=employee_id,
        cites=[*rider_cites, *audit.van.cites],
        date=check.date.isoformat(),
        day=WEEKDAYS[check.date.weekday()],
        rider_start=check.rider.start,
        rider_end=check.rider.end,
        van_arrival=check.van.start,
        van_departure=check.van.end,
        tolerance_minutes=audit.tolerance,
        matches=check.matches,
    )


def unknown_rider(
    employee_id: str, problem: Unreadable, cites: list[Citation], sentence: str
) -> RiderOutcome:
    evidence = UnknownEvidence(
        employee_id=employee_id, cites=cites, value=problem.value, reason=problem.reason
    )
    return RiderOutcome(employee_id, "unknown", UNKNOWN_CONFIDENCE, sentence, [evidence])


# --- The vanpool ------------------------------------------------------------------------


def check_shift(
    facts: VanpoolFacts,
    audit_date: dt.date,
    *,
    tolerance_minutes: int | None = None,
    window_days: int | None = None,
) -> SpecialistResult:
    """Judge every rider's shift against the van's over the audit window."""
    tolerance = settings.SHIFT_TOLERANCE_MINUTES if tolerance_minutes is None else tolerance_minutes
    days = settings.AUDIT_WINDOW_DAYS if window_days is None else window_days
    if tolerance < 0 or days < 1:
        raise ValueError("tolerance_minutes must be ≥ 0 and window_days ≥ 1")
    window = [audit_date + dt.timedelta(days=offset) for offset in range(days)]
    shifts, outcomes = _read_rider_shifts(facts)
    try:
        van = read_van_schedule(facts, shifts)
    except Unreadable as problem:
        return _van_unknown(facts, problem, window)
    audit = Audit(facts.vanpool_id, van, window, tolerance)
    for rider in facts.riders:
        if rider.employee_id in shifts:
            outcomes[rider.employee_id] = judge_rider(rider, shifts[rider.employee_id], audit)
    ordered = [outcomes[rider.employee_id] for rider in facts.riders]
    return _result(ordered, _opening(audit))


def _read_rider_shifts(
    facts: VanpoolFacts,
) -> tuple[dict[str, RiderShift], dict[str, RiderOutcome]]:
    """Readable shifts by employee ID, and an unknown outcome for every other rider."""
    shifts: dict[str, RiderShift] = {}
    unknown: dict[str, RiderOutcome] = {}
    for rider in facts.riders:
        try:
            shifts[rider.employee_id] = read_shift(rider.shift)
        except Unreadable as problem:
            quoted = f" (“{problem.value}”)" if problem.value and len(problem.value) <= 80 else ""
            sentence = f"{rider.employee_id} {problem.reason}{quoted}."
            cites = _rider_cites(rider, problem.field)
            unknown[rider.employee_id] = unknown_rider(rider.employee_id, problem, cites, sentence)
    return shifts, unknown


def _van_unknown(
    facts: VanpoolFacts, problem: Unreadable, window: list[dt.date]
) -> SpecialistResult:
    # Without a van schedule there is nothing to compare against: every rider
    # is unknown, whatever their own shift says.
    cites = [Citation(record="vanpool", id=facts.vanpool_id, field="schedule")]
    reason = f"{problem.reason[0].upper()}{problem.reason[1:]}, so no rider's hours can be checked"
    outcomes = [
        unknown_rider(rider.employee_id, problem, cites, f"{rider.employee_id}: {reason}.")
        for rider in facts.riders
    ]
    opening = f"{facts.vanpool_id}: {reason} ({_window_label(window)})."
    if outcomes:
        opening += f" Unknown: {_names([outcome.employee_id for outcome in outcomes])}."
    return _result(outcomes, opening, itemise=False)


def _opening(audit: Audit) -> str:
    return (
        f"{audit.vanpool_id}: the van runs {audit.van.hours} ({audit.van.provenance}); "
        f"{_window_label(audit.window)}, tolerance {audit.tolerance} minutes."
    )


def _window_label(window: list[dt.date]) -> str:
    return f"audit window {window[0].isoformat()} to {window[-1].isoformat()}"


def _result(
    outcomes: list[RiderOutcome], opening: str, *, itemise: bool = True
) -> SpecialistResult:
    flags = [
        RiderFlag(employee_id=outcome.employee_id, verdict=outcome.verdict, reason=outcome.reason)
        for outcome in outcomes
    ]
    verdict = combine_verdicts([flag.verdict for flag in flags])
    return SpecialistResult(
        check="shift",
        verdict=verdict,
        confidence=_vanpool_confidence(verdict, outcomes),
        reasoning=_reasoning(opening, outcomes) if itemise else opening,
        evidence=[item for outcome in outcomes for item in outcome.evidence],
        riders=flags,
    )


def _vanpool_confidence(verdict: Verdict, outcomes: list[RiderOutcome]) -> int:
    # A fail stands on its clearest failing rider; a pass (or unknown) is only
    # as sure as its least sure rider.
    deciding = [outcome.confidence for outcome in outcomes if outcome.verdict == verdict]
    if not deciding:
        return 5
    return max(deciding) if verdict == "fail" else min(deciding)


def _reasoning(opening: str, outcomes: list[RiderOutcome]) -> str:
    if not outcomes:
        return f"{opening} No active riders to check."
    # Problems first, then passes worth a second look; clean passes in one sentence.
    sentences = [opening]
    sentences += [outcome.reason for outcome in outcomes if outcome.verdict != "pass"]
    sentences += [
        outcome.reason for outcome in outcomes if outcome.verdict == "pass" and outcome.recheck
    ]
    clean = [o.employee_id for o in outcomes if o.verdict == "pass" and not o.recheck]
    if clean:
        verb = "matches" if len(clean) == 1 else "match"
        sentences.append(f"{_names(clean)} {verb} the van on every day compared.")
    return " ".join(sentences)


def _names(ids: list[str]) -> str:
    if len(ids) <= 2:
        return " and ".join(ids)
    return f"{', '.join(ids[:-1])} and {ids[-1]}"


# --- Evaluation cases -------------------------------------------------------------------


def shift_case_facts(case: dict[str, Any]) -> tuple[VanpoolFacts, dt.date]:
    """Facts and audit date for one line of a shift evaluation set (evals/data/shift/*.jsonl)."""
    van = case.get("vanpool") or {}
    facts = VanpoolFacts(
        vanpool_id=str(van.get("vanpool_id") or case.get("id") or "VP-EVAL"),
        schedule=van.get("schedule") or [],
        riders=tuple(
            _case_rider(rider, index) for index, rider in enumerate(case.get("riders", []))
        ),
    )
    return facts, dt.date.fromisoformat(case.get("audit_date") or DEFAULT_CASE_AUDIT_DATE)


def _case_rider(rider: dict[str, Any], index: int) -> RiderFacts:
    leave = [LeaveSpan(*_case_span(entry), "pto") for entry in rider.get("pto", [])]
    leave += [LeaveSpan(*_case_span(entry), "leave") for entry in rider.get("leave", [])]
    return RiderFacts(
        employee_id=str(rider["employee_id"]),
        home_zip=str(rider.get("home_zip", "")),
        shift=_case_shift(rider.get("shift"), index),
        time_type=str(rider.get("time_type", "full_time")),
        status=str(rider.get("status", "active")),
        leave=tuple(leave),
    )


def _case_shift(shift: dict[str, Any] | None, index: int) -> ShiftFacts | None:
    if not shift:
        return None
    return ShiftFacts(
        shift_id=str(shift.get("shift_id") or shift.get("name") or f"SHIFT-{index}"),
        name=str(shift.get("name", "")),
        schedule=shift.get("schedule") or None,
        rotation=shift.get("rotation") or None,
        text=str(shift.get("schedule_text") or ""),
        overnight=bool(shift.get("overnight", False)),
    )


def _case_span(entry: str) -> tuple[dt.date, dt.date]:
    start, _, end = str(entry).partition("..")
    return dt.date.fromisoformat(start), dt.date.fromisoformat(end or start)
