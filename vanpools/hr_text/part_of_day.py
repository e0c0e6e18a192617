"""The shift's name settles am/pm: "Warehouse days" keeps only the morning reading.

Words that say which part of the day a shift works, as HR names shifts ("Warehouse
days", "Care Team Days", "3rd shift", "Swing"), with the starts each allows. Where
the hours lack am/pm, a name that says "days" keeps only the morning reading of
"6-2:30" (06:00-14:30) and drops the night one (18:00-02:30): a shift named for
the day does not start at six in the evening.
"""

import unicodedata

from vanpools.hr_text.rule import HrRule
from vanpools.hr_text.rules_days import (
    DAY_NAME,
    EVENING_NAME,
    NAME_IN_DOUBT,
    NIGHT_NAME,
    TIME_OF_DAY_IN_TEXT,
)
from vanpools.schedules import DaySpan, minutes_of_day

# Each part of the day: the rule naming it, and the starts it allows (minutes, end exclusive).
_TIME_OF_DAY_NAMES: dict[str, tuple[HrRule, tuple[int, int]]] = {
    "day": (DAY_NAME, (4 * 60, 12 * 60)),  # 04:00 to 11:59
    "evening": (EVENING_NAME, (12 * 60, 20 * 60)),  # 12:00 to 19:59
    "night": (NIGHT_NAME, (18 * 60, 28 * 60)),  # 18:00 to 03:59
}


def part_of_day_named(name: str) -> str | None:
    """ "day", "evening" or "night" when a shift's name says which, else None.

    "Warehouse days" → "day", "3rd Shift" → "night". A name that doubts itself
    ("Evening Queue?") or names two parts ("Days/Nights", "Day-Night rotation")
    says nothing.
    """
    text = _prepared_name(name)
    if not text or "?" in text or NAME_IN_DOUBT.search(text):
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
        said = TIME_OF_DAY_IN_TEXT.findall(_prepared_name(text))
        part = part_of_day_named(" ".join(said)) if said else None
    if part is None:
        return readings
    low, high = _TIME_OF_DAY_NAMES[part][1]

    def fits(reading: list[DaySpan]) -> bool:
        starts = [minutes_of_day(span.start) for span in reading]
        return all(low <= start < high or low <= start + 24 * 60 < high for start in starts)

    kept = [reading for reading in readings if fits(reading)]
    return kept if kept and len(kept) < len(readings) else readings
