"""Shift and van schedules: their stored shape and its validation.

Stored as JSON so HR's many patterns fit one table:
- weekly: ``[{"day": "Mon", "start": "07:00", "end": "16:00"}, ...]``; an end
  earlier than the start means the shift crosses midnight into the next day.
- rotating: ``{"cycle_start": "2026-01-05", "days": [{"start": "06:00",
  "end": "18:00"}, null, ...]}``; day N of the cycle counts from cycle_start,
  ``null`` is a day off (e.g. 4 on / 4 off is an 8-day cycle).
- free text (``schedule_text``) when HR sent words; ``vanpools.hr_text`` reads the common
  unambiguous forms ("M-F 7am-3:30pm") and the audit treats
  what it cannot parse as unknown, never as pass or fail.
"""

import re
from datetime import date, time
from typing import Annotated, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

WEEKDAYS: tuple[str, ...] = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
Weekday = Literal["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
HHMM = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]


class ScheduleError(ValueError):
    """A schedule that does not have the stored shape; the message says where."""


class Span(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    # Other tools write start_time/end_time; the stored shape is start/end.
    start: HHMM = Field(validation_alias=AliasChoices("start", "start_time"))
    end: HHMM = Field(validation_alias=AliasChoices("end", "end_time"))

    @model_validator(mode="after")
    def _not_empty(self) -> "Span":
        if self.start == self.end:
            raise ValueError("start and end are the same time")
        return self

    @property
    def crosses_midnight(self) -> bool:
        return self.end < self.start

    @property
    def start_time(self) -> time:
        return time.fromisoformat(self.start)

    @property
    def end_time(self) -> time:
        return time.fromisoformat(self.end)


class DaySpan(Span):
    day: Weekday


class Rotation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    cycle_start: date
    days: list[Span | None] = Field(min_length=2, max_length=56)

    @model_validator(mode="after")
    def _works_some_day(self) -> "Rotation":
        if not any(self.days):
            raise ValueError("a rotation needs at least one working day")
        return self

    def span_on(self, day: date) -> Span | None:
        return self.days[(day - self.cycle_start).days % len(self.days)]


_weekly_adapter = TypeAdapter(list[DaySpan])


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse_weekly(data: object) -> list[DaySpan]:
    try:
        spans = _weekly_adapter.validate_python(data)
    except ValidationError as exc:
        raise ScheduleError(_first_error(exc)) from None
    seen = [span.day for span in spans]
    duplicates = sorted({day for day in seen if seen.count(day) > 1}, key=WEEKDAYS.index)
    if duplicates:
        raise ScheduleError(f"day listed twice: {', '.join(duplicates)}")
    return sorted(spans, key=lambda span: WEEKDAYS.index(span.day))


def parse_rotation(data: object) -> Rotation:
    try:
        return Rotation.model_validate(data)
    except ValidationError as exc:
        raise ScheduleError(_first_error(exc)) from None


def describe_weekly(spans: list[DaySpan]) -> str:
    """'Mon–Fri 07:00–16:00' style text for admin lists and emails."""
    if not spans:
        return "no days"
    groups: list[tuple[list[str], str]] = []
    for span in spans:
        hours = f"{span.start}–{span.end}"
        if groups and groups[-1][1] == hours and _follows(groups[-1][0][-1], span.day):
            groups[-1][0].append(span.day)
        else:
            groups.append(([span.day], hours))
    return ", ".join(
        f"{days[0]}–{days[-1]} {hours}" if len(days) > 2 else f"{'/'.join(days)} {hours}"
        for days, hours in groups
    )


def minutes_of_day(hhmm: str) -> int:
    """Minutes after midnight of an ``HH:MM`` time."""
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def _follows(previous: str, day: str) -> bool:
    return WEEKDAYS.index(day) == WEEKDAYS.index(previous) + 1


# HR's compact form, one "days hours" part per distinct set of hours:
# "Mon-Fri 07:00-16:00; Sat 08:00-12:00", "Mon,Wed,Fri 06:00-14:30".
_COMPACT_PART = re.compile(
    r"^(?P<days>\S.*?)\s+(?P<start>[0-9]{1,2}:[0-9]{2})\s*[-–]\s*(?P<end>[0-9]{1,2}:[0-9]{2})$"
)
_FULL_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_DAY_NAMES: dict[str, str] = {day.lower(): day for day in WEEKDAYS} | {
    full.lower(): short for full, short in zip(_FULL_DAY_NAMES, WEEKDAYS, strict=True)
}


def parse_compact_weekly(text: str) -> list[DaySpan]:
    """Read ``Mon-Fri 07:00-16:00; Sat 08:00-12:00`` into weekly spans.

    Parts are separated by ``;``. Days are names, ranges (which may wrap the
    week end: ``Sun-Thu``) or comma lists. As in the stored shape, an end
    before the start crosses midnight. Raises ScheduleError naming the part.
    """
    parts = [part.strip() for part in text.split(";") if part.strip()]
    if not parts:
        raise ScheduleError("no days given")
    days: list[dict[str, str]] = []
    for part in parts:
        match = _COMPACT_PART.match(part)
        if match is None:
            raise ScheduleError(f"'{part}': expected days then hours, e.g. 'Mon-Fri 07:00-16:00'")
        start = _compact_time(match["start"], part)
        end = _compact_time(match["end"], part)
        if start == end:
            raise ScheduleError(f"'{part}': start and end are the same time")
        days.extend(
            {"day": day, "start": start, "end": end} for day in _compact_days(match["days"], part)
        )
    return parse_weekly(days)


def _compact_time(text: str, part: str) -> str:
    hours, minutes = (int(number) for number in text.split(":"))
    if hours > 23 or minutes > 59:
        raise ScheduleError(f"'{part}': {text} is not a time of day (00:00-23:59)")
    return f"{hours:02d}:{minutes:02d}"


def _compact_days(text: str, part: str) -> list[str]:
    days: list[str] = []
    for item in text.split(","):
        ends = [_compact_day(name, part) for name in re.split(r"[-–]", item)]
        if len(ends) > 2:
            raise ScheduleError(f"'{part}': '{item.strip()}' is not a day or a range like Mon-Fri")
        first = WEEKDAYS.index(ends[0])
        length = (WEEKDAYS.index(ends[-1]) - first) % len(WEEKDAYS) + 1
        days.extend(WEEKDAYS[(first + offset) % len(WEEKDAYS)] for offset in range(length))
    return days


def _compact_day(name: str, part: str) -> str:
    day = _DAY_NAMES.get(name.strip().lower())
    if day is None:
        raise ScheduleError(f"'{part}': '{name.strip()}' is not a day (Mon, Tue, … Sun)")
    return day


def format_compact_weekly(spans: list[DaySpan]) -> str:
    """The compact text parse_compact_weekly reads back to the same spans."""
    days_by_hours: dict[tuple[str, str], set[int]] = {}
    for span in spans:
        days_by_hours.setdefault((span.start, span.end), set()).add(WEEKDAYS.index(span.day))
    groups = sorted(days_by_hours.items(), key=lambda group: min(group[1]))
    return "; ".join(f"{_compact_day_runs(days)} {start}-{end}" for (start, end), days in groups)


def _compact_day_runs(days: set[int]) -> str:
    week = len(WEEKDAYS)
    if len(days) == week:
        return "Mon-Sun"
    # A run starts on a day whose eve is free, so Sun-Thu stays one range.
    names: list[str] = []
    for first in sorted(day for day in days if (day - 1) % week not in days):
        length = 1
        while (first + length) % week in days:
            length += 1
        if length >= 3:
            names.append(f"{WEEKDAYS[first]}-{WEEKDAYS[(first + length - 1) % week]}")
        else:
            names.extend(WEEKDAYS[(first + offset) % week] for offset in range(length))
    return ",".join(names)
