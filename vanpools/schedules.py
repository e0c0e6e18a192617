"""Shift and van schedules: their stored shape and its validation.

Stored as JSON so HR's many patterns fit one table:
- weekly: ``[{"day": "Mon", "start": "07:00", "end": "16:00"}, ...]``; an end
  earlier than the start means the shift crosses midnight into the next day.
- rotating: ``{"cycle_start": "2026-01-05", "days": [{"start": "06:00",
  "end": "18:00"}, null, ...]}``; day N of the cycle counts from cycle_start,
  ``null`` is a day off (e.g. 4 on / 4 off is an 8-day cycle).
- free text (``schedule_text``) when HR sent words, not times; the audit treats
  what it cannot parse as unknown, never as pass or fail.
"""

from datetime import date, time
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

WEEKDAYS: tuple[str, ...] = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
Weekday = Literal["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
HHMM = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]


class ScheduleError(ValueError):
    """A schedule that does not have the stored shape; the message says where."""


class Span(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    start: HHMM
    end: HHMM

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


def _follows(previous: str, day: str) -> bool:
    return WEEKDAYS.index(day) == WEEKDAYS.index(previous) + 1
