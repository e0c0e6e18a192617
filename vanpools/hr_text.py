"""Read the schedules HR writes in words: "M-F 7am-3:30pm", "Sun thru Thu 10pm-6:30am".

HR exports carry a shift's hours as text more often than as data. The audit
reads the common, unambiguous ways of writing them and refuses the rest, so a
doubtful text becomes *unknown* (a person or the model reads it), never a
guessed pass or fail:

- days: names and abbreviations (``Mon``, ``Tues``, ``Thurs``, ``Mo``, ``Fr``,
  ``M``, ``W``, ``F``, ``Th``, ``R``, ``Sa``…), letters run together in week
  order (``MTWThF``, ``MTWTF``, ``M T W R F``), ranges (``Mon-Fri``, ``Tue through Sat``, wrapping
  ``Sun-Thu``), lists (``Mon, Wed & Fri``, ``M/W/F``), ``weekdays``,
  ``weekends``, ``daily``;
- hours: ``7am``, ``3:30 p.m.``, ``330p``, ``07.00``, ``noon``, ``midnight``, 24-hour ``15:30`` and
  ``0700``; one range per part, days before or after it; parts separated by
  ``;`` or new lines; labels such as ``Day shift:`` or ``Schedule:``, words
  like ``nights`` that the hours already say, and pattern names (``4x10``,
  ``4/10s``, ``12-hr``) are skipped;
- refused: a ``T`` its neighbours do not settle (``T-F``, ``MT``: Tue or
  Thu?), bare hours without a meridiem or colon (``7-4``), any word left
  over (``alt Fri off``, ``varies``), and a shift under 1 or over 16 hours
  (``7:00-3:30`` read as 24-hour would be 20½).

A written time missing its meridiem on one side takes the reading that gives
the shorter shift: ``9-5pm`` is 09:00-17:00, ``10-6am`` is 22:00-06:00.

Written by hand: no maintained library reads HR schedule phrases; dateparser
and the opening-hours parsers read dates or OSM syntax, not these.
"""

import re

from vanpools.schedules import (
    WEEKDAYS,
    DaySpan,
    ScheduleError,
    minutes_of_day,
    parse_compact_weekly,
    parse_weekly,
)

MIN_SHIFT_MINUTES = 60
MAX_SHIFT_MINUTES = 16 * 60

_DAY_WORDS: dict[str, str] = {
    **{day.lower(): day for day in WEEKDAYS},
    "monday": "Mon",
    "tuesday": "Tue",
    "wednesday": "Wed",
    "thursday": "Thu",
    "friday": "Fri",
    "saturday": "Sat",
    "sunday": "Sun",
    "tues": "Tue",
    "tu": "Tue",
    "weds": "Wed",
    "thur": "Thu",
    "thurs": "Thu",
    "th": "Thu",
    "sa": "Sat",
    "su": "Sun",
    "mo": "Mon",
    "we": "Wed",
    "fr": "Fri",
    "m": "Mon",
    "w": "Wed",
    "r": "Thu",  # registrar style: M T W R F
    "f": "Fri",
}
# Days run together ("MTWThF", "MTWTF", "MWF", "TTh"): one letter or pair per
# day, in week order; a lone "T" is read from its neighbours or refused.
_LETTER = re.compile(r"th|tu|sa|su|m|t|w|r|f")
_DAY_SETS: dict[str, tuple[str, ...]] = {
    "weekdays": WEEKDAYS[:5],
    "weekday": WEEKDAYS[:5],
    "weekends": WEEKDAYS[5:],
    "weekend": WEEKDAYS[5:],
    "daily": WEEKDAYS,
    "every day": WEEKDAYS,
    "everyday": WEEKDAYS,
}

_TIME = (
    r"(?:(?P<{n}h>\d{{1,2}}?)(?:[:.]?(?P<{n}m>\d{{2}}))?\s*(?P<{n}ap>a\.?m?\.?|p\.?m?\.?)(?![a-z])"
    r"|(?P<{n}h24>\d{{1,2}})[:.](?P<{n}m24>\d{{2}})"
    r"|(?P<{n}mil>\d{{4}})"
    r"|(?P<{n}word>noon|midnight)"
    r"|(?P<{n}bare>\d{{1,2}})(?![\d:]))"
)
_RANGE = re.compile(
    _TIME.format(n="s") + r"\s*(?:-|to|until|till)\s*" + _TIME.format(n="e"),
    re.IGNORECASE,
)
# "4x10", "4/10s", "3x12": days × hours, a name for the pattern the days and
# hours spell out anyway ("9/80" is not one: it hides an alternate day off).
# Said anywhere, like "12-hr nights" or "10 hour days", they are names too.
_PATTERN_NAME = re.compile(
    r"\b[1-7]\s*[x/]\s*(?:[89]|1[0-2])s?\b|\b(?:8|9|10|12)[- ]?(?:hr|hour)s?\b"
)
_FILLER = re.compile(
    r"\b(?:(?:day|night|swing|evening|morning|graveyard|early|late|first|second|third|"
    r"1st|2nd|3rd)\s+shift|schedule|from|every|on|at|hours|shift|"
    # A word for the time of day the hours already give: "nights 10pm-6:30am".
    r"nights?|days|evenings?|mornings?|afternoons?|overnights?|swing|graveyard)\b|[().:]"
)
_DAY_RANGE = re.compile(r"^(?P<first>[a-z]+)\s*(?:-|through|thru|to)\s*(?P<last>[a-z]+)$")


def read_schedule_text(text: str) -> list[DaySpan]:
    """Weekly spans from HR's text; raises ScheduleError naming what could not be read."""
    try:
        spans = parse_compact_weekly(text)
    except ScheduleError:
        spans = _read_words(text)
    for span in spans:
        _plausible(
            minutes_of_day(span.start),
            minutes_of_day(span.end),
            f"{span.day} {span.start}-{span.end}",
        )
    return spans


def _read_words(text: str) -> list[DaySpan]:
    parts = [part.strip() for part in re.split(r"[;\n]", text) if part.strip()]
    if not parts:
        raise ScheduleError("no days given")
    days: list[dict[str, str]] = []
    for part in parts:
        start, end, rest = _hours(part)
        days.extend({"day": day, "start": start, "end": end} for day in _days(rest, part))
    return parse_weekly(days)


def _hours(part: str) -> tuple[str, str, str]:
    text = part.lower().replace("–", "-").replace("—", "-")
    text = _PATTERN_NAME.sub(" ", text)
    found = list(_RANGE.finditer(text))
    if len(found) != 1:
        raise ScheduleError(f"'{part}': expected one range of hours, e.g. 7am-3:30pm")
    match = found[0]
    start, end = _time(match, "s", part), _time(match, "e", part)
    start, end = _settle_meridiem(start, end, part)
    rest = text[: match.start()] + " " + text[match.end() :]
    return _clock(start), _clock(end), rest


# A time read from text: minutes past midnight (the morning reading for a bare
# hour), and whether a meridiem was written ("am"/"pm"), the time is 24-hour
# (None), or it is a bare 1-12 hour ("?", as in "9-5pm").
_Reading = tuple[int, str | None]


def _time(match: re.Match[str], n: str, part: str) -> _Reading:
    word = match[f"{n}word"]
    if word:
        return (12 * 60 if word == "noon" else 0), None
    if match[f"{n}mil"]:
        hours, minutes = int(match[f"{n}mil"][:2]), int(match[f"{n}mil"][2:])
        return _checked(hours, minutes, 23, part), None
    if match[f"{n}h24"]:
        hours, minutes = int(match[f"{n}h24"]), int(match[f"{n}m24"])
        return _checked(hours, minutes, 23, part), None
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


def _checked(hours: int, minutes: int, top: int, part: str) -> int:
    if hours > top or minutes > 59:
        raise ScheduleError(f"'{part}': {hours}:{minutes:02d} is not a time of day")
    return hours * 60 + minutes


def _settle_meridiem(start: _Reading, end: _Reading, part: str) -> tuple[int, int]:
    (first, first_mark), (last, last_mark) = start, end
    written = ("am", "pm")
    if "?" in (first_mark, last_mark) and not (
        (first_mark == "?" and last_mark in written) or (last_mark == "?" and first_mark in written)
    ):
        raise ScheduleError(f"'{part}': hours without am/pm; write 7am-4pm or 07:00-16:00")
    if first_mark == "?":
        # "9-5pm": the start's meridiem is unwritten; the shorter shift is meant.
        first = min((first, first + 720), key=lambda s: _length(s, last))
    elif last_mark == "?":
        last = min((last, last + 720), key=lambda e: _length(first, e))
    return first, last


def _plausible(start: int, end: int, where: str) -> None:
    """A commute shift lasts 1 to 16 hours; anything else is a misreading to refuse."""
    length = _length(start, end)
    if not MIN_SHIFT_MINUTES <= length <= MAX_SHIFT_MINUTES:
        raise ScheduleError(
            f"'{where}': a {length // 60}h{length % 60:02d} shift is not plausible; "
            "write 24-hour times or am/pm"
        )


def _length(start: int, end: int) -> int:
    return (end - start) % (24 * 60)


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _days(rest: str, part: str) -> list[str]:
    rest = re.sub(r"\b(?:7 days(?: a week)?|every day)\b", " daily ", rest)
    text = " ".join(_FILLER.sub(" ", rest).split())
    if not text:
        raise ScheduleError(f"'{part}': no days given")
    days: list[str] = []
    for item in re.split(r"\s*(?:,|/|&|\band\b|\+)\s*", text):
        if item:
            days.extend(_day_item(item, part))
    if len(set(days)) != len(days):
        raise ScheduleError(f"'{part}': a day is listed twice")
    return days


def _letter_days(letters: list[str], part: str) -> list[str]:
    """Days written letter by letter, in week order; each "T" read from its place."""
    thursday_written = bool({"th", "thu", "thur", "thurs", "thursday", "r"} & set(letters))
    days = []
    for index, letter in enumerate(letters):
        if letter == "t":
            before = letters[index - 1] if index else ""
            after = letters[index + 1] if index + 1 < len(letters) else ""
            if thursday_written or after == "w":
                letter = "tu"  # in week order, a T before W is Tuesday
            elif before == "w":
                letter = "th"  # and one after W is Thursday ("MT" or "TF" stay unread)
            else:
                raise ScheduleError(f"'{part}': a lone 'T' could be Tuesday or Thursday")
        days.append(_DAY_WORDS[letter])
    return days


def _day_item(item: str, part: str) -> list[str]:
    if item in _DAY_SETS:
        return list(_DAY_SETS[item])
    if item in _DAY_WORDS:
        return [_DAY_WORDS[item]]
    match = _DAY_RANGE.match(item)
    if match and match["first"] in _DAY_WORDS and match["last"] in _DAY_WORDS:
        first = WEEKDAYS.index(_DAY_WORDS[match["first"]])
        length = (WEEKDAYS.index(_DAY_WORDS[match["last"]]) - first) % len(WEEKDAYS) + 1
        return [WEEKDAYS[(first + offset) % len(WEEKDAYS)] for offset in range(length)]
    words = item.split()
    if len(words) > 1 and all(word in _DAY_WORDS or word == "t" for word in words):
        return _letter_days(words, part)  # "Mon Wed Fri", "M T W R F"
    if len(words) == 1 and _LETTER.sub("", item) == "" and len(item) > 1:
        return _letter_days(_LETTER.findall(item), part)  # "MTWThF"
    raise ScheduleError(f"'{part}': '{item}' is not a day, a range of days or 'weekdays'")
