"""The words HR uses for days and hours: day names in four languages, day sets, numbers.

Vocabulary, not patterns: the patterns that read these words are the rules in
``rules_hours.py`` and ``rules_days.py``.
"""

from vanpools.schedules import WEEKDAYS

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
_FULL_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_HOUR_WORDS: tuple[str, ...]
_HOUR_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_HOUR_WORDS += ("eleven", "twelve")
_MINUTE_WORDS = {"fifteen": 15, "thirty": 30, "forty five": 45, "forty-five": 45}


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
