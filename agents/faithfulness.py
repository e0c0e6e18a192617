"""Is every number, ID and date in a piece of reasoning backed by its evidence?

A deterministic check for anything an agent writes from records: a
specialist's reasoning against its evidence items, an answer to a rider or a
coordinator against the facts it was given. It does not judge whether the
reasoning is right, only whether each concrete claim in it (84.7 miles,
EMP-1003, 2026-11-23, 07:00) can be found in the evidence. A model that
invents a distance or cites a rider who is not in the record fails it;
paraphrase and arithmetic-free rounding ("about 85 miles" for 84.66) pass.

Pure functions, no Django: the evaluation and the case Q&A both call
``check_faithfulness(text, evidence)``. ``evidence`` may be any mix of dicts,
lists, strings, numbers, dates, pydantic models and dataclasses.
"""

import dataclasses
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
# Spanish month names, whole words only: answers to riders are written in Spanish
# too ("domingo 29 de noviembre"), and the short forms would read Spanish day
# abbreviations ("mar", Tuesday) as months.
MONTHS.update(
    (name, number)
    for number, name in enumerate(
        (
            "enero",
            "febrero",
            "marzo",
            "abril",
            "mayo",
            "junio",
            "julio",
            "agosto",
            "septiembre",
            "octubre",
            "noviembre",
            "diciembre",
        ),
        start=1,
    )
)
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))

# Order matters: each pattern's matches are masked before the next one runs,
# so the digits of an ID, a date or a ZIP+4 are not read again as numbers.
_ID = re.compile(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_ZIP4 = re.compile(r"\b\d{5}-\d{4}\b")
_US_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
# A day is never the hour of a time ("mar 07:00" is Spanish for Tuesday at seven).
_MONTH_DAY = re.compile(
    rf"\b({_MONTH})\.? (\d{{1,2}})(?:st|nd|rd|th)?\b(?!:\d)(?:,? (\d{{4}}))?", re.IGNORECASE
)
# "23 Nov 2026", and Spanish's "29 de noviembre de 2026".
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}}) (?:de )?({_MONTH})\b\.?(?:,? (?:de )?(\d{{4}}))?", re.IGNORECASE
)
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Claim:
    kind: str  # "id" | "date" | "time" | "number"
    text: str  # as written
    value: Any  # normalised: the ID, (year|None, month, day), "HH:MM", Decimal


@dataclass(frozen=True)
class Faithfulness:
    claims: tuple[Claim, ...] = ()
    unsupported: tuple[Claim, ...] = field(default_factory=tuple)

    @property
    def faithful(self) -> bool:
        return not self.unsupported

    def describe(self) -> str:
        if self.faithful:
            return f"faithful ({len(self.claims)} claims checked)"
        missing = ", ".join(f"{c.kind} {c.text!r}" for c in self.unsupported)
        return f"not in the evidence: {missing}"


def check_faithfulness(text: str, evidence: Any) -> Faithfulness:
    """Every ID, date, time and number in ``text`` must appear in ``evidence``."""
    claims = extract_claims(text)
    facts = _Facts.from_evidence(evidence)
    unsupported = tuple(claim for claim in claims if not facts.supports(claim))
    return Faithfulness(claims=tuple(claims), unsupported=unsupported)


def extract_claims(text: str) -> list[Claim]:
    claims: list[Claim] = []
    rest = text

    def take(pattern: re.Pattern[str], kind: str, normalise: Any) -> None:
        nonlocal rest
        for match in pattern.finditer(rest):
            value = normalise(match)
            if value is not None:
                claims.append(Claim(kind, match.group(0), value))
        rest = pattern.sub(lambda m: " " * len(m.group(0)), rest)

    take(_ISO_DATE, "date", lambda m: _date(m.group(1), m.group(2), m.group(3)))
    take(_ZIP4, "id", lambda m: m.group(0))
    take(_ID, "id", lambda m: m.group(0))
    take(_US_DATE, "date", lambda m: _date(m.group(3), m.group(1), m.group(2)))
    take(_MONTH_DAY, "date", lambda m: _date(m.group(3), MONTHS[m.group(1).lower()], m.group(2)))
    take(_DAY_MONTH, "date", lambda m: _date(m.group(3), MONTHS[m.group(2).lower()], m.group(1)))
    take(_TIME, "time", lambda m: _time(m.group(1), m.group(2)))
    take(_NUMBER, "number", lambda m: _decimal(m.group(0)))
    return claims


def _date(year: str | int | None, month: str | int, day: str | int) -> tuple | None:
    try:
        dt.date(int(year) if year else 2000, int(month), int(day))  # 2000: a leap year
    except ValueError:
        return None
    return (int(year) if year else None, int(month), int(day))


def _time(hour: str, minute: str) -> str | None:
    if int(hour) > 24 or int(minute) > 59:
        return None
    return f"{int(hour):02d}:{minute}"


def _decimal(raw: str) -> Decimal | None:
    try:
        return Decimal(raw.replace(",", ""))
    except InvalidOperation:
        return None


@dataclass
class _Facts:
    strings: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    dates: set[tuple] = field(default_factory=set)
    times: set[str] = field(default_factory=set)
    numbers: set[Decimal] = field(default_factory=set)

    @classmethod
    def from_evidence(cls, evidence: Any) -> "_Facts":
        facts = cls()
        for atom in _atoms(evidence):
            facts.add(atom)
        return facts

    def add(self, atom: object) -> None:
        if isinstance(atom, bool) or atom is None:
            return
        if isinstance(atom, int | float | Decimal):
            self.numbers.add(Decimal(str(atom)))
            return
        if isinstance(atom, dt.datetime):
            atom = atom.date()
        if isinstance(atom, dt.date):
            self.dates.add((atom.year, atom.month, atom.day))
            return
        text = str(atom)
        self.strings.append(text)
        for claim in extract_claims(text):
            buckets: dict[str, set[Any]] = {
                "id": self.ids,
                "date": self.dates,
                "time": self.times,
                "number": self.numbers,
            }
            buckets[claim.kind].add(claim.value)
            if claim.kind == "id" and _ZIP4.fullmatch(claim.value):
                # "ZIP 90026" restates the ZIP+4 90026-3214 on record.
                self.numbers.add(Decimal(claim.value[:5]))

    def supports(self, claim: Claim) -> bool:
        if claim.kind == "id":
            return claim.value in self.ids or any(claim.value in s for s in self.strings)
        if claim.kind == "time":
            return claim.value in self.times
        if claim.kind == "date":
            year, month, day = claim.value
            if year is None:
                return any((m, d) == (month, day) for _, m, d in self.dates)
            return claim.value in self.dates
        return self._has_number(claim.value)

    def _has_number(self, written: Decimal) -> bool:
        # "84.7" is backed by 84.66 and "85" by 84.66: rounding to the digits
        # written is restating, not inventing.
        places = max(0, -written.as_tuple().exponent)  # type: ignore[operator]
        quantum = Decimal(1).scaleb(-places)
        # Within half a unit of the last digit written, inclusive, so 89.85
        # may read 89.8 (a float's formatting) or 89.9 (rounding half up).
        if any(
            abs(number - written) <= quantum / 2 for number in self.numbers if number.is_finite()
        ):
            return True
        # "540 minutes off" is checkable from 22:00 and 07:00 in the evidence:
        # a gap between two evidenced times is the one derived number allowed.
        return written == written.to_integral_value() and int(written) in self._time_gaps()

    def _time_gaps(self) -> set[int]:
        minutes = [int(t[:2]) * 60 + int(t[3:]) for t in self.times]
        return {abs(a - b) % 1440 for a in minutes for b in minutes if a != b} | {
            (a - b) % 1440 for a in minutes for b in minutes if a != b
        }


def _atoms(evidence: Any) -> Iterable[object]:
    """Every leaf value in the evidence (keys are field names, not facts)."""
    if hasattr(evidence, "model_dump"):
        yield from _atoms(evidence.model_dump(mode="json"))
    elif dataclasses.is_dataclass(evidence) and not isinstance(evidence, type):
        yield from _atoms({f.name: getattr(evidence, f.name) for f in dataclasses.fields(evidence)})
    elif isinstance(evidence, dict):
        for value in evidence.values():
            yield from _atoms(value)
    elif isinstance(evidence, list | tuple | set | frozenset):
        for value in evidence:
            yield from _atoms(value)
    else:
        yield evidence
