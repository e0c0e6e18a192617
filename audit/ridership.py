"""The ridership specialist: does each rider ride on enough of their workdays?

A pure function of preloaded facts. Over the window (``RIDERSHIP_WINDOW_DAYS``
ending the day before the audit) a rider's scheduled workdays are the days
their shift works and the van runs; holidays, leave and days before the seat
started are excused; the days the data covers are compared with the days the
data shows them aboard (a trip, a ride-day row, or a gate swipe near the van's
arrival), against a share of those days (``RIDERSHIP_MIN_SHARE``, else
``RIDERSHIP_MIN_DAYS_PER_WEEK`` scaled to the rider's own week). The rules,
step by step, are docs/audit.md's "The ridership check". No data is
``unknown``, never a pass or a fail.
"""

import datetime as dt
import math
from bisect import bisect_left, bisect_right
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import chain, islice

from django.conf import settings

from agents.contracts import Citation, RidershipEvidence, SpecialistResult, UnknownEvidence
from audit.facts import RiderFacts, VanpoolFacts
from audit.ride_facts import CoverageSpan, RideMark, SwipeFacts, ridership_window
from audit.rider_results import RiderOutcome, no_data, vanpool_result
from audit.shift.readings import (
    RotationShift,
    Schedule,
    Unreadable,
    days_without_hours,
    read_shift,
)
from vanpools.schedules import WEEKDAYS, DaySpan, parse_weekly

NO_DATA_MISSING = "trips, ride days or badge swipes"
UNKNOWN_CONFIDENCE = 2
RECHECK_CONFIDENCE = 3  # a pass on too few days to judge, looked at again next audit
MAX_CITED_RIDES = 3


@dataclass(frozen=True)
class RidershipRules:
    window_days: int
    min_days_per_week: float
    min_share: float | None
    min_workdays: int
    swipe_window_minutes: int

    @classmethod
    def from_settings(cls) -> "RidershipRules":
        return cls(
            window_days=settings.RIDERSHIP_WINDOW_DAYS,
            min_days_per_week=settings.RIDERSHIP_MIN_DAYS_PER_WEEK,
            min_share=settings.RIDERSHIP_MIN_SHARE,
            min_workdays=settings.RIDERSHIP_MIN_WORKDAYS,
            swipe_window_minutes=settings.RIDERSHIP_SWIPE_WINDOW_MINUTES,
        )


@dataclass(frozen=True)
class Van:
    """What the check needs of the van: its running days, arrivals, coverage, holidays."""

    vanpool_id: str
    work_site: str
    spans: dict[str, DaySpan]  # weekday → the van's hours; empty: runs when its riders work
    coverage: dict[
        str, list[CoverageSpan]
    ]  # kind → CoverageSpans ("badge_swipes" only with a schedule)
    holidays: dict[dt.date, str]
    kinds_by_day: dict[dt.date, list[str]]  # the window's dates → the kinds covering each
    # The window's dates as the calendar writes them: once a van, not once a rider and day.
    labels: dict[dt.date, str]

    def runs(self, day: dt.date) -> bool:
        return not self.spans or WEEKDAYS[day.weekday()] in self.spans

    def arrival(self, day: dt.date) -> dt.datetime | None:
        span = self.spans.get(WEEKDAYS[day.weekday()])
        return dt.datetime.combine(day, dt.time.fromisoformat(span.start)) if span else None

    def covering(self, day: dt.date) -> list[str]:
        return self.kinds_by_day.get(day, [])


class VanUnreadable(Exception):
    pass


def check_ridership(
    facts: VanpoolFacts, audit_date: dt.date, rules: RidershipRules | None = None
) -> SpecialistResult:
    rules = rules or RidershipRules.from_settings()
    start, end = ridership_window(audit_date, rules.window_days)
    window = [start + dt.timedelta(days=n) for n in range((end - start).days + 1)]
    label = f"{start.isoformat()} – {end.isoformat()}"
    try:
        van = _van(facts, window)
    except VanUnreadable as problem:
        outcomes = [_van_unreadable(rider, facts, str(problem)) for rider in facts.riders]
        return vanpool_result("ridership", outcomes, f"{facts.vanpool_id}: ridership over {label}.")
    outcomes = [judge_rider(rider, van, window, rules) for rider in facts.riders]
    return vanpool_result("ridership", outcomes, f"{facts.vanpool_id}: ridership over {label}.")


def _van(facts: VanpoolFacts, window: list[dt.date]) -> Van:
    try:
        spans: dict[str, DaySpan] = {
            str(span.day): span for span in parse_weekly(facts.schedule or [])
        }
    except (ValueError, TypeError) as exc:
        raise VanUnreadable(f"the van's schedule cannot be read ({exc})") from None
    coverage: dict[str, list[CoverageSpan]] = {}
    for span in facts.rides.coverage:
        if span.kind == "badge_swipes" and not spans:
            continue  # no arrival time to match a swipe against: badge data covers nothing
        coverage.setdefault(span.kind, []).append(span)
    covered = {kind: _days_covered(group, window) for kind, group in coverage.items()}
    kinds_by_day = {day: [kind for kind, days in covered.items() if day in days] for day in window}
    return Van(
        vanpool_id=facts.vanpool_id,
        work_site=facts.work_site,
        spans=spans,
        coverage=coverage,
        holidays=dict(facts.rides.holidays),
        kinds_by_day=kinds_by_day,
        labels={day: day.isoformat() for day in window},
    )


def _days_covered(spans: list[CoverageSpan], window: list[dt.date]) -> set[dt.date]:
    """The window's days (in date order) any of these spans covers, cut from it by bisection."""
    days: set[dt.date] = set()
    for span in spans:
        first = 0 if span.start is None else bisect_left(window, span.start)
        last = len(window) if span.end is None else bisect_right(window, span.end)
        days.update(window[first:last])
    return days


def _van_unreadable(rider: RiderFacts, facts: VanpoolFacts, reason: str) -> RiderOutcome:
    evidence = UnknownEvidence(
        employee_id=rider.employee_id,
        cites=[Citation(record="vanpool", id=facts.vanpool_id, field="schedule")],
        value=str(facts.schedule)[:300],
        reason=reason,
    )
    sentence = f"{rider.employee_id}: {reason}, so their workdays are not known."
    return RiderOutcome(rider.employee_id, "unknown", UNKNOWN_CONFIDENCE, sentence, [evidence])


# --- One rider --------------------------------------------------------------------------


class UnknownDays(Exception):
    def __init__(self, value: str, reason: str, field: str) -> None:
        super().__init__(reason)
        self.value, self.reason, self.field = value, reason, field


def working_dates(rider: RiderFacts, window: list[dt.date]) -> list[dt.date]:
    """The window's dates the rider's shift works; only the days matter, not the hours.

    HR's text that names days with no hours ("M/W/F") gives its days here,
    though the shift check, which needs the hours, cannot read it.
    """
    try:
        shift = read_shift(rider.shift)
    except Unreadable as problem:
        days = days_without_hours(rider.shift)
        if days is None:
            raise UnknownDays(problem.value, problem.reason, problem.field) from None
        return [day for day in window if WEEKDAYS[day.weekday()] in days]
    readings = list(shift.readings) or [shift.schedule]
    if isinstance(shift, RotationShift):
        readings = [reading for leg in shift.legs for reading in leg] or readings
    dates = tuple(window)
    day_sets = {_days_worked(reading, dates) for reading in readings}
    if len(day_sets) != 1:
        text = rider.shift.text if rider.shift else ""
        raise UnknownDays(
            text, "has a schedule whose working days read more than one way", shift.field
        )
    return list(day_sets.pop())


def _days_worked(reading: Schedule, window: tuple[dt.date, ...]) -> tuple[dt.date, ...]:
    """The window's days a schedule works; once per schedule and window, not per rider."""
    key = (type(reading).__name__, reading.key(), window)
    days = _DAYS_WORKED.get(key)
    if days is None:
        days = tuple(day for day in window if reading.span_on(day))
        if len(_DAYS_WORKED) >= MAX_CACHED_SCHEDULES:
            _DAYS_WORKED.clear()
        _DAYS_WORKED[key] = days
    return days


_DAYS_WORKED: dict[Hashable, tuple[dt.date, ...]] = {}
MAX_CACHED_SCHEDULES = 4096


def judge_rider(
    rider: RiderFacts, van: Van, window: list[dt.date], rules: RidershipRules
) -> RiderOutcome:
    employee_id = rider.employee_id
    try:
        works = working_dates(rider, window)
    except UnknownDays as problem:
        if not any(van.covering(day) for day in window):
            # Unknown either way; with no data at all it is a gap, not a question for a reader.
            return _no_data_in_window(rider, van, window)
        return _unknown_days(rider, problem)
    scheduled = [day for day in works if van.runs(day)]
    calendar, counted = _excused(rider, van, scheduled)
    tally = Tally(window, scheduled, counted, calendar)
    if not counted:
        return tally.outcome(rider, "pass", RECHECK_CONFIDENCE, _no_workdays(rider, tally), rules)
    if len(counted) < rules.min_workdays:
        sentence = (
            f"{employee_id} has only {_days(len(counted))} to count in the window "
            f"(fewer than {rules.min_workdays}): too few to judge; looked at again next audit."
        )
        return tally.outcome(rider, "pass", RECHECK_CONFIDENCE, sentence, rules)
    tally.mark_aboard(rider, van, rules)
    if not tally.covered:
        return _no_data_in_window(rider, van, window)
    if len(tally.covered) < rules.min_workdays:
        return no_data(
            employee_id,
            NO_DATA_MISSING,
            f"the data for {van.vanpool_id} covers {len(tally.covered)} of {employee_id}'s "
            f"{_days(len(counted))} to count in {tally.label} (fewer than {rules.min_workdays})",
            f"{employee_id}: the data covers only {len(tally.covered)} of their "
            f"{_days(len(counted))} to count (fewer than {rules.min_workdays}).",
        )
    required, rule = required_days(rules, len(scheduled), len(tally.covered))
    aboard = len(tally.aboard)
    rode = f"{employee_id} rode on {aboard} of {_days(len(tally.covered))} counted"
    wanted = f"the rule asks for {required} ({rule})"
    if aboard >= required:
        confidence = 5 if tally.sources - {"badge_swipes"} else 4
        return tally.outcome(rider, "pass", confidence, f"{rode}; {wanted}.", rules, required, rule)
    confidence = 3 if required - aboard == 1 else 5
    if tally.sources == {"badge_swipes"}:
        # A rider may ride and not badge in: only the gate says they were not aboard.
        confidence = min(confidence, 4)
    sentence = f"{rode} in {tally.label}; {wanted}."
    return tally.outcome(rider, "fail", confidence, sentence, rules, required, rule)


@lru_cache(maxsize=4096)
def required_days(rules: RidershipRules, scheduled: int, covered: int) -> tuple[int, str]:
    """R = ⌈share × covered⌉, exactly; and the rule in words for the evidence.

    Cached: exact fractions are slow, and riders share a few (scheduled, covered) pairs.
    """
    if rules.min_share is not None:
        share = Fraction(str(rules.min_share))
        rule = f"{_percent(share)} of workdays"
    else:
        per_week = Fraction(str(rules.min_days_per_week))
        week = Fraction(scheduled * 7, rules.window_days)  # the rider's own week
        share = min(Fraction(1), per_week / week)
        rule = f"{_number(per_week)} days a week of the rider's {_number(week)}"
        if share == 1:
            rule = f"every workday: {_number(per_week)} a week, the rider works {_number(week)}"
    return math.ceil(share * covered), rule


class Tally:
    """One rider's window: scheduled, counted, covered and aboard days, and the calendar."""

    def __init__(
        self,
        window: list[dt.date],
        scheduled: list[dt.date],
        counted: list[dt.date],
        calendar: dict[str, str],
    ) -> None:
        self.window, self.scheduled, self.counted, self.calendar = (
            window,
            scheduled,
            counted,
            calendar,
        )
        self.label = f"{window[0].isoformat()} – {window[-1].isoformat()}"
        self.covered: list[dt.date] = []
        # Each aboard day's proof: the rides and the swipe that show it (cited lazily).
        self.aboard: dict[dt.date, list[RideMark | SwipeFacts]] = {}
        self.sources: set[str] = set()

    def mark_aboard(self, rider: RiderFacts, van: Van, rules: RidershipRules) -> None:
        rides = _rides_by_date(rider.rides.ride_days)
        swipes = rider.rides.swipes if "badge_swipes" in van.coverage else ()
        calendar, labels, kinds_by_day = self.calendar, van.labels, van.kinds_by_day
        for day in self.counted:
            kinds = kinds_by_day.get(day)
            if not kinds:
                calendar[labels[day]] = "not_covered"
                continue
            proof: list[RideMark | SwipeFacts] = list(rides.get(day, ()))
            swipe = _swipe_near_arrival(swipes, van, day, rules.swipe_window_minutes)
            if swipe is not None:
                proof.append(swipe)
            self.covered.append(day)
            self.sources.update(kinds)
            if proof:
                self.aboard[day] = proof
            calendar[labels[day]] = "aboard" if proof else "missed"

    def outcome(
        self,
        rider: RiderFacts,
        verdict: str,
        confidence: int,
        sentence: str,
        rules: RidershipRules,
        required: int = 0,
        rule: str = "",
    ) -> RiderOutcome:
        evidence = RidershipEvidence(
            employee_id=rider.employee_id,
            cites=self._cites(rider),
            window_start=self.window[0].isoformat(),
            window_end=self.window[-1].isoformat(),
            rule=rule or _rule_words(rules),
            min_share=rules.min_share,
            min_days_per_week=None if rules.min_share is not None else rules.min_days_per_week,
            scheduled=len(self.scheduled),
            counted=len(self.counted),
            covered=len(self.covered),
            aboard=len(self.aboard),
            required=required,
            min_workdays=rules.min_workdays,
            sources=sorted(self.sources),
            calendar=dict(sorted((day, mark or "counted") for day, mark in self.calendar.items())),
        )
        return RiderOutcome(rider.employee_id, verdict, confidence, sentence, [evidence])  # type: ignore[arg-type]

    def _cites(self, rider: RiderFacts) -> list[Citation]:
        cites = [Citation(record="employee", id=rider.employee_id, field="shift")]
        if rider.shift is not None:
            cites.append(Citation(record="shift", id=rider.shift.shift_id, field="schedule"))
        marks = set(self.calendar.values())
        if "before_joined" in marks:
            cites.append(Citation(record="seat", id=rider.employee_id, field="joined"))
        if "leave" in marks:
            cites.append(Citation(record="leave", id=rider.employee_id, field="dates"))
        for day, mark in sorted(self.calendar.items()):
            if mark == "holiday":
                cites.append(Citation(record="holiday", id=day, field="date"))
        proofs = chain.from_iterable(self.aboard[day] for day in sorted(self.aboard))
        shown = islice(proofs, MAX_CITED_RIDES)
        return cites + [_proof_cite(rider.employee_id, proof) for proof in shown]


def _excused(
    rider: RiderFacts, van: Van, scheduled: list[dt.date]
) -> tuple[dict[str, str], list[dt.date]]:
    """The calendar of scheduled days (each one's excuse, or "") and the days left to count."""
    joined = rider.rides.joined
    if not (van.holidays or rider.leave or rider.status == "on_leave") and (
        joined is None or not scheduled or joined <= scheduled[0]
    ):
        # Most riders: no holiday, no leave, the seat held all window; nothing to ask a day.
        return dict.fromkeys([van.labels[day] for day in scheduled], ""), list(scheduled)
    calendar: dict[str, str] = {}
    counted = []
    for day in scheduled:
        excuse = _excuse(rider, van, day)
        calendar[van.labels[day]] = excuse
        if not excuse:
            counted.append(day)
    return calendar, counted


def _excuse(rider: RiderFacts, van: Van, day: dt.date) -> str:
    if rider.rides.joined is not None and day < rider.rides.joined:
        return "before_joined"
    if day in van.holidays:
        return "holiday"
    on_leave = rider.leave and any(span.covers(day) for span in rider.leave)
    if rider.status == "on_leave" or on_leave:
        return "leave"
    return ""


def _rides_by_date(marks: tuple[RideMark, ...]) -> dict[dt.date, list[RideMark]]:
    by_date: dict[dt.date, list[RideMark]] = {}
    for mark in marks:
        by_date.setdefault(mark.date, []).append(mark)
    return by_date


def _swipe_near_arrival(
    swipes: tuple[SwipeFacts, ...], van: Van, day: dt.date, minutes: int
) -> SwipeFacts | None:
    """The first swipe in, at the van's site, within ``minutes`` of its arrival on ``day``."""
    if not swipes:
        return None
    arrival = van.arrival(day)
    if arrival is None:
        return None
    limit = dt.timedelta(minutes=minutes)
    site = van.work_site.strip().casefold()
    for swipe in swipes:
        if swipe.direction == "out":
            continue
        if swipe.site and site and swipe.site.strip().casefold() != site:
            continue
        if abs(swipe.at - arrival) <= limit:
            return swipe
    return None


def _proof_cite(employee_id: str, proof: RideMark | SwipeFacts) -> Citation:
    if isinstance(proof, SwipeFacts):
        return _swipe_cite(employee_id, proof)
    return _ride_cite(proof)


def _ride_cite(mark: RideMark) -> Citation:
    if mark.source == "trip":
        return Citation(record="trip", id=mark.ref, field="passengers")
    return Citation(record="ride_day", id=mark.ref, field="date")


def _swipe_cite(employee_id: str, swipe: SwipeFacts) -> Citation:
    return Citation(
        record="badge_swipe",
        id=f"{employee_id} {swipe.at.isoformat(timespec='minutes')}",
        field="time",
    )


def _no_data_in_window(rider: RiderFacts, van: Van, window: list[dt.date]) -> RiderOutcome:
    label = f"{window[0].isoformat()} – {window[-1].isoformat()}"
    return no_data(
        rider.employee_id,
        NO_DATA_MISSING,
        f"no trip data for {van.vanpool_id} covers {rider.employee_id}'s workdays in {label}",
        f"{rider.employee_id}: no trip data for {van.vanpool_id} in the window ({label}).",
    )


def _unknown_days(rider: RiderFacts, problem: UnknownDays) -> RiderOutcome:
    cites = [Citation(record="employee", id=rider.employee_id, field="shift")]
    if rider.shift is not None:
        cites.append(Citation(record="shift", id=rider.shift.shift_id, field=problem.field))
    evidence = UnknownEvidence(
        employee_id=rider.employee_id, cites=cites, value=problem.value, reason=problem.reason
    )
    sentence = f"{rider.employee_id} {problem.reason}, so their workdays are not known."
    return RiderOutcome(rider.employee_id, "unknown", UNKNOWN_CONFIDENCE, sentence, [evidence])


def _no_workdays(rider: RiderFacts, tally: Tally) -> str:
    if not tally.scheduled:
        return f"{rider.employee_id} has no workday in the window on which the van runs."
    reasons = sorted(set(tally.calendar.values()))
    words = {"before_joined": "before the seat started", "holiday": "holidays", "leave": "leave"}
    return (
        f"{rider.employee_id}'s {_days(len(tally.scheduled))} in the window are all excused "
        f"({', '.join(words[r] for r in reasons)})."
    )


def _rule_words(rules: RidershipRules) -> str:
    if rules.min_share is not None:
        return f"{_percent(Fraction(str(rules.min_share)))} of workdays"
    return f"{_number(Fraction(str(rules.min_days_per_week)))} days a week"


def _percent(share: Fraction) -> str:
    return f"{_number(share * 100)} %"


def _number(value: Fraction) -> str:
    return str(int(value)) if value.denominator == 1 else f"{float(value):.3g}"


def _days(count: int) -> str:
    return f"{count} workday" if count == 1 else f"{count} workdays"
