"""The days of one part of HR's text: names, letters, ranges, lists, and the days off."""

import re
from collections.abc import Callable

from vanpools.hr_text.rules_days import (
    DAY_LIST_JOINER,
    DAY_RANGE,
    DAYS_OFF_LIST,
    EVERY_DAY_SAID,
    EXCEPT,
    LEADING_LABEL,
    LETTER,
    NOW_AND_THEN_OFF,
    OCCASIONAL_WEEKEND,
    OFF,
    QUALIFIERS,
    ROTATING,
    TELEWORK,
    WEEK_BY_WEEK,
    WEEKEND_WORD,
)
from vanpools.hr_text.rules_hours import FILLER
from vanpools.hr_text.words import _DAY_SETS, _DAY_WORDS, _day_word
from vanpools.schedules import WEEKDAYS, ScheduleError


class _LoneLetter(ScheduleError):
    """A day letter its neighbours do not settle: "T" (Tue or Thu), "S" (Sat or Sun)."""

    def __init__(self, message: str, letter: str, days: tuple[str, str]) -> None:
        super().__init__(message)
        self.letter = letter
        self.days = days


class _NoDays(ScheduleError):
    pass


def _days(rest: str, part: str) -> list[str]:
    rest = EVERY_DAY_SAID.sub(" daily ", rest)
    off, named, rest = _days_off(rest)
    text = " ".join(FILLER.sub(" ", rest).split())
    text = _without_role(LEADING_LABEL.sub(_unless_days, text))
    if not text.strip(" ,-|") and named:
        # "RDOs Sat/Sun, 6:00-14:30": the days worked are the rest of the week.
        return [day for day in WEEKDAYS if day not in off]
    if not text.strip(" ,-|") and off:
        return []  # "telework M/W/F (8a-5p)": hours kept on days not commuted
    if not text.strip(" ,-") or ROTATING.fullmatch(text):
        # "Rotating 12s (D) 0600-1830": the days rotate, so none is named.
        raise _NoDays(f"'{part}': no days given")
    weekend_days = _named_weekend(text, part)
    if weekend_days:
        return [day for day in weekend_days if day not in off]
    return _listed_days(text, part, off)


def _named_weekend(text: str, part: str) -> list[str]:
    """ "Wknd 12s Sat/Sun", "Sat-Sun 7a-3:30p (weekend only)": the weekend word repeats the days.

    Only when the days named are all Friday to Sunday ("Weekend nights Fri &
    Sat"); "M-F … (wknds only)" contradicts itself and is left to be refused.
    """
    if not WEEKEND_WORD.search(text):
        return []
    plain = " ".join(WEEKEND_WORD.sub(" ", text).split())
    if not plain.strip(" ,-|"):
        return []
    try:
        days = _listed_days(plain, part, set())
    except ScheduleError:
        return []
    return days if set(days) <= {"Fri", "Sat", "Sun"} else []


def _listed_days(text: str, part: str, off: set[str]) -> list[str]:
    items = [item.strip(" -") for item in DAY_LIST_JOINER.split(text)]
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
        if not WEEK_BY_WEEK.search(part.lower()):
            raise ScheduleError(f"'{part}': a day is listed twice")
        # "Week 1: Mon, Tue, Wed | Week 2: Mon–Thu", same hours: every day worked in either week.
        days = list(dict.fromkeys(days))
    # "Weekdays …, Fridays off", "M-F …, telework Tue": the days off come out.
    days = [day for day in days if day not in off]
    if not days:
        raise ScheduleError(f"'{part}': every day named is off")
    return days


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
    if first_day == 0 or first_day > 4 or QUALIFIERS.search(label):
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
        or (len(piece) > 1 and not LETTER.sub("", piece))  # "MTWThF"
        for piece in pieces
    )


def _has_day(text: str) -> bool:
    return any(_is_day_token(word.strip(",-:|().*")) for word in text.lower().split())


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

    rest = NOW_AND_THEN_OFF.sub(now_and_then, rest)
    # "every 3rd wknd", "+ every other weekend": weekends now and then, as the days are.
    rest = OCCASIONAL_WEEKEND.sub(" ", rest)
    rest = DAYS_OFF_LIST.sub(taking(named), rest)
    rest = TELEWORK.sub(taking(set()), rest)
    rest = EXCEPT.sub(taking(set()), rest)
    return off, named, OFF.sub(taking(named), rest)


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
    match = DAY_RANGE.match(item)
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
    if len(words) == 1 and LETTER.sub("", item) == "" and len(item) > 1:
        return _letter_days(LETTER.findall(item), part)  # "MTWThF"
    raise ScheduleError(f"'{part}': '{item}' is not a day, a range of days or 'weekdays'")
