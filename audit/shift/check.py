"""The vanpool's shift check: every rider judged against the van over the audit window."""

import datetime as dt

from django.conf import settings

from agents.contracts import Citation, RiderFlag, SpecialistResult, Verdict, combine_verdicts
from audit.facts import VanpoolFacts
from audit.shift.readings import RiderShift, Unreadable, read_shift
from audit.shift.rider import Audit, RiderOutcome, judge_rider, shift_cites, unknown_rider
from audit.shift.van import read_van_schedule


def check_shift(
    facts: VanpoolFacts,
    audit_date: dt.date,
    *,
    tolerance_minutes: int | None = None,
    window_days: int | None = None,
) -> SpecialistResult:
    """Judge every rider's shift against the van's over the audit window."""
    tolerance = settings.SHIFT_TOLERANCE_MINUTES if tolerance_minutes is None else tolerance_minutes
    days = settings.AUDIT_WINDOW_DAYS if window_days is None else window_days
    if tolerance < 0 or days < 1:
        raise ValueError("tolerance_minutes must be ≥ 0 and window_days ≥ 1")
    window = [audit_date + dt.timedelta(days=offset) for offset in range(days)]
    shifts, outcomes = _read_rider_shifts(facts)
    try:
        van = read_van_schedule(facts, shifts)
    except Unreadable as problem:
        return _van_unknown(facts, problem, window)
    audit = Audit(facts.vanpool_id, van, window, tolerance)
    for rider in facts.riders:
        if rider.employee_id in shifts:
            outcomes[rider.employee_id] = judge_rider(rider, shifts[rider.employee_id], audit)
    ordered = [outcomes[rider.employee_id] for rider in facts.riders]
    return _result(ordered, _opening(audit))


def _read_rider_shifts(
    facts: VanpoolFacts,
) -> tuple[dict[str, RiderShift], dict[str, RiderOutcome]]:
    """Readable shifts by employee ID, and an unknown outcome for every other rider."""
    shifts: dict[str, RiderShift] = {}
    unknown: dict[str, RiderOutcome] = {}
    for rider in facts.riders:
        try:
            shifts[rider.employee_id] = read_shift(rider.shift)
        except Unreadable as problem:
            quoted = f" (“{problem.value}”)" if problem.value and len(problem.value) <= 80 else ""
            sentence = f"{rider.employee_id} {problem.reason}{quoted}."
            cites = shift_cites(rider, problem.field)
            unknown[rider.employee_id] = unknown_rider(rider.employee_id, problem, cites, sentence)
    return shifts, unknown


def _van_unknown(
    facts: VanpoolFacts, problem: Unreadable, window: list[dt.date]
) -> SpecialistResult:
    # Without a van schedule there is nothing to compare against: every rider
    # is unknown, whatever their own shift says.
    cites = [Citation(record="vanpool", id=facts.vanpool_id, field="schedule")]
    reason = f"{problem.reason[0].upper()}{problem.reason[1:]}, so no rider's hours can be checked"
    outcomes = [
        unknown_rider(rider.employee_id, problem, cites, f"{rider.employee_id}: {reason}.")
        for rider in facts.riders
    ]
    opening = f"{facts.vanpool_id}: {reason} ({_window_label(window)})."
    if outcomes:
        opening += f" Unknown: {_names([outcome.employee_id for outcome in outcomes])}."
    return _result(outcomes, opening, itemise=False)


def _opening(audit: Audit) -> str:
    return (
        f"{audit.vanpool_id}: the van runs {audit.van.hours} ({audit.van.provenance}); "
        f"{_window_label(audit.window)}, tolerance {audit.tolerance} minutes."
    )


def _window_label(window: list[dt.date]) -> str:
    return f"audit window {window[0].isoformat()} to {window[-1].isoformat()}"


def _result(
    outcomes: list[RiderOutcome], opening: str, *, itemise: bool = True
) -> SpecialistResult:
    flags = [
        RiderFlag(employee_id=outcome.employee_id, verdict=outcome.verdict, reason=outcome.reason)
        for outcome in outcomes
    ]
    verdict = combine_verdicts([flag.verdict for flag in flags])
    return SpecialistResult(
        check="shift",
        verdict=verdict,
        confidence=_vanpool_confidence(verdict, outcomes),
        reasoning=_reasoning(opening, outcomes) if itemise else opening,
        evidence=[item for outcome in outcomes for item in outcome.evidence],
        riders=flags,
    )


def _vanpool_confidence(verdict: Verdict, outcomes: list[RiderOutcome]) -> int:
    # A fail stands on its clearest failing rider; a pass (or unknown) is only
    # as sure as its least sure rider.
    deciding = [outcome.confidence for outcome in outcomes if outcome.verdict == verdict]
    if not deciding:
        return 5
    return max(deciding) if verdict == "fail" else min(deciding)


def _reasoning(opening: str, outcomes: list[RiderOutcome]) -> str:
    if not outcomes:
        return f"{opening} No active riders to check."
    # Problems first, then passes worth a second look; clean passes in one sentence.
    sentences = [opening]
    sentences += [outcome.reason for outcome in outcomes if outcome.verdict != "pass"]
    sentences += [
        outcome.reason for outcome in outcomes if outcome.verdict == "pass" and outcome.recheck
    ]
    clean = [o.employee_id for o in outcomes if o.verdict == "pass" and not o.recheck]
    if clean:
        verb = "matches" if len(clean) == 1 else "match"
        sentences.append(f"{_names(clean)} {verb} the van on every day compared.")
    return " ".join(sentences)


def _names(ids: list[str]) -> str:
    if len(ids) <= 2:
        return " and ".join(ids)
    return f"{', '.join(ids[:-1])} and {ids[-1]}"
