"""The hours of one part of HR's text: a range, a split day, am/pm settled or left open.

A written time missing its meridiem on one side takes the reading that gives
the shorter shift: ``9-5pm`` is 09:00-17:00, ``10-6am`` is 22:00-06:00. A shift
under 1 or over 16 hours is refused as a misreading.
"""

import itertools
import re

from vanpools.hr_text.prepare import _prepared
from vanpools.hr_text.rules_hours import MERIDIEM_PAIR, RANGE, SPLIT_JOIN
from vanpools.schedules import ScheduleError

MIN_SHIFT_MINUTES = 60


MAX_SHIFT_MINUTES = 16 * 60


def _hours(part: str) -> tuple[list[tuple[str, str]], str]:
    """The part's plausible (start, end) readings, and the words left for the days."""
    text = _prepared(part)
    marks, text = _meridiem_pair(text)
    found = list(RANGE.finditer(text))
    if len(found) == 2 and SPLIT_JOIN.fullmatch(text[found[0].end() : found[1].start()]):
        return _split_shift(found, text, part)
    if len(found) != 1:
        raise ScheduleError(f"'{part}': expected one range of hours, e.g. 7am-3:30pm")
    match = found[0]
    start, end = _time(match, "s", part), _time(match, "e", part)
    if marks:
        start, end = _marked(start, marks[0], part), _marked(end, marks[1], part)
    readings = _plausible_readings(start, end, part)
    rest = text[: match.start()] + " " + text[match.end() :]
    return [(_clock(first), _clock(last)) for first, last in readings], rest


def _split_shift(
    found: list[re.Match[str]], text: str, part: str
) -> tuple[list[tuple[str, str]], str]:
    """A split shift runs from the first piece's start to the last piece's end.

    Each piece is read on its own (its am/pm settles its bare hours); a
    reading counts only when the second piece starts after the first ends,
    the same day, as a split day does.
    """
    first, second = found
    pieces = [
        _plausible_readings(_time(match, "s", part), _time(match, "e", part), part)
        for match in (first, second)
    ]
    readings = sorted(
        {
            (start, end)
            for (start, middle), (resume, end) in itertools.product(*pieces)
            if start < middle <= resume < end and _is_plausible(start, end)
        }
    )
    if not readings:
        raise ScheduleError(f"'{part}': the two pieces of this split shift do not fit one day")
    rest = text[: first.start()] + " " + text[second.end() :]
    return [(_clock(start), _clock(end)) for start, end in readings], rest


def _meridiem_pair(text: str) -> tuple[tuple[str, str] | None, str]:
    found = list(MERIDIEM_PAIR.finditer(text))
    if len(found) != 1:
        return None, text
    match = found[0]
    first, last = match["first"] or match["first2"], match["last"] or match["last2"]
    marks = (f"{first}m", f"{last}m")
    return marks, text[: match.start()] + " " + text[match.end() :]


# A time read from text: minutes past midnight (the morning reading for an
# hour that could be either), and whether a meridiem was written ("am"/"pm"),
# the time is fixed 24-hour (None: "15:30", "07:00", "0700"), or it could be
# either half of the day ("?": a bare "9", or "7:00"/"3:30" with no leading zero).
_Reading = tuple[int, str | None]


def _time(match: re.Match[str], n: str, part: str) -> _Reading:
    word = match[f"{n}word"]
    if word:
        return (12 * 60 if word == "noon" else 0), None
    if match[f"{n}mil"]:
        hours, minutes = int(match[f"{n}mil"][:2]), int(match[f"{n}mil"][2:])
        return _checked(hours, minutes, 23, part), None
    if match[f"{n}h24"]:
        written = match[f"{n}h24"]
        hours, minutes = int(written), int(match[f"{n}m24"])
        either = not written.startswith("0") and 1 <= hours <= 12
        minute = _checked(hours % 12 if either else hours, minutes, 23, part)
        return minute, ("?" if either else None)
    if match[f"{n}bare"]:
        hours = int(match[f"{n}bare"])
        if not 1 <= hours <= 12:
            raise ScheduleError(f"'{part}': {hours} is not an hour on a 12-hour clock")
        return (hours % 12) * 60, "?"
    hours, minutes = int(match[f"{n}h"]), int(match[f"{n}m"] or 0)
    if not 1 <= hours <= 12:
        raise ScheduleError(f"'{part}': {hours} is not an hour on a 12-hour clock")
    meridiem = "pm" if match[f"{n}ap"].startswith("p") else "am"
    return _checked(hours % 12, minutes, 11, part) + (12 * 60 if meridiem == "pm" else 0), meridiem


def _marked(reading: _Reading, meridiem: str, part: str) -> _Reading:
    minute, mark = reading
    if mark != "?":
        raise ScheduleError(f"'{part}': am/pm written twice for one time")
    return minute + (12 * 60 if meridiem == "pm" else 0), meridiem


def _checked(hours: int, minutes: int, top: int, part: str) -> int:
    if hours > top or minutes > 59:
        raise ScheduleError(f"'{part}': {hours}:{minutes:02d} is not a time of day")
    return hours * 60 + minutes


def _plausible_readings(start: _Reading, end: _Reading, part: str) -> list[tuple[int, int]]:
    (first, first_mark), (last, last_mark) = start, end
    written = ("am", "pm")
    if first_mark == "?" and last_mark in written:
        # "9-5pm": the start's meridiem is unwritten; the shorter shift is meant.
        return [(min((first, first + 720), key=lambda s: _length(s, last)), last)]
    if last_mark == "?" and first_mark in written:
        return [(first, min((last, last + 720), key=lambda e: _length(first, e)))]
    starts = (first, first + 720) if first_mark == "?" else (first,)
    ends = (last, last + 720) if last_mark == "?" else (last,)
    readings = [(s, e) for s in starts for e in ends if _is_plausible(s, e)]
    if not readings:
        _plausible(first, last, part)  # raises, naming the length
        raise ScheduleError(f"'{part}': no plausible reading of these hours")
    # "7 to 3:30" is most often a day shift, but 19:00-03:30 is a real one too:
    # both readings stay, and the check decides only where they agree. Reading
    # it as the day would pass a night worker on a day van — the worst error.
    return readings


def _plausible(start: int, end: int, where: str) -> None:
    """A commute shift lasts 1 to 16 hours; anything else is a misreading to refuse."""
    if not _is_plausible(start, end):
        length = _length(start, end)
        raise ScheduleError(
            f"'{where}': a {length // 60}h{length % 60:02d} shift is not plausible; "
            "write 24-hour times or am/pm"
        )


def _is_plausible(start: int, end: int) -> bool:
    return MIN_SHIFT_MINUTES <= _length(start, end) <= MAX_SHIFT_MINUTES


def _length(start: int, end: int) -> int:
    return (end - start) % (24 * 60)


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"
