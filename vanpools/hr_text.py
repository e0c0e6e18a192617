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

import itertools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from vanpools.schedules import (
    WEEKDAYS,
    DaySpan,
    ScheduleError,
    describe_weekly,
    minutes_of_day,
    parse_compact_weekly,
    parse_weekly,
)

MIN_SHIFT_MINUTES = 60
MAX_SHIFT_MINUTES = 16 * 60

_DAY_WORDS: dict[str, str] = {
    **{day.lower(): day for day in WEEKDAYS},
    # Spanish and German, as bilingual HR exports write them (accents folded).
    **dict.fromkeys(("lunes", "lun"), "Mon"),
    **dict.fromkeys(("martes",), "Tue"),
    **dict.fromkeys(("miercoles", "mie"), "Wed"),
    **dict.fromkeys(("jueves", "jue"), "Thu"),
    **dict.fromkeys(("viernes", "vie"), "Fri"),
    **dict.fromkeys(("sabado", "sab"), "Sat"),
    **dict.fromkeys(("domingo", "dom"), "Sun"),
    # French (Quebec exports): "du lundi au vendredi", "lun.–ven.".
    **dict.fromkeys(("lundi",), "Mon"),
    **dict.fromkeys(("mardi", "mar"), "Tue"),
    **dict.fromkeys(("mercredi", "mer"), "Wed"),
    **dict.fromkeys(("jeudi", "jeu"), "Thu"),
    **dict.fromkeys(("vendredi", "ven"), "Fri"),
    **dict.fromkeys(("samedi",), "Sat"),
    **dict.fromkeys(("dimanche", "dim"), "Sun"),
    **dict.fromkeys(("montag",), "Mon"),
    **dict.fromkeys(("dienstag",), "Tue"),
    **dict.fromkeys(("mittwoch",), "Wed"),
    **dict.fromkeys(("donnerstag",), "Thu"),
    **dict.fromkeys(("freitag",), "Fri"),
    **dict.fromkeys(("samstag",), "Sat"),
    **dict.fromkeys(("sonntag",), "Sun"),
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
    # Spanish initials: lunes a viernes ("L-V"), lunes a jueves ("L-J").
    "l-v": WEEKDAYS[:5],
    "l a v": WEEKDAYS[:5],
    "l-j": WEEKDAYS[:4],
    "l-s": WEEKDAYS[:6],
    "every day": WEEKDAYS,
    "everyday": WEEKDAYS,
}

_TIME = (
    r"(?:(?P<{n}h>\d{{1,2}}?)(?:[:.]?(?P<{n}m>\d{{2}}))?\s*(?P<{n}ap>a\.?m?\.?|p\.?m?\.?)(?![a-z])"
    r"|(?P<{n}h24>\d{{1,2}})[:.h](?P<{n}m24>\d{{2}})"
    r"|(?P<{n}mil>\d{{4}})"
    r"|(?P<{n}word>noon|midnight)"
    r"|(?P<{n}bare>\d{{1,2}})(?![\d:]))"
)
_RANGE = re.compile(
    _TIME.format(n="s")
    + r"\s*(?:-|to|until|till|thru|through|a|bis|hasta|x)\s*"
    + _TIME.format(n="e"),
    re.IGNORECASE,
)
# "4x10", "4/10s", "3x12": days × hours, a name for the pattern the days and
# hours spell out anyway ("9/80" is not one: it hides an alternate day off).
# Said anywhere, like "12-hr nights" or "10 hour days", they are names too.
_PATTERN_NAME = re.compile(
    r"\b[1-7]\s*[x/]\s*(?:[89]|1[0-2])(?:\.5)?s?\b|\b(?:8|9|10|12)[- ]?(?:hr|hour)s?\b"
    # "12s", and the day patterns of 12-hour crews ("2-2-3"): which days, not which hours.
    r"|\b(?:8|10|12)s\b|\b(?:2-2-3|2-3-2)(?:\s+rotation)?\b"
    # Days on and off ("5 on 2 off", "4on/4off rotation"): which days, not which hours.
    r"|\b\d\s*on\s*/?\s*\d\s*off(?:\s+rotation)?\b"
)
_FILLER = re.compile(
    r"\b(?:shift code \w+|(?:day|night|swing|evening|morning|graveyard|early|late|first|second|"
    r"third|1st|2nd|3rd|owl|power|mid)\s+sh(?:ift|ft|fit)|schedule|sched|from|every|onsite|on-site|"
    r"on|at|hours|sh(?:ift|ft|fit)|owl|noc|fixed|flex(?: schedule)?|actual|pattern|works?|"
    r"she works|he works|working|grave|gy|swng|nocturno|diurno|partido|perm\.?|permanent|"
    r"quarts?|jour|soir|nuit|du|horaire|equipe \w|seulement|(?:week|wk)\s*[1-4](?=\s*[:)])|"
    r"(?:front|back) half(?: days| nights)?|[fb]h[dn]|fh|bh|shift bid|bid line|"
    r"work schedule(?: calendar)?|calendar|(?:1st|2nd|3rd|1er|primer|segundo|tercer)(?=[\s),-]|$)|"
    # Hospital codes and programs: "D12", "N12", "x3/wk", "Weekend Option", "paid 36".
    r"[den](?:8|10|12)|x?\d\s*(?:nights?|days?|shifts?)?\s*/\s*(?:wk|week)|"
    r"self-?sched(?:ule)?|per self-?sched(?:ule)?|weekend option|wknd opt|paid \d+|"
    r"\d{1,2}(?:\.\d)?\s*(?:hrs?|hours)(?:\s*/\s*(?:day|wk|week))?|"
    r"semana de \d dias|dias?|(?:pacific|eastern|central|mountain) time|"
    # Shift codes and labels: "B-Shift", "Tour 2:", "Crew C", "Hybrid: in office …".
    r"[a-d]-?\s?shift|shift\s+[a-d1-4]|(?:tour|platoon|crew|squad|line)\s+[a-d1-4]|"
    r"[a-d]\s+crew|(?:weekend|weekday|day|night|swing|evening|morning|early|late)\s+crew|crew|"
    # Bid labels: "Run 112", "Blk 4417", "Fall pick 2026", "Straight run", "(split, paid spread)".
    r"(?:run|blk|block|bid|route|line|post)\s*#?\s*\d+|(?:fall|spring|summer|winter)\s+"
    r"(?:pick|bid|sign-?up)(?:\s+\d{4})?|straight(?:\s+run)?|split(?:\s+(?:run|shift))?|"
    r"(?:paid\s+)?spread|regular|normal|usual|"
    # Employment labels: "PT – 24 hrs/wk", "Part time,".
    r"pt|ft|part[- ]time|full[- ]time|per diem|\d+\s*hrs?\s*(?:/|per|a)\s*(?:wk|week)|"
    # Day-pattern names: which days, not which hours ("2-2-3 Panama", "Pitman (day side)").
    r"(?:panama|pitman)(?:\s+rotation)?(?:\s+[a-d](?:\s*/\s*[a-d])?\b)?|rotacion pitman|"
    r"(?:day|night)\s+side|"
    r"hybrid|in (?:the )?office|onsite|on-site|in person|"
    # A word for the time of day the hours already give: "nights 10pm-6:30am".
    r"nights?|days?|evenings?|mornings?|afternoons?|overnights?|swing|graveyard|hrs|only|"
    # Spanish and German fillers ("turno de noche de 22:00 a 6:30", "6:00-14:30 Uhr").
    r"de|del|turno|noches?|tardes?|mananas?|uhr|"
    # A time zone says where the clock is, not when the shift is ("MT" is left: Mon-Tue?).
    r"[pmce][sd]t|ct|et|ak[sd]t|h[sd]t|local time|local)\b|[().:]"
)
# Hospital codes for day / evening / night ("D 0645-1915") at the start.
_SHIFT_CODE = re.compile(r"^\s*[den]\s+(?=\d)")
_DAY_RANGE = re.compile(
    r"^(?P<first>[a-z]+)\.?\s*(?:-|through|thru|to|a|al|au|bis|hasta|~)\s*(?P<last>[a-z]+)\.?$"
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
            for reading in _read_words(text[: spot.start()] + day + text[spot.end() :]):
                if reading not in readings:
                    readings.append(reading)
        if len(readings) > MAX_READINGS:
            raise ScheduleError(f"'{text.strip()}': too many ways to read the days") from None
        return readings


class _LoneLetter(ScheduleError):
    """A day letter its neighbours do not settle: "T" (Tue or Thu), "S" (Sat or Sun)."""

    def __init__(self, message: str, letter: str, days: tuple[str, str]) -> None:
        super().__init__(message)
        self.letter = letter
        self.days = days


def _read_words(text: str) -> list[list[DaySpan]]:
    text = _export_fields(text)
    legs = _rotation_legs(text)
    if legs:
        raise RotatingHours(
            f"'{text.strip()}': more than one range of hours, worked in turn (a rotation)", legs
        )
    if _ALTERNATE_DAY_NAMED.search(text.lower()) and len(_RANGE.findall(_prepared(text))) > 1:
        # The alternate day and its own hours are spelled out beside it.
        text = re.sub(r"\b9/80\b", " ", text)
    parts = [
        piece.strip()
        for part in re.split(r"[;\n]", text)
        for piece in _split_by_hours(part)
        if piece.strip()
    ]
    # A part of labels alone ("Crew C perm. days", "2-2-3 Pitman") says nothing more.
    parts = [part for part in parts if _RANGE.search(_prepared(part)) or _words_beside_hours(part)]
    parts = _hours_field_with_days_field(parts)
    days_off = {part: _only_days_off(part) for part in parts}
    off = set().union(*days_off.values())
    parts = [part for part in parts if not days_off[part]]
    if not parts:
        raise ScheduleError("no days given")
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


def _hours_field_with_days_field(parts: list[str]) -> list[str]:
    """ "Back half days; 7a-7p; W(alt) Th F Sa": hours in one field, days in another, one week.

    Only when a single part holds the hours and nothing beside them, and every
    other part names days and no hours: they are joined and read as one.
    """
    hours_only = [
        part for part in parts if _RANGE.search(_prepared(part)) and not _words_beside_hours(part)
    ]
    others = [part for part in parts if part not in hours_only]
    if len(hours_only) != 1 or not others:
        return parts
    if any(_RANGE.search(_prepared(part)) or not _has_day(part) for part in others):
        return parts
    return [" ".join([*others, hours_only[0]])]


# "7 on/7 off … (on: Wed 11/25 - Tue 12/1)": the current block of a rotation, as dates.
_DAYS_ON_AND_OFF = re.compile(r"\b\d\s*on\s*/?\s*\d\s*off\b")
_DATED_DAY = r"[a-z]{2,9}\.?\s+\d{1,2}/\d{1,2}(?:/\d{2,4})?"
_DATED_BLOCK = re.compile(
    rf"\(?\s*(?:(?:current\s+)?(?:on-?block|block|on)\s*:?\s*)?(?P<first>{_DATED_DAY})\s*-\s*"
    rf"(?P<last>{_DATED_DAY})\s*\)?"
)


def _unless_dated_days(match: re.Match[str]) -> str:
    """A block of dates ("Mon 11/23 - Sun 11/29") in a days-on/days-off rotation: dropped.

    The days worked rotate, so the dates of the current block are not weekly
    days; without them no days are named and the check reads every day.
    """
    words = [re.match(r"[a-z]+", match[key])[0] for key in ("first", "last")]  # type: ignore[index]
    return " " if all(_day_word(word) for word in words) else match[0]


def _only_days_off(part: str) -> set[str]:
    """ "Fri/Sat/Sun off" written as a part of its own: the days named, else nothing."""
    text = _prepared(part)
    if _RANGE.search(text):
        return set()
    off, _, rest = _days_off(text)
    return off if not _FILLER.sub(" ", rest).strip(" ,-") else set()


# Fields of an HR system's export that are not the schedule ("Pay Group: OPS-HRLY").
_ADMIN_FIELD = re.compile(
    r"^\s*(?:pay group|assignment status|emp(?:loyee)? sub\s*gr(?:ou)?p|daily wh|planned wh|"
    r"unpaid br(?:ea)?k|period wsr|dws|sched(?:ule)? gr(?:ou)?p|"
    r"cost cent(?:er|re)|fte|job|position|status|dept|department|location|union|pay rule|"
    r"standard hours|rotation\s*:\s*none)\b",
    re.IGNORECASE,
)
_FIELD_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z ./-]{0,30}?)\s*:(?!\d)\s*(.*)$")
_TELEWORK_KEY = re.compile(r"^(?:remote|telework|wfh|work from home)$", re.IGNORECASE)


def _export_fields(text: str) -> str:
    """ "Dayforce | Pay Group: OPS | Schedule: Tu We Th 06:00 - 14:30": the schedule's fields.

    Only text with three or more fields split by "|" (or " ; ") is read this way:
    administrative fields and bare system names go, "Remote: Mon, Fri" becomes
    telework, and any other "Key: value" keeps its value.
    """
    fields = [field.strip() for field in re.split(r"\s*\|\|?\s*|\s+;\s+", text)]
    fields = [field for field in fields if field]
    if len(fields) < 3:
        return text
    kept = []
    for field in fields:
        if _ADMIN_FIELD.match(field):
            continue
        keyed = _FIELD_KEY.match(field)
        key, value = (keyed[1], keyed[2]) if keyed else ("", field)
        if _TELEWORK_KEY.match(key.strip()):
            kept.append(f"telework {value}")
        elif (
            _RANGE.search(_prepared(value))
            or _has_day(value)
            or _QUALIFIERS.search(re.sub(r"\d", "", value.lower()))
        ):
            kept.append(value)
    return ", ".join(kept) if kept else text


def _has_day(text: str) -> bool:
    return any(_is_day_token(word.strip(",-:|().*")) for word in text.lower().split())


def _split_by_hours(part: str) -> list[str]:
    """ "M/W 0700-1730, F 0700-1130": a comma that starts another range of hours starts a part."""
    pieces = [
        piece
        for piece in re.split(r",|\s/\s|\s\+\s", part)
        if _FILLER.sub(" ", _prepared(piece)).strip(" -")
    ]
    with_hours = [piece for piece in pieces if _RANGE.search(_prepared(piece))]
    if len(with_hours) < 2 or len(with_hours) != len(pieces):
        return [part]
    if any(not _words_beside_hours(piece) for piece in pieces[1:]):
        return [part]  # "0700-1100 / 1500-1900": the second piece of a split day
    return pieces


def _words_beside_hours(piece: str) -> bool:
    return bool(re.search(r"[a-z]", _FILLER.sub(" ", _RANGE.sub(" ", _prepared(piece)))))


def _hours(part: str) -> tuple[list[tuple[str, str]], str]:
    """The part's plausible (start, end) readings, and the words left for the days."""
    text = _prepared(part)
    marks, text = _meridiem_pair(text)
    found = list(_RANGE.finditer(text))
    if len(found) == 2 and _SPLIT_JOIN.fullmatch(text[found[0].end() : found[1].start()]):
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


# "0515-0915 / 1445-1845", "7-11a & 4-8p": two pieces of one working day.
_SPLIT_JOIN = re.compile(r"\s*(?:&|/|\+|,|and|y|und|et|then)?\s*(?:de |from |then )?")


def _split_shift(found: list[re.Match[str]], text: str, part: str) -> tuple[list, str]:
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


def _prepared(part: str) -> str:
    """One spelling of the part: lower case, accents, dashes and arrows folded, notes removed."""
    text = "".join(
        c for c in unicodedata.normalize("NFKD", part.lower()) if not unicodedata.combining(c)
    )
    text = re.sub(r"[\u2013\u2014\u2212\u2192]|->", "-", text)
    # A leave note says when the rider is away, not the hours: "LOA (medical) thru 12/11/26."
    text = _LEAVE_NOTE.sub(" ", text)
    text = re.sub(r"\b(\d{4})\s*(?:hrs|hr|h)\b", r"\1", text)  # "0600hrs"
    text = text.replace("_", " ")  # "M-F_0700-1530": an export's field joiner
    if _DAYS_ON_AND_OFF.search(text):
        text = _DATED_BLOCK.sub(_unless_dated_days, text)
    text = _NOTE.sub(" ", text.replace("|", ","))
    text = _BRACKETED.sub(_drop_bracketed_name, text)
    # "(Garage 2)", "(Bay 14)": a place with its number; "(4 days)": the days named, counted.
    text = _BRACKETED_NUMBERED.sub(_drop_bracketed_name, text)
    text = _DAYS_COUNTED.sub(" ", text)
    text = _NOW_AND_THEN_OFF.sub(_unless_a_day, text)
    # "every other Friday" (worked): on the Fridays worked, these are the hours.
    text = re.sub(
        r"\b(?:every other|alt\.?|alternate|alternating) ([a-z]+)\b(?!\s+off)", _the_day_alone, text
    )
    text = re.sub(r"\b(\d{1,2}:\d{2})\s*h\b", r"\1", text)  # "15:00 h"
    # French hours: "de 7 h 30 à 16 h"; "quarts de 12 h" names the length, not a time.
    text = re.sub(r"\b(?:quarts? )?de (?:8|10|12) ?h\b", " ", text)
    text = re.sub(r"\b(\d{1,2}) ?h ?(\d{2})\b", r"\1:\2", text)
    text = re.sub(r"\b(\d{1,2}) ?h\b(?![:\d])", r"\1:00", text)
    # Dates and years beside a bid or an effective date: "eff. 10/05/26", "2026-27".
    text = re.sub(
        r"\b(?:eff(?:ective)?\.?|awarded|as of|since)\s*\d{1,2}[-/]\d{1,2}(?:[-/]\d{2,4})?|"
        r"\b20\d\d(?:-\d\d)?\b",
        " ",
        text,
    )
    text = re.sub(r"\(\s*\*\s*alt\w*\s*(?:wks?|weeks?)?\s*\)|\*", " ", text)  # "*Wed (*alt wks)"
    # "Fri(wk1) 7-3:30 | Fri(wk2) RDO", "(Wed alt)", "W(alt)": a day worked every other week.
    text = re.sub(r"\b([a-z]+)\s*\((?:wk|week)\s*\d\)\s*rdo\b", " ", text)
    text = re.sub(r"\b([a-z]+)\s*\((?:wk|week)\s*\d\)", r"\1", text)
    text = re.sub(r"\(\s*([a-z]+)\s+alt\w*\s*\)|\b([a-z]+)\s*\(alt\w*\)", r"\1\2", text)
    text = text.replace("~", "/").replace(">>", "-").replace(" -- ", " , ")
    text = _SPOKEN_MERIDIEM.sub(_spoken_meridiem, _NUMBER_WORDS.sub(_number, text))
    # A meal break inside the shift moves neither end of it.
    text = _SHIFT_CODE.sub(" ", _LUNCH.sub(" ", _EXTRA_DUTY.sub(" ", text)))
    text = _MILITARY_SLASH.sub(r"\1-\2", _MILITARY_PAIR.sub(r"\1-\2", text))
    return _PATTERN_NAME.sub(" ", text)


# Notes beside the hours that change neither end of the day: core hours, history,
# overtime when posted, occasional late stays, call from home, a department.
_NOTE = re.compile(
    r"\(?\s*core (?:hrs|hours)\b[^()]*\)?"
    r"|\((?:moved|changed|transferred|was|previously|formerly|prev\.?)\b[^()]*\)"
    r"|\(\s*(?:ot|overtime|on-?call|call)\b[^()]*\)"
    r"|\([^()]*\bunpaid\b[^()]*\)"
    r"|\(\s*off the other [a-z]+\s*\)|\(\s*[a-z]+ off (?:wk|week) \d\s*\)"
    r"|,?\s*\b(?:sometimes|occasionally|may|might)\b[^,;.()]*"
    r"|[+,;]?\s*\b(?:plus\s+)?(?:on-?)?call\s+\d[^,;()]*(?:\([^()]*\))?"
    r"|,\s*(?:dept|department|unit|area|cell|bldg|building|floor|station)\b[^,;]*"
)
# A bracketed name ("(Servicios Ambientales)", "(Baylor)"): no digits, no day, no meridiem.
_BRACKETED = re.compile(r"\(([^()\d]*)\)")
_BRACKETED_NUMBERED = re.compile(r"\((?!\s*(?:wk|week|alt))([a-z][a-z .&'/-]*?\s*#?\s*\d{1,3})\)")
_DAYS_COUNTED = re.compile(r"\(\s*\d\s*(?:days?|shifts?)(?:\s*(?:/|a|per)\s*(?:wk|week))?\s*\)")
_BRACKET_KEEPS = re.compile(
    r"rotat|alternat|var(?:y|ies)|tbd|pending|except|\boff\b|other|week|night|evening|morning|"
    r"\b[ap]\.?m\b|call|only"
)


def _drop_bracketed_name(match: re.Match[str]) -> str:
    inside = match[1]
    words = re.findall(r"[a-z]+", inside)
    if not words or _BRACKET_KEEPS.search(inside):
        return match[0]
    if any(_day_word(word) or word in _DAY_SETS for word in words):
        return match[0]
    return " "


_ALTERNATE_DAY_NAMED = re.compile(
    r"\b(?:rdo|alt(?:ernat\w*)?|every other|other)\b.{0,20}\b(?:fri|mon|f)(?:days?)?\b"
    r"|\bworking fri"
    r"|\b(?:fri|mon) off (?:wk|week) \d"
)
_LEAVE_NOTE = re.compile(
    r"\b(?:loa|leave of absence|on leave|fmla|medical leave)\b[^.;\n]*?"
    r"\b(?:thru|through|until|till|to|ends?|returns?)\s+\d{1,2}/\d{1,2}(?:/\d{2,4})?\s*[.;]"
)
# "6 in the morning till 2:30 in the afternoon": the meridiem said in words.
_SPOKEN_MERIDIEM = re.compile(
    r"\b(?P<time>\d{1,2}(?::\d{2})?)\s+(?:o'?clock\s+)?(?:in the (?P<part>morning|afternoon|"
    r"evening)|at (?P<night>night))\b"
)


def _spoken_meridiem(match: re.Match[str]) -> str:
    return match["time"] + ("am" if match["part"] == "morning" else "pm")


# Duty beyond the regular hours, called in when needed: not the commute.
_EXTRA_DUTY = re.compile(
    r"[/,;+]?\s*(?:plus |and )?(?:(?:vol\.?|voluntary|mandatory)\s+)?(?:storm duty|on-?call|"
    r"overtime|ot|call-?outs?|extra shifts?)\s+(?:(?:as|when|if) needed\b|(?:on )?[a-z]+(?=\s*$|,))"
    # "Sat OT 6a-12p as posted": overtime with its own hours, offered now and then.
    r"|[.,;/+]?\s*\b(?:[a-z]+\s+)?(?:ot|overtime)\s+\S+\s+(?:as|when|if)\s+"
    r"(?:posted|needed|required|available|offered)\b"
    # Days off that rotate: the days are not given, the hours are.
    r"|,?\s*\b(?:days off|rdos?|off days) (?:rotate|rotating|vary|varies)\b[^,;]*"
    r"|,?\s*\brotating (?:days off|rdos?)\b[^,;]*"
    r"|,\s*(?:badge|clock|punch)\w* (?:in|out)\b[^,;]*"
)
# "0700 1530": two 24-hour times side by side are a range.
_MILITARY_PAIR = re.compile(r"\b((?:[01]\d|2[0-3])[0-5]\d)\s+((?:[01]\d|2[0-3])[0-5]\d)\b")
# "0700/1530": two 24-hour times split by a slash, unless either belongs to a
# range of its own ("0515-0915 / 1445-1845" is a split shift, not 09:15-14:45).
_MILITARY_SLASH = re.compile(
    r"(?<![-/])(?<![-/] )\b((?:[01]\d|2[0-3])[0-5]\d)\s*/\s*((?:[01]\d|2[0-3])[0-5]\d)\b(?!\s*[-/])"
)
_LUNCH = re.compile(
    r"\([^()]*\b(?:lunch|break|meal|almuerzo|comida|pause)\b[^()]*\)"
    # "(30m L)", "(30 min)", "(0.5 hr brk)": a break's length in brackets.
    r"|\(\s*(?:\d+|0?\.\d+)\s*(?:m|mins?|minutes?|h|hrs?|hours?)\.?\s*"
    r"(?:l|lunch|brk|break|meal|unpaid|paid)?\.?\s*\)"
    r"|,?\s*(?:(?:with|w/)\s*)?(?:an?\s+)?(?:\d+\s*-?\s*(?:min(?:ute)?s?|hrs?|hours?)|half[- ]hour|"
    r"one[- ]hour)\s+(?:unpaid\s+|paid\s+)?(?:lunch|break|meal)(?:\s+break)?\b"
)
_HOUR_WORDS: tuple[str, ...]
_HOUR_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_HOUR_WORDS += ("eleven", "twelve")
_NUMBER_WORDS = re.compile(
    r"\b(?P<hour>" + "|".join(_HOUR_WORDS) + r")(?:[- ](?P<minutes>fifteen|thirty|forty[- ]five)"
    r"|\s+o'?clock)?\b"
)
_MINUTE_WORDS = {"fifteen": 15, "thirty": 30, "forty five": 45, "forty-five": 45}


def _number(match: re.Match[str]) -> str:
    """ "seven" → "7", "three-thirty" → "3:30": hours HR spelled out."""
    hour = _HOUR_WORDS.index(match["hour"]) + 1
    minutes = match["minutes"]
    return f"{hour}:{_MINUTE_WORDS[minutes]:02d}" if minutes else str(hour)


# "8-5 (am-pm)", "seven to three-thirty, a.m. to p.m.": the meridiems written
# once for both ends, apart from the hours.
_MERIDIEM_PAIR = re.compile(
    r"(?<![\d:])(?<![\d:] )\(?\s*\b(?P<first>[ap])\.?m\.?\s*(?:-|to|/)\s*(?P<last>[ap])\.?m\.?"
    r"(?![a-z])\s*\)?"
    # "7-3:30 am-pm": written once after the range, morning to afternoon.
    r"|(?<=\d) (?P<first2>a)\.?m\.?-(?P<last2>p)\.?m\.?(?![a-z\d])"
)


def _meridiem_pair(text: str) -> tuple[tuple[str, str] | None, str]:
    found = list(_MERIDIEM_PAIR.finditer(text))
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


def _days(rest: str, part: str) -> list[str]:
    rest = re.sub(
        r"\b(?:7 days(?: a week)?|every day|todos los dias|tous les jours)\b", " daily ", rest
    )
    off, named, rest = _days_off(rest)
    text = " ".join(_FILLER.sub(" ", rest).split())
    text = _without_role(_LEADING_LABEL.sub(_unless_days, text))
    if not text.strip(" ,-|") and named:
        # "RDOs Sat/Sun, 6:00-14:30": the days worked are the rest of the week.
        return [day for day in WEEKDAYS if day not in off]
    if not text.strip(" ,-|") and off:
        return []  # "telework M/W/F (8a-5p)": hours kept on days not commuted
    if not text.strip(" ,-") or _ROTATING.fullmatch(text):
        # "Rotating 12s (D) 0600-1830": the days rotate, so none is named.
        raise _NoDays(f"'{part}': no days given")
    weekend_days = _named_weekend(text, part)
    if weekend_days:
        return [day for day in weekend_days if day not in off]
    return _listed_days(text, part, off)


_ROTATING = re.compile(r"\s*(?:rotating|rotation|rotates|rotativo|rotativa|rotacion)\s*")
_WEEKEND_WORD = re.compile(
    r"\b(?:wknds?|wkends?|weekends?|fin de semana|fines de semana)"
    r"(?:\s+(?:relief|crew|coverage|team|staff))?\b"
)


def _named_weekend(text: str, part: str) -> list[str]:
    """ "Wknd 12s Sat/Sun", "Sat-Sun 7a-3:30p (weekend only)": the weekend word repeats the days.

    Only when the days named are all Friday to Sunday ("Weekend nights Fri &
    Sat"); "M-F … (wknds only)" contradicts itself and is left to be refused.
    """
    if not _WEEKEND_WORD.search(text):
        return []
    plain = " ".join(_WEEKEND_WORD.sub(" ", text).split())
    if not plain.strip(" ,-|"):
        return []
    try:
        days = _listed_days(plain, part, set())
    except ScheduleError:
        return []
    return days if set(days) <= {"Fri", "Sat", "Sun"} else []


def _listed_days(text: str, part: str, off: set[str]) -> list[str]:
    items = [
        item.strip(" -") for item in re.split(r"\s*(?:,|/|&|\band\b|\by\b|\bet\b|\+)\s*", text)
    ]
    items = [item for item in items if item]
    if len(items) == 1 and items[0].count("-") >= 2:
        items = items[0].split("-")  # "Tu-W-Th": a list written with dashes
    if (
        len(items) > 1
        and {"t", "s"} & set(items)
        and all(item in _DAY_WORDS or item in ("t", "s") for item in items)
    ):
        days = _letter_days(items, part)  # "M,T,W,Th,F": each T read from its neighbours
    else:
        days = [day for item in items for day in _day_item(item, part)]
    if len(set(days)) != len(days):
        if not _WEEK_BY_WEEK.search(part.lower()):
            raise ScheduleError(f"'{part}': a day is listed twice")
        # "Week 1: Mon, Tue, Wed | Week 2: Mon–Thu", same hours: every day worked in either week.
        days = list(dict.fromkeys(days))
    # "Weekdays …, Fridays off", "M-F …, telework Tue": the days off come out.
    days = [day for day in days if day not in off]
    if not days:
        raise ScheduleError(f"'{part}': every day named is off")
    return days


# "Garage – owl shift …": a one-word place or unit before a spaced dash.
_LEADING_LABEL = re.compile(r"^(?P<words>[a-z]+(?: [a-z]+){0,2}) - ")


# Words that change which days or hours are meant: never skipped as a job title.
_QUALIFIERS = re.compile(
    r"rotat|alternat|\balt\b|var(?:y|ies|iable)|tbd|pending|except|\boff\b|other|every|most|some|"
    r"usual|typical|sometimes|occasion|\bany\b|\bas\b|needed|prn|relief|float|extra|casual|"
    r"on-?call|\bcall\b(?!-)|"
    r"split|flex|week|\bwk|month|holiday|school|summer|winter|season|temp|until|thru|through|"
    r"start|effect|\beff\b|after|before|\bor\b|\bnot\b|\bno\b|never|only|core|band|window|"
    r"approx|about|around|roughly|\d"
)


def _without_role(text: str) -> str:
    """ "valet", "receiving clerk m-f", "despachadora, …": a job title before the days, skipped.

    Up to four words that name no day and change nothing about which days or
    hours are meant; anything else stays and is refused as a word left over.
    """
    words = text.split()
    first_day = next(
        (i for i, word in enumerate(words) if _is_day_token(word.strip(",-:|"))), len(words)
    )
    label = " ".join(words[:first_day])
    if first_day == 0 or first_day > 4 or _QUALIFIERS.search(label):
        return text
    return " ".join(words[first_day:])


def _is_day_token(token: str) -> bool:
    pieces = [piece for piece in re.split(r"[-/&+,.]", token) if piece]
    if token in _DAY_SETS:
        return True
    return bool(pieces) and all(
        _day_word(piece)
        or piece in _DAY_SETS
        or piece in ("t", "s")
        or (len(piece) > 1 and not _LETTER.sub("", piece))  # "MTWThF"
        for piece in pieces
    )


def _unless_a_day(match: re.Match[str]) -> str:
    return " " if _day_word(match["day"] or match["day_off"] or match["day_rdo"]) else match[0]


def _the_day_alone(match: re.Match[str]) -> str:
    return match[1] if _day_word(match[1]) else match[0]


def _unless_days(match: re.Match[str]) -> str:
    words = match["words"].split()
    return match[0] if any(_day_word(word) or word in _DAY_SETS for word in words) else ""


def _days_off(rest: str) -> tuple[set[str], set[str], str]:
    """Days not commuted, those of them named as days off, and the text left.

    Days are not commuted when named as off ("Fridays off", "RDOs Sat/Sun"),
    excepted ("except Fri") or worked from home; they are taken out of the
    days worked. Only named days off say the rest of the week is worked. A
    day off now and then ("except 2nd Fri", "alt Fri off") is dropped: on the
    days worked the hours are the same, and those are what the van is checked
    against.
    """
    off: set[str] = set()
    named: set[str] = set()

    def now_and_then(match: re.Match[str]) -> str:
        day = match["day"] or match["day_off"] or match["day_rdo"]
        return " " if _day_word(day) else match[0]

    def taking(into: set[str]) -> Callable[[re.Match[str]], str]:
        def always(match: re.Match[str]) -> str:
            # "Sat and Sun", "lunes y martes": the words joining the list are not days.
            words = re.findall(r"[a-z]+", match["days"])
            days = [_day_word(word) for word in words if word not in ("and", "y", "et")]
            if not days or None in days:
                return match[0]  # "alt off", "every other off": left for the days to refuse
            into.update(day for day in days if day)
            off.update(day for day in days if day)
            return " "

        return always

    rest = _NOW_AND_THEN_OFF.sub(now_and_then, rest)
    # "every 3rd wknd", "+ every other weekend": weekends now and then, as the days are.
    rest = _OCCASIONAL_WEEKEND.sub(" ", rest)
    rest = _DAYS_OFF_LIST.sub(taking(named), rest)
    rest = _TELEWORK.sub(taking(set()), rest)
    rest = _EXCEPT.sub(taking(set()), rest)
    return off, named, _OFF.sub(taking(named), rest)


_ORDINAL = (
    r"(?:1st|2nd|3rd|4th|5th|first|second|third|fourth|last|alternate|alt\.?|every other|other)"
)
_NOW_AND_THEN_OFF = re.compile(
    rf"\b(?:except|excl\.?|excluding|but not|minus)\s+(?:the\s+|every\s+)?{_ORDINAL}\s+"
    rf"(?P<day>[a-z]+)\b|\b{_ORDINAL}\s+(?P<day_off>[a-z]+)\s+off\b"
    rf"|\b(?:rdo|day off|off)\s+(?:on\s+)?{_ORDINAL}\s+(?P<day_rdo>[a-z]+)\b"
)
_WEEK_BY_WEEK = re.compile(r"\b(?:week|wk)\s*[12]\b")
_OCCASIONAL_WEEKEND = re.compile(
    rf"[+,]?\s*\b(?:every\s+)?{_ORDINAL}\s+(?:wknd|weekend)s?\b|[+,]?\s*\b\d\s+(?:wknd|weekend)s?"
    r"\s*/\s*(?:mo|month)\b"
)
_DAY_LIST = r"(?P<days>[a-z]+(?:\s*(?:/|&|\+|,|\band\b|\by\b|\bet\b)\s*[a-z]+)*)"
_TELEWORK = re.compile(
    rf"\b(?:telework(?:ing)?|tw|remote|wfh|work(?:ing)? from home)\s*:?\s*(?:on\s+)?{_DAY_LIST}"
)
_EXCEPT = re.compile(rf"\b(?:except|excl\.?|excluding|but not|excepto|salvo|sauf)\s+{_DAY_LIST}")
# "Days off Tue & Wed", "RDOs Sat/Sun", "rest days: Sun, Mon".
_DAYS_OFF_LIST = re.compile(
    rf"\b(?:days? off|off days?|off|rdos?|regular days? off|rest days?|descanso|dias de descanso|"
    rf"conge|jours de conge)\s*:?\s*{_DAY_LIST}"
)
_OFF = re.compile(r"\b(?P<days>[a-z]+(?:\s*(?:/|&|\band\b)\s*[a-z]+)*)\s+off\b")


def _day_word(word: str) -> str | None:
    """The day a word names, plural and two swapped letters included ("Fridays", "Fir")."""
    if word in _DAY_WORDS:
        return _DAY_WORDS[word]
    if word.endswith("s") and len(word) > 4 and word[:-1] in _DAY_WORDS:
        return _DAY_WORDS[word[:-1]]
    if len(word) >= 3:
        # A typist's slip, not a guess: only two neighbouring letters swapped.
        for i in range(len(word) - 1):
            swapped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
            if swapped in _DAY_WORDS:
                return _DAY_WORDS[swapped]
    if len(word) >= 5:
        # Or one letter dropped from a whole day name ("Mnday", "Wednsday").
        for name in _FULL_DAY_NAMES:
            if len(name) == len(word) + 1 and any(
                name[:i] + name[i + 1 :] == word for i in range(len(name))
            ):
                return _DAY_WORDS[name]
    return None


_FULL_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


class _NoDays(ScheduleError):
    pass


def _letter_days(letters: list[str], part: str) -> list[str]:
    """Days written letter by letter, in week order; each "T" read from its place."""
    thursday_written = bool({"th", "thu", "thur", "thurs", "thursday", "r"} & set(letters))
    days = []
    for index, letter in enumerate(letters):
        if letter == "s":
            # "F/S/Su": an S before Su is Saturday, one after Sa is Sunday.
            before = letters[index - 1] if index else ""
            after = letters[index + 1] if index + 1 < len(letters) else ""
            if _DAY_WORDS.get(after) == "Sun" or _DAY_WORDS.get(before) == "Fri":
                letter = "sa"
            elif _DAY_WORDS.get(before) == "Sat" or (not before and _DAY_WORDS.get(after) == "Mon"):
                letter = "su"  # "S/M/T/W": a week written from Sunday
            else:
                raise _LoneLetter(
                    f"'{part}': a lone 'S' could be Saturday or Sunday", "s", ("Sat", "Sun")
                )
        if letter == "t":
            before = letters[index - 1] if index else ""
            after = letters[index + 1] if index + 1 < len(letters) else ""
            if thursday_written or after == "w":
                letter = "tu"  # in week order, a T before W is Tuesday
            elif before == "w":
                letter = "th"  # and one after W is Thursday ("MT" or "TF" stay unread)
            else:
                raise _LoneLetter(
                    f"'{part}': a lone 'T' could be Tuesday or Thursday", "t", ("Tue", "Thu")
                )
        days.append(_DAY_WORDS[letter])
    return days


def _day_item(item: str, part: str) -> list[str]:
    if item in _DAY_SETS:
        return list(_DAY_SETS[item])
    if day := _day_word(item):
        return [day]
    match = _DAY_RANGE.match(item)
    first_day, last_day = (
        (_day_word(match["first"]), _day_word(match["last"])) if match else (None, None)
    )
    if first_day and last_day:
        first = WEEKDAYS.index(first_day)
        length = (WEEKDAYS.index(last_day) - first) % len(WEEKDAYS) + 1
        return [WEEKDAYS[(first + offset) % len(WEEKDAYS)] for offset in range(length)]
    words = item.split()
    if len(words) > 1 and all(word in _DAY_WORDS or word == "t" for word in words):
        return _letter_days(words, part)  # "Mon Wed Fri", "M T W R F"
    if len(words) == 1 and _LETTER.sub("", item) == "" and len(item) > 1:
        return _letter_days(_LETTER.findall(item), part)  # "MTWThF"
    raise ScheduleError(f"'{part}': '{item}' is not a day, a range of days or 'weekdays'")


# --- The shift's name settles am/pm ------------------------------------------------------

# Words that say which part of the day a shift works, as HR names shifts ("Warehouse
# days", "Care Team Days", "3rd shift", "Swing"), with the starts each allows. Where
# the hours lack am/pm, a name that says "days" keeps only the morning reading of
# "6-2:30" (06:00-14:30) and drops the night one (18:00-02:30): a shift named for
# the day does not start at six in the evening.
_TIME_OF_DAY_NAMES: dict[str, tuple[re.Pattern[str], tuple[int, int]]] = {
    # 04:00 to 11:59 ("Days 6-2:30", "1st shift", "Early").
    "day": (
        re.compile(r"\b(?:days?|day shift|daytime|1st|first shift|mornings?|early|am shift)\b"),
        (4 * 60, 12 * 60),
    ),
    # 12:00 to 19:59 ("Swing 3-11:30", "2nd shift", "Evenings").
    "evening": (
        re.compile(r"\b(?:evenings?|swing|2nd|second shift|afternoons?|pm shift)\b"),
        (12 * 60, 20 * 60),
    ),
    # 18:00 to 03:59 ("Nights 10-6:30", "3rd shift", "Graveyard", "Overnight", "NOC").
    "night": (
        re.compile(r"\b(?:nights?|night shift|3rd|third shift|graveyard|overnights?|noc)\b"),
        (18 * 60, 28 * 60),
    ),
}
# Words in the schedule text itself that name the part of the day: only as a shift
# ("day shift", "3rd shift"), since "days" alone in a schedule often counts days.
_TIME_OF_DAY_IN_TEXT = re.compile(
    r"\b(?:(?:day|night|evening|swing|morning|1st|2nd|3rd|first|second|third)\s+sh(?:ift|ft|fit)"
    r"|graveyard|overnights?)\b"
)


def part_of_day_named(name: str) -> str | None:
    """ "day", "evening" or "night" when a shift's name says which, else None.

    "Warehouse days" → "day", "3rd Shift" → "night". A name that doubts itself
    ("Evening Queue?") or names two parts ("Days/Nights", "Day-Night rotation")
    says nothing.
    """
    text = _prepared_name(name)
    if not text or "?" in text or re.search(r"\brotat|\balternat|\bd/n\b", text):
        return None
    named = [part for part, (words, _) in _TIME_OF_DAY_NAMES.items() if words.search(text)]
    return named[0] if len(named) == 1 else None


def _prepared_name(name: str) -> str:
    return "".join(
        c for c in unicodedata.normalize("NFKD", name.lower()) if not unicodedata.combining(c)
    ).strip()


def readings_for_part_of_day(
    readings: list[list[DaySpan]], name: str, text: str = ""
) -> list[list[DaySpan]]:
    """The readings whose every start fits the part of the day the name (or text) says.

    Used only to settle am/pm: when the shift's name says "days" and the hours
    read 06:00-14:30 or 18:00-02:30, only the first is kept. When the name says
    nothing, or no reading (or every reading) fits it, the readings are returned
    as they were, and the check still decides only where they all agree.
    """
    part = part_of_day_named(name)
    if part is None and text:
        said = _TIME_OF_DAY_IN_TEXT.findall(_prepared_name(text))
        part = part_of_day_named(" ".join(said)) if said else None
    if part is None:
        return readings
    low, high = _TIME_OF_DAY_NAMES[part][1]

    def fits(reading: list[DaySpan]) -> bool:
        starts = [minutes_of_day(span.start) for span in reading]
        return all(low <= start < high or low <= start + 24 * 60 < high for start in starts)

    kept = [reading for reading in readings if fits(reading)]
    return kept if kept and len(kept) < len(readings) else readings


# --- A rotation between two sets of hours ------------------------------------------------


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


# Words that say the hours are worked in turn: "rotating D/N", "DuPont", "Wk1 … Wk2 …
# (alternating weekly)", "rotates 2 wks days then 2 wks nights", "rotation jour/nuit".
_ROTATION_NAMED = re.compile(
    r"\b(?:rotat\w*|rotacion|dupont|alternat\w* (?:weekly|weeks?|wks?)|"
    r"(?:weekly|biweekly) alternat\w*)\b"
)
# What a rotation's description adds beside each leg's hours: the rotation and its
# name, day/night tags, the length of each turn ("2 wks"), the order ("then"), and
# the DuPont or Pitman sequence in days ("4N-3off-3D-1off-…").
_ROTATION_WORDS = re.compile(
    r"\((?:alternat\w*|rotat\w*)[^()]*\)"
    r"|\(?\b\d+\s*[nd](?:\s*-\s*\d+\s*(?:off|[nd]))+\b\)?"
    r"|\b(?:(?:rotat\w*|rotacion|alternat\w*)(?: (?:weekly|biweekly|monthly))?|dupont)\b"
    r"|\b(?:d\s*/\s*n|n\s*/\s*d|days?\s*/\s*nights?|nights?\s*/\s*days?|jour\s*/\s*nuit|"
    r"dia\s*/\s*noche)\b"
    r"|\b\d+\s*(?:wks?|weeks?|semaines?)\b|\b(?:8|10|12)\s*h\s*:"
)
_LEG_BREAK = re.compile(r"[;,]|\s/\s|\bthen\b|\bpuis\b|\bluego\b")


def _rotation_legs(text: str) -> list[RotationLeg] | None:
    """The legs of a rotation written with each leg's hours, or None if it is not one.

    Each piece of the text (split at ";", ",", " / " or "then") that holds one
    range of hours is a leg; pieces without hours (a crew, a day-range shared by
    every leg) go with every leg. Each leg is then read as its own schedule.
    """
    lowered = text.lower()
    if not _ROTATION_NAMED.search(lowered):
        return None
    cleaned = _ROTATION_WORDS.sub(" ", re.sub(r"\s*\|\s*", " ; ", lowered))
    pieces = [piece for piece in _LEG_BREAK.split(cleaned) if piece.strip(" -:()")]
    ranged = [piece for piece in pieces if _RANGE.search(_prepared(piece))]
    if len(ranged) < 2:
        return None
    if any(len(_RANGE.findall(_prepared(piece))) > 1 for piece in ranged):
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


# Day blocks: other tools' schedule objects --------------------------------------------------

BLOCK_SHAPE = (
    '{"days": "Mon-Fri", "start": "07:00", "end": "15:30"} '
    "(days as text or a list; start_time/end_time also read), or a list of them"
)
_BLOCK_KEYS = {
    "days": ("days", "day"),
    "start": ("start", "start_time"),
    "end": ("end", "end_time"),
}


def read_day_blocks(value: object) -> list[DaySpan]:
    """Weekly spans from ``{"days": "Mon-Fri", "start": "7:00 AM", "end": "3:30 PM"}`` blocks.

    Scheduling tools keep a shift as a day list with one pair of times, not a
    row per day. Each block is read as the text "days start-end", so its days
    and times are read as HR's text is, and refused when ambiguous.
    """
    items = value if isinstance(value, list) else [value]
    blocks = [item for item in items if isinstance(item, dict)]
    if not blocks or len(blocks) != len(items):
        raise ScheduleError(f"expected {BLOCK_SHAPE}")
    texts = [_block_text(block) for block in blocks]
    return read_schedule_text("; ".join(texts))


def _block_text(block: dict) -> str:
    given = {str(key).strip().lower(): item for key, item in block.items()}
    found = {
        name: next((given[key] for key in keys if given.get(key) not in (None, "")), None)
        for name, keys in _BLOCK_KEYS.items()
    }
    if None in found.values() or set(given) - {
        key for keys in _BLOCK_KEYS.values() for key in keys
    }:
        raise ScheduleError(f"found {block}; expected {BLOCK_SHAPE}")
    days = found["days"]
    day_text = ", ".join(str(day).strip() for day in days) if isinstance(days, list) else str(days)
    return f"{day_text.strip()} {str(found['start']).strip()}-{str(found['end']).strip()}"
