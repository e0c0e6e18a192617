"""A shift read into a schedule the rules can use: weekly days, a rotation, or HR's text.

Anything else raises ``Unreadable``, naming what was on record, in which field,
and why; HR's text that reads several ways keeps every reading.
"""

import datetime as dt
import json
from collections.abc import Hashable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from audit.facts import ShiftFacts
from vanpools.hr_text import (
    AmbiguousHours,
    NoDaysGiven,
    NoHoursGiven,
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
    parse_rotation,
    parse_weekly,
)


@dataclass(frozen=True)
class WeeklySchedule:
    spans: tuple[DaySpan, ...]  # in week order; a missing day is a day off

    def span_on(self, day: dt.date) -> Span | None:
        weekday = WEEKDAYS[day.weekday()]
        return next((span for span in self.spans if span.day == weekday), None)

    def describe(self) -> str:
        return self._description

    @cached_property
    def _description(self) -> str:
        # On the reading, which riders of one shift share (``read_shift``):
        # the cache below compares its keys' spans field by field.
        return _describe_weekly(self.spans)

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
        hours = " / ".join(dict.fromkeys(span_hours(span) for span in working))
        return (
            f"rotating {len(working)} on / {len(days) - len(working)} off {hours}, "
            f"cycle from {self.rotation.cycle_start.isoformat()}"
        )

    def key(self) -> Hashable:
        days = tuple((span.start, span.end) if span else None for span in self.rotation.days)
        return (self.rotation.cycle_start, days)


@lru_cache(maxsize=1024)
def _describe_weekly(spans: tuple[DaySpan, ...]) -> str:
    # HR's compact form keeps a night crew's week whole ("Sun–Thu"), which
    # describe_weekly would split at Monday; en dashes as in all our text.
    # Cached: a program has a few dozen weeks, and a bulk audit describes
    # each rider's in every sentence that names it.
    compact = format_compact_weekly(list(spans))
    return compact.replace(",", "/").replace(";", ",").replace("-", "–")


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
    """Weekly days, else a rotation, else HR's text (hr_text); raises Unreadable otherwise.

    Read once per shift: a program has a few shifts and tens of thousands of
    riders, and both the shift and the ridership check read each rider's. The
    reading is immutable, so riders of one shift share it.
    """
    if shift is None:
        raise Unreadable("", "has no shift on record")
    cached = _READINGS.get(id(shift))
    if cached is not None and cached[0] is shift:
        reading = cached[1]
    else:
        try:
            reading = _read_shift(shift)
        except Unreadable as problem:
            # Its words, not the exception: a traceback holds the callers'
            # frames, and with them a whole chunk's facts.
            reading = _Refusal(problem.value, problem.reason, problem.field)
        if len(_READINGS) >= MAX_CACHED_READINGS:
            _READINGS.clear()
        _READINGS[id(shift)] = (shift, reading)
    if isinstance(reading, _Refusal):
        raise Unreadable(reading.value, reading.reason, reading.field)
    return reading


@dataclass(frozen=True)
class _Refusal:
    """Why a shift cannot be read, as cached."""

    value: str
    reason: str
    field: ShiftField


# Each shift's reading (or why it cannot be read), by the facts object: the
# preload makes one ShiftFacts per shift and its riders share it. The object is
# kept with its reading, so its id cannot be reused by another while cached.
_READINGS: "dict[int, tuple[ShiftFacts, RiderShift | _Refusal]]" = {}
MAX_CACHED_READINGS = 4096


def _read_shift(shift: ShiftFacts) -> RiderShift:
    if shift.schedule:
        return RiderShift(read_weekly(shift.schedule, "weekly schedule"), "schedule")
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


def days_without_hours(shift: ShiftFacts | None) -> tuple[str, ...] | None:
    """The weekdays HR's text names when it gives no hours ("M/W/F"), else None.

    ``read_shift`` refuses such a text (the shift check needs the hours); a
    check that counts workdays can take its days.
    """
    text = (shift.text or "").strip() if shift is not None else ""
    if not text or shift is None or shift.schedule or shift.rotation:
        return None
    try:
        read_schedule_text(text)
    except NoHoursGiven as days_only:
        return tuple(days_only.days)
    except ValueError:
        return None
    return None


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


def read_weekly(data: object, what: str) -> WeeklySchedule:
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


def span_hours(span: Span) -> str:
    return f"{span.start}–{span.end}"
