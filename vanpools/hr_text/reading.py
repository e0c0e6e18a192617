"""Read a week from HR's text: split it into parts, read each part's hours and days.

Also the errors a check can still decide on (several plausible readings, hours
with no days, a rotation between sets of hours), an export's fields, and a
rotation's legs, each read as its own schedule.
"""

import itertools
import re
from dataclasses import dataclass

from vanpools.hr_text.days import _days, _days_off, _has_day, _LoneLetter, _NoDays
from vanpools.hr_text.hours import _hours, _is_plausible, _plausible
from vanpools.hr_text.prepare import _prepared
from vanpools.hr_text.rules_days import (
    ADMIN_FIELD,
    ALTERNATE_DAY_NAMED,
    EXPORT_FIELD_BREAK,
    FIELD_KEY,
    HOURS_NOT_GIVEN,
    LEG_BREAK,
    PART_BREAK,
    PIECE_BREAK,
    QUALIFIERS,
    ROTATION_BAR,
    ROTATION_NAMED,
    ROTATION_WORDS,
    TELEWORK_KEY,
)
from vanpools.hr_text.rules_hours import FILLER, NINE_EIGHTY, RANGE
from vanpools.hr_text.words import _FULL_DAY_NAMES
from vanpools.schedules import (
    WEEKDAYS,
    DaySpan,
    ScheduleError,
    describe_weekly,
    minutes_of_day,
    parse_compact_weekly,
    parse_weekly,
)


class AmbiguousHours(ScheduleError):
    """Hours written without am/pm that read plausibly more than one way ("9 to 5").

    ``readings`` holds every plausible week, so a check can still decide when
    all of them lead to the same verdict, and refuse only when they disagree.
    """

    def __init__(self, message: str, readings: list[list[DaySpan]]) -> None:
        super().__init__(message)
        self.readings = readings


class NoDaysGiven(ScheduleError):
    """Hours with no days ("Tour 2: 0800x1630"): ``hours`` holds each plausible (start, end).

    A check can still decide when the hours miss the van on every day it runs.
    """

    def __init__(self, message: str, hours: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.hours = hours


class NoHoursGiven(ScheduleError):
    """Days with no hours ("Mon/Wed/Fri", "Tue-Thu, hours vary"): ``days`` holds the days named.

    The days a rider works are known, so a check that counts workdays (ridership)
    can use them; one that needs the hours (shift) cannot decide.
    """

    def __init__(self, message: str, days: list[str]) -> None:
        super().__init__(message)
        self.days = days


MAX_READINGS = 8


def read_schedule_text(text: str) -> list[DaySpan]:
    """Weekly spans from HR's text; raises ScheduleError naming what could not be read.

    Raises AmbiguousHours (a ScheduleError) when the text has several plausible readings.
    """
    readings = read_schedule_readings(text)
    if len(readings) > 1:
        shown = " or ".join(describe_weekly(reading) for reading in readings)
        weeks: list[set[str]] = [{span.day for span in reading} for reading in readings]
        either = set[str]().union(*weeks) - set[str](weeks[0]).intersection(*weeks[1:])
        if either:
            names = " or ".join(
                _FULL_DAY_NAMES[WEEKDAYS.index(day)].title() for day in WEEKDAYS if day in either
            )
            why = f"a lone day letter could be {names}:"
        else:
            why = "hours without am/pm"
        raise AmbiguousHours(f"'{text.strip()}': {why} read as {shown}", readings)
    return readings[0]


def read_schedule_readings(text: str) -> list[list[DaySpan]]:
    """Every plausible reading of HR's text: one when clear, more when only am/pm is missing."""
    try:
        readings = [parse_compact_weekly(text)]
    except ScheduleError:
        readings = _read_either_letter(text)
    else:
        if not all(_is_plausible(*_minutes(span)) for span in readings[0]):
            # "Mon-Fri 7:00-3:30" is compact in shape but not 24-hour in intent.
            readings = _read_either_letter(text)
    for spans in readings:
        for span in spans:
            _plausible(*_minutes(span), f"{span.day} {span.start}-{span.end}")
    return readings


def _minutes(span: DaySpan) -> tuple[int, int]:
    return minutes_of_day(span.start), minutes_of_day(span.end)


def _read_either_letter(text: str) -> list[list[DaySpan]]:
    """ "0700-1930 M/T/F": a lone "T" (or "S") standing alone is read both ways.

    "M/T/F" is Mon, Tue, Fri or Mon, Thu, Fri: both weeks are kept as readings,
    and the check decides only where they agree (a 12-hour day misses a
    07:00-15:30 van either way). Only a letter written as a word of its own, once.
    """
    try:
        return _read_words(text)
    except _LoneLetter as lone:
        spots = list(re.finditer(rf"(?<![\w']){lone.letter}(?![\w'])", text, re.IGNORECASE))
        if len(spots) != 1:
            raise
        spot = spots[0]
        readings: list[list[DaySpan]] = []
        for day in lone.days:
            try:
                read = _read_words(text[: spot.start()] + day + text[spot.end() :])
            except NoHoursGiven:
                # Days alone, one of them either of two: no reading of the week is one to keep.
                raise ScheduleError(
                    f"'{text.strip()}': a lone day letter and no hours to settle it"
                ) from None
            for reading in read:
                if reading not in readings:
                    readings.append(reading)
        if len(readings) > MAX_READINGS:
            raise ScheduleError(f"'{text.strip()}': too many ways to read the days") from None
        return readings


def _read_words(text: str) -> list[list[DaySpan]]:
    text = _export_fields(text)
    legs = _rotation_legs(text)
    if legs:
        raise RotatingHours(
            f"'{text.strip()}': more than one range of hours, worked in turn (a rotation)", legs
        )
    if ALTERNATE_DAY_NAMED.search(text.lower()) and len(RANGE.findall(_prepared(text))) > 1:
        # The alternate day and its own hours are spelled out beside it.
        text = NINE_EIGHTY.sub(" ", text)
    parts = [
        piece.strip()
        for part in PART_BREAK.split(text)
        for piece in _split_by_hours(part)
        if piece.strip()
    ]
    # A part of labels alone ("Crew C perm. days", "2-2-3 Pitman") says nothing more.
    parts = [part for part in parts if RANGE.search(_prepared(part)) or _words_beside_hours(part)]
    parts = _hours_field_with_days_field(parts)
    days_off = {part: _only_days_off(part) for part in parts}
    off = set().union(*days_off.values())
    parts = [part for part in parts if not days_off[part]]
    if not parts:
        raise ScheduleError("no days given")
    if not any(RANGE.search(_prepared(part)) for part in parts):
        days = _days_without_hours(parts, off)
        raise NoHoursGiven(
            f"'{text.strip()}': names its days ({', '.join(days)}) but no hours, "
            "e.g. add 7am-3:30pm",
            days,
        )
    read: list[tuple[list[tuple[str, str]], list[str]]] = []
    for part in parts:
        hours, rest = _hours(part)
        try:
            days = _days(rest, part)
        except _NoDays as error:
            if len(parts) > 1:
                raise
            raise NoDaysGiven(str(error), hours) from None
        if not days:
            continue  # a part only teleworked
        days = [day for day in days if day not in off]
        if not days:
            raise ScheduleError(f"'{part}': every day named is off")
        read.append((hours, days))
    if not read:
        raise ScheduleError("no days commuted")
    combinations = list(itertools.product(*(hours for hours, _ in read)))
    if len(combinations) > MAX_READINGS:
        raise ScheduleError(f"'{text.strip()}': too many ways to read the hours; add am/pm")
    return [
        parse_weekly(
            [
                {"day": day, "start": start, "end": end}
                for (start, end), (_, days) in zip(chosen, read, strict=True)
                for day in days
            ]
        )
        for chosen in combinations
    ]


def _days_without_hours(parts: list[str], off: set[str]) -> list[str]:
    """The days of a text that gives no hours at all ("M/W/F", "Tue-Thu, hours vary").

    Every part must read as days, once the words saying the hours are not set
    are gone (HOURS_NOT_GIVEN); anything else left over is refused as before.
    """
    days: list[str] = []
    for part in parts:
        rest = HOURS_NOT_GIVEN.sub(" ", _prepared(part))
        try:
            named = _days(rest, part)
        except _LoneLetter:
            raise  # read both ways by _read_either_letter
        except ScheduleError:
            # Not days either ("varies", "see supervisor"): what is missing is the hours.
            raise ScheduleError(f"'{part}': expected one range of hours, e.g. 7am-3:30pm") from None
        days += [day for day in named if day not in off and day not in days]
    if not days:
        raise ScheduleError("no days commuted")
    return [day for day in WEEKDAYS if day in days]


def _hours_field_with_days_field(parts: list[str]) -> list[str]:
    """ "Back half days; 7a-7p; W(alt) Th F Sa": hours in one field, days in another, one week.

    Only when a single part holds the hours and nothing beside them, and every
    other part names days and no hours: they are joined and read as one.
    """
    hours_only = [
        part for part in parts if RANGE.search(_prepared(part)) and not _words_beside_hours(part)
    ]
    others = [part for part in parts if part not in hours_only]
    if len(hours_only) != 1 or not others:
        return parts
    if any(RANGE.search(_prepared(part)) or not _has_day(part) for part in others):
        return parts
    return [" ".join([*others, hours_only[0]])]


def _only_days_off(part: str) -> set[str]:
    """ "Fri/Sat/Sun off" written as a part of its own: the days named, else nothing."""
    text = _prepared(part)
    if RANGE.search(text):
        return set()
    off, _, rest = _days_off(text)
    return off if not FILLER.sub(" ", rest).strip(" ,-") else set()


def _export_fields(text: str) -> str:
    """ "Dayforce | Pay Group: OPS | Schedule: Tu We Th 06:00 - 14:30": the schedule's fields.

    Only text with three or more fields split by "|" (or " ; ") is read this way:
    administrative fields and bare system names go, "Remote: Mon, Fri" becomes
    telework, and any other "Key: value" keeps its value.
    """
    fields = [field.strip() for field in EXPORT_FIELD_BREAK.split(text)]
    fields = [field for field in fields if field]
    if len(fields) < 3:
        return text
    kept = []
    for field in fields:
        if ADMIN_FIELD.match(field):
            continue
        keyed = FIELD_KEY.match(field)
        key, value = (keyed[1], keyed[2]) if keyed else ("", field)
        if TELEWORK_KEY.match(key.strip()):
            kept.append(f"telework {value}")
        elif (
            RANGE.search(_prepared(value))
            or _has_day(value)
            or QUALIFIERS.search(re.sub(r"\d", "", value.lower()))
        ):
            kept.append(value)
    return ", ".join(kept) if kept else text


def _split_by_hours(part: str) -> list[str]:
    """ "M/W 0700-1730, F 0700-1130": a comma that starts another range of hours starts a part."""
    pieces = [
        piece for piece in PIECE_BREAK.split(part) if FILLER.sub(" ", _prepared(piece)).strip(" -")
    ]
    with_hours = [piece for piece in pieces if RANGE.search(_prepared(piece))]
    if len(with_hours) < 2 or len(with_hours) != len(pieces):
        return [part]
    if any(not _words_beside_hours(piece) for piece in pieces[1:]):
        return [part]  # "0700-1100 / 1500-1900": the second piece of a split day
    return pieces


def _words_beside_hours(piece: str) -> bool:
    return bool(re.search(r"[a-z]", FILLER.sub(" ", RANGE.sub(" ", _prepared(piece)))))


class RotatingHours(ScheduleError):
    """Two or more sets of hours worked in turn ("D/N rotation 0645-1915 / 1845-0715").

    ``legs`` holds each turn of the rotation: its plausible weeks, or, when it
    names no days (a crew rotation covers every day of the week in turn), the
    hours alone. The rider works every leg, so a leg that misses the van on the
    days it runs is a miss, whichever leg is worked this week.
    """

    def __init__(self, message: str, legs: list["RotationLeg"]) -> None:
        super().__init__(message)
        self.legs = legs


@dataclass(frozen=True)
class RotationLeg:
    readings: list[list[DaySpan]]  # empty when no days are named
    hours: list[tuple[str, str]]  # the leg's plausible (start, end) when no days are named


def _rotation_legs(text: str) -> list[RotationLeg] | None:
    """The legs of a rotation written with each leg's hours, or None if it is not one.

    Each piece of the text (split at ";", ",", " / " or "then") that holds one
    range of hours is a leg; pieces without hours (a crew, a day-range shared by
    every leg) go with every leg. Each leg is then read as its own schedule.
    """
    lowered = text.lower()
    if not ROTATION_NAMED.search(lowered):
        return None
    cleaned = ROTATION_WORDS.sub(" ", ROTATION_BAR.sub(" ; ", lowered))
    pieces = [piece for piece in LEG_BREAK.split(cleaned) if piece.strip(" -:()")]
    ranged = [piece for piece in pieces if RANGE.search(_prepared(piece))]
    if len(ranged) < 2:
        return None
    if any(len(RANGE.findall(_prepared(piece))) > 1 for piece in ranged):
        raise ScheduleError(f"'{text.strip()}': a rotation leg holds two ranges of hours")
    shared = [piece for piece in pieces if piece not in ranged]
    legs = []
    for piece in ranged:
        leg_text = ", ".join([*shared, piece])
        try:
            readings = _read_words(leg_text)
        except NoDaysGiven as no_days:
            legs.append(RotationLeg([], no_days.hours))
            continue
        for reading in readings:
            for span in reading:
                _plausible(*_minutes(span), f"{span.day} {span.start}-{span.end}")
        legs.append(RotationLeg(readings, []))
    return legs
