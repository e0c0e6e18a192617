"""One spelling of a part of HR's text before its hours and days are read.

Lower case, accents, dashes and arrows folded; notes that move neither end of
the day (leave, core hours, breaks, overtime, brackets naming a place) removed;
hours written in words or in French made numbers. Every pattern applied is a
named rule in ``rules_hours.py`` or ``rules_days.py``.
"""

import re
import unicodedata

from vanpools.hr_text.rules_days import NOW_AND_THEN_OFF
from vanpools.hr_text.rules_hours import (
    ALTERNATE_IN_BRACKETS,
    BRACKET_KEEPS,
    BRACKETED,
    BRACKETED_NUMBERED,
    DASH,
    DATED_BLOCK,
    DAYS_COUNTED,
    DAYS_ON_AND_OFF,
    EFFECTIVE_DATE,
    EVERY_OTHER_DAY_WORKED,
    EXTRA_DUTY,
    FRENCH_HOUR,
    FRENCH_HOUR_MINUTES,
    FRENCH_SHIFT_LENGTH,
    HOUR_MARK,
    HOURS_SUFFIX,
    LEAVE_NOTE,
    LUNCH,
    MILITARY_PAIR,
    MILITARY_SLASH,
    NOTE,
    NUMBER_WORDS,
    PATTERN_NAME,
    SHIFT_CODE,
    SPOKEN_MERIDIEM,
    STARRED_ALTERNATE,
    WEEK_NUMBERED_DAY,
    WEEK_NUMBERED_RDO,
)
from vanpools.hr_text.words import _DAY_SETS, _HOUR_WORDS, _MINUTE_WORDS, _day_word


def _prepared(part: str) -> str:
    """One spelling of the part: lower case, accents, dashes and arrows folded, notes removed."""
    text = "".join(
        c for c in unicodedata.normalize("NFKD", part.lower()) if not unicodedata.combining(c)
    )
    text = DASH.sub("-", text)
    # A leave note says when the rider is away, not the hours: "LOA (medical) thru 12/11/26."
    text = LEAVE_NOTE.sub(" ", text)
    text = HOURS_SUFFIX.sub(r"\1", text)  # "0600hrs"
    text = text.replace("_", " ")  # "M-F_0700-1530": an export's field joiner
    if DAYS_ON_AND_OFF.search(text):
        text = DATED_BLOCK.sub(_unless_dated_days, text)
    text = NOTE.sub(" ", text.replace("|", ","))
    text = BRACKETED.sub(_drop_bracketed_name, text)
    # "(Garage 2)", "(Bay 14)": a place with its number; "(4 days)": the days named, counted.
    text = BRACKETED_NUMBERED.sub(_drop_bracketed_name, text)
    text = DAYS_COUNTED.sub(" ", text)
    text = NOW_AND_THEN_OFF.sub(_unless_a_day, text)
    # "every other Friday" (worked): on the Fridays worked, these are the hours.
    text = EVERY_OTHER_DAY_WORKED.sub(_the_day_alone, text)
    text = HOUR_MARK.sub(r"\1", text)  # "15:00 h"
    # French hours: "de 7 h 30 à 16 h"; "quarts de 12 h" names the length, not a time.
    text = FRENCH_SHIFT_LENGTH.sub(" ", text)
    text = FRENCH_HOUR_MINUTES.sub(r"\1:\2", text)
    text = FRENCH_HOUR.sub(r"\1:00", text)
    # Dates and years beside a bid or an effective date: "eff. 10/05/26", "2026-27".
    text = EFFECTIVE_DATE.sub(" ", text)
    text = STARRED_ALTERNATE.sub(" ", text)  # "*Wed (*alt wks)"
    # "Fri(wk1) 7-3:30 | Fri(wk2) RDO", "(Wed alt)", "W(alt)": a day worked every other week.
    text = WEEK_NUMBERED_RDO.sub(" ", text)
    text = WEEK_NUMBERED_DAY.sub(r"\1", text)
    text = ALTERNATE_IN_BRACKETS.sub(r"\1\2", text)
    text = text.replace("~", "/").replace(">>", "-").replace(" -- ", " , ")
    text = SPOKEN_MERIDIEM.sub(_spoken_meridiem, NUMBER_WORDS.sub(_number, text))
    # A meal break inside the shift moves neither end of it.
    text = SHIFT_CODE.sub(" ", LUNCH.sub(" ", EXTRA_DUTY.sub(" ", text)))
    text = MILITARY_SLASH.sub(r"\1-\2", MILITARY_PAIR.sub(r"\1-\2", text))
    return PATTERN_NAME.sub(" ", text)


def _drop_bracketed_name(match: re.Match[str]) -> str:
    inside = match[1]
    words = re.findall(r"[a-z]+", inside)
    if not words or BRACKET_KEEPS.search(inside):
        return match[0]
    if any(_day_word(word) or word in _DAY_SETS for word in words):
        return match[0]
    return " "


def _unless_dated_days(match: re.Match[str]) -> str:
    """A block of dates ("Mon 11/23 - Sun 11/29") in a days-on/days-off rotation: dropped.

    The days worked rotate, so the dates of the current block are not weekly
    days; without them no days are named and the check reads every day.
    """
    words = [re.match(r"[a-z]+", match[key])[0] for key in ("first", "last")]  # type: ignore[index]
    return " " if all(_day_word(word) for word in words) else match[0]


def _unless_a_day(match: re.Match[str]) -> str:
    return " " if _day_word(match["day"] or match["day_off"] or match["day_rdo"]) else match[0]


def _the_day_alone(match: re.Match[str]) -> str:
    return match[1] if _day_word(match[1]) else match[0]


def _spoken_meridiem(match: re.Match[str]) -> str:
    return match["time"] + ("am" if match["part"] == "morning" else "pm")


def _number(match: re.Match[str]) -> str:
    """ "seven" → "7", "three-thirty" → "3:30": hours HR spelled out."""
    hour = _HOUR_WORDS.index(match["hour"]) + 1
    minutes = match["minutes"]
    return f"{hour}:{_MINUTE_WORDS[minutes]:02d}" if minutes else str(hour)
