"""One rider judged across the audit window: a verdict, a confidence, a sentence, evidence.

HR's hours read several ways are decided only when every reading agrees; a
rotation fails when any of its turns misses the van and passes only when
every turn fits.
"""

import datetime as dt
from dataclasses import dataclass

from agents.contracts import (
    Citation,
    Evidence,
    ShiftDayEvidence,
    ShiftSummaryEvidence,
    UnknownEvidence,
    Verdict,
)
from audit.facts import RiderFacts
from audit.shift.days import DayCheck, Tally, tally_window
from audit.shift.readings import (
    RiderShift,
    RotationShift,
    Schedule,
    ShiftField,
    Unreadable,
    span_hours,
)
from audit.shift.van import VanSchedule
from vanpools.schedules import WEEKDAYS

# A miss this close to the tolerance may be rounding in HR's data, not a
# different shift: still a fail, but said with less confidence.
BORDERLINE_MINUTES = 15
MAX_DAY_ITEMS = 3  # mismatched days kept as evidence per rider; the summary counts them all
UNKNOWN_CONFIDENCE = 2
RECHECK_CONFIDENCE = 3  # a pass that rests on leave or an empty window, not on compared days


@dataclass(frozen=True)
class Audit:
    """What every rider is judged against."""

    vanpool_id: str
    van: VanSchedule
    window: list[dt.date]
    tolerance: int


@dataclass
class RiderOutcome:
    employee_id: str
    verdict: Verdict
    confidence: int
    reason: str  # the rider's flag reason, and their sentence in the vanpool's reasoning
    evidence: list[Evidence]
    recheck: bool = False  # a pass resting on leave or an empty window, not on compared days


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    confidence: int  # before lowering for where the schedules came from
    sentence: str
    note: str = ""
    recheck: bool = False


def judge_rider(rider: RiderFacts, shift: RiderShift, audit: Audit) -> RiderOutcome:
    if isinstance(shift, RotationShift):
        return _judge_rotation(rider, shift, audit)
    if shift.readings:
        return _judge_readings(rider, shift, audit)
    tally = tally_window(rider, shift.schedule, audit.van.schedule, audit.window, audit.tolerance)
    judgement = _judge(tally, audit)
    # A schedule borrowed from the majority, or read from HR's free text, is
    # one more inference between the records and the verdict.
    confidence = judgement.confidence - (audit.van.source == "majority_shift")
    notes = [judgement.note]
    if shift.field == "schedule_text" and rider.shift is not None:
        confidence -= 1
        notes.append(f"read from HR's text “{rider.shift.text.strip()}”")
    rider_cites = shift_cites(rider, shift.field)
    summary = ShiftSummaryEvidence(
        employee_id=rider.employee_id,
        cites=[*rider_cites, *audit.van.cites, *tally.leave_cites],
        shift_id=rider.shift.shift_id if rider.shift else "",
        rider_schedule=shift.schedule.describe(),
        van_schedule=audit.van.hours,
        van_schedule_source=audit.van.source,
        days_compared=len(tally.compared),
        days_mismatched=len(tally.mismatched),
        days_on_leave=tally.on_leave,
        off_van_days=[day.isoformat() for day in tally.off_van],
        note="; ".join(filter(None, notes)),
    )
    days = [
        _day_evidence(rider.employee_id, check, audit, rider_cites)
        for check in tally.mismatched[:MAX_DAY_ITEMS]
    ]
    return RiderOutcome(
        employee_id=rider.employee_id,
        verdict=judgement.verdict,
        confidence=max(1, min(5, confidence)),
        reason=f"{rider.employee_id} works {_rider_label(rider, shift)}. {judgement.sentence}",
        evidence=[summary, *days],
        recheck=judgement.recheck,
    )


def _judge_readings(rider: RiderFacts, shift: RiderShift, audit: Audit) -> RiderOutcome:
    """HR's hours without am/pm: decided when every reading agrees, else unknown."""
    text = rider.shift.text.strip() if rider.shift else ""
    outcomes = [
        judge_rider(rider, RiderShift(reading, shift.field, label=f"“{text}”"), audit)
        for reading in shift.readings
    ]
    verdicts = [outcome.verdict for outcome in outcomes]
    if len(set(verdicts)) > 1:
        readings = ", ".join(
            f"{reading.describe()} would {verdict}"
            for reading, verdict in zip(shift.readings, verdicts, strict=True)
        )
        problem = Unreadable(
            text,
            f"has a shift that reads several ways, and the readings disagree ({shift.doubt}; "
            f"{readings})",
            "schedule_text",
        )
        sentence = f"{rider.employee_id} {problem.reason} (“{text}”)."
        cites = shift_cites(rider, "schedule_text")
        return unknown_rider(rider.employee_id, problem, cites, sentence)
    first = outcomes[0]
    summary, *days = first.evidence
    assert isinstance(summary, ShiftSummaryEvidence)  # judge_rider leads with its summary
    every = f"{shift.doubt}; each reading {'fails' if first.verdict == 'fail' else 'passes'}"
    summary = summary.model_copy(update={"note": f"{summary.note}; {every}"})
    return RiderOutcome(
        employee_id=rider.employee_id,
        verdict=first.verdict,
        confidence=max(1, first.confidence - 1),
        reason=f"{first.reason} {every[0].upper()}{every[1:]}.",
        evidence=[summary, *days],
        recheck=any(outcome.recheck for outcome in outcomes),
    )


def _judge_rotation(rider: RiderFacts, shift: RotationShift, audit: Audit) -> RiderOutcome:
    """Every leg of a rotation is worked in turn: one that misses the van is a fail.

    A leg misses when each of its readings mismatches the van on the days compared;
    it fits when each reading that meets a van day matches. Readings that meet no
    van day (a leg read on a Saturday for a weekday van) say nothing either way.
    The rotation passes only when every leg fits; anything else goes to a person.
    """
    text = rider.shift.text.strip() if rider.shift else ""
    states: list[tuple[str, Schedule | None]] = []
    for leg in shift.legs:
        tallies = [
            (
                reading,
                tally_window(rider, reading, audit.van.schedule, audit.window, audit.tolerance),
            )
            for reading in leg
        ]
        counted = [(reading, tally) for reading, tally in tallies if tally.compared]
        if counted and all(tally.mismatched for _, tally in counted):
            states.append(("fail", counted[0][0]))
        elif counted and not any(tally.mismatched for _, tally in counted):
            states.append(("pass", counted[0][0]))
        else:
            states.append(("unknown", None))
    verdicts = [state for state, _ in states]
    deciding: Verdict | None = (
        "fail" if "fail" in verdicts else "pass" if set(verdicts) == {"pass"} else None
    )
    if deciding is None:
        problem = Unreadable(
            text,
            f"has a rotation whose turns cannot all be settled against the van ({shift.doubt})",
            "schedule_text",
        )
        sentence = f"{rider.employee_id} {problem.reason} (“{text}”)."
        return unknown_rider(
            rider.employee_id, problem, shift_cites(rider, "schedule_text"), sentence
        )
    reading = next(schedule for state, schedule in states if state == deciding)
    assert reading is not None
    first = judge_rider(rider, RiderShift(reading, shift.field, label=f"“{text}”"), audit)
    every = (
        f"{shift.doubt}; the turn read as {reading.describe()} misses the van"
        if deciding == "fail"
        else f"{shift.doubt}; every turn fits the van"
    )
    summary, *days = first.evidence
    # judge_rider's first item is always the rider's ShiftSummaryEvidence.
    assert isinstance(summary, ShiftSummaryEvidence)
    summary = summary.model_copy(update={"note": f"{summary.note}; {every}"})
    return RiderOutcome(
        employee_id=rider.employee_id,
        verdict=deciding,
        confidence=max(1, first.confidence - 1),
        reason=f"{first.reason} {every[0].upper()}{every[1:]}.",
        evidence=[summary, *days],
        recheck=first.recheck,
    )


def _judge(tally: Tally, audit: Audit) -> Judgement:
    if tally.mismatched:
        return Judgement("fail", _fail_confidence(tally.mismatched, audit), _mismatch(tally, audit))
    if tally.compared:
        leave = f"; {_days(tally.on_leave)} excused as leave" if tally.on_leave else ""
        return Judgement(
            "pass", 5, f"Matches the van on all {_days(len(tally.compared))} compared{leave}."
        )
    if tally.off_van and not tally.leave_on_van_days:
        # Working, not on leave, yet never on a day the van runs: the seat
        # cannot be serving this rider's commute.
        worked = ", ".join(_date_label(day) for day in tally.off_van)
        sentence = (
            f"The van runs {audit.van.sentence_hours}: it does not run on any day they work "
            f"in the audit window ({worked})."
        )
        return Judgement("fail", 5, sentence, "the van does not run on any day this rider works")
    if tally.on_leave:
        # Leave covers every day they would ride: nothing to hold against
        # them this week, nor anything that shows the seat is used.
        note = "on leave through the audit window; re-check later"
        sentence = "They are on leave on every day they would ride in the audit window"
        return Judgement(
            "pass", RECHECK_CONFIDENCE, f"{sentence}; re-check later.", note, recheck=True
        )
    note = "no working days in the audit window; re-check later"
    return Judgement("pass", RECHECK_CONFIDENCE, f"They have {note}.", note, recheck=True)


def _fail_confidence(mismatched: list[DayCheck], audit: Audit) -> int:
    # If even the worst miss is within a quarter hour of the tolerance, the
    # rider may simply be recorded with rounded times: a softer fail.
    worst = max(check.miss for check in mismatched)
    return 3 if worst <= audit.tolerance + BORDERLINE_MINUTES else 5


def _mismatch(tally: Tally, audit: Audit) -> str:
    compared, mismatched = len(tally.compared), len(tally.mismatched)
    if compared == 1:
        count = "The one day compared does not match"
    elif mismatched == compared:
        count = f"None of the {compared} days compared match"
    else:
        count = f"{mismatched} of the {compared} days compared do not match"
    first = tally.mismatched[0]
    return (
        f"The van runs {audit.van.sentence_hours}. {count} "
        f"(e.g. {_date_label(first.date)}: {span_hours(first.rider)} against the van's "
        f"{span_hours(first.van)}, {first.miss} minutes off, tolerance {audit.tolerance})."
    )


def _rider_label(rider: RiderFacts, shift: RiderShift) -> str:
    name = rider.shift.name if rider.shift else ""
    label = ", ".join(filter(None, [name, "part-time" if rider.time_type == "part_time" else ""]))
    return (shift.label or shift.schedule.describe()) + (f" ({label})" if label else "")


def _days(count: int) -> str:
    return f"{count} day" if count == 1 else f"{count} days"


def _date_label(day: dt.date) -> str:
    return f"{WEEKDAYS[day.weekday()]} {day.isoformat()}"


def shift_cites(rider: RiderFacts, field_name: ShiftField) -> list[Citation]:
    cites = [Citation(record="employee", id=rider.employee_id, field="shift")]
    if rider.shift is not None:
        cites.append(Citation(record="shift", id=rider.shift.shift_id, field=field_name))
    return cites


def _day_evidence(
    employee_id: str, check: DayCheck, audit: Audit, rider_cites: list[Citation]
) -> ShiftDayEvidence:
    return ShiftDayEvidence(
        employee_id=employee_id,
        cites=[*rider_cites, *audit.van.cites],
        date=check.date.isoformat(),
        day=WEEKDAYS[check.date.weekday()],
        rider_start=check.rider.start,
        rider_end=check.rider.end,
        van_arrival=check.van.start,
        van_departure=check.van.end,
        tolerance_minutes=audit.tolerance,
        matches=check.matches,
    )


def unknown_rider(
    employee_id: str, problem: Unreadable, cites: list[Citation], sentence: str
) -> RiderOutcome:
    evidence = UnknownEvidence(
        employee_id=employee_id, cites=cites, value=problem.value, reason=problem.reason
    )
    return RiderOutcome(employee_id, "unknown", UNKNOWN_CONFIDENCE, sentence, [evidence])
