"""The vanpool-rules specialist: is the van a §132(f) commuter highway vehicle this month?

A pure function of preloaded facts, judging the van (not its riders) over the
last complete month before the audit date: seats not counting the driver
≥ ``VANPOOL_MIN_SEATS``, average occupancy ≥ ``VANPOOL_MIN_OCCUPANCY`` of those
seats, and commute miles ≥ ``VANPOOL_MIN_COMMUTE_SHARE`` of all miles where the
mileage is known. Any rule failing fails the van; seats or occupancy unknown
leaves it ``unknown``; an unknown commute share alone does not. The rules are
docs/audit.md's "The vanpool rules". A finding is about the van, for its
coordinator: the result flags no rider.
"""

import datetime as dt
from dataclasses import dataclass
from fractions import Fraction

from django.conf import settings

from agents.contracts import (
    Citation,
    Evidence,
    NoDataEvidence,
    SpecialistResult,
    VanpoolMonthEvidence,
    Verdict,
)
from audit.facts import VanpoolFacts
from vanpools.monthly import MonthFacts, MonthFigures, month_figures


@dataclass(frozen=True)
class VanpoolRules:
    min_seats: int
    min_occupancy: float
    min_commute_share: float

    @classmethod
    def from_settings(cls) -> "VanpoolRules":
        return cls(
            min_seats=settings.VANPOOL_MIN_SEATS,
            min_occupancy=settings.VANPOOL_MIN_OCCUPANCY,
            min_commute_share=settings.VANPOOL_MIN_COMMUTE_SHARE,
        )


def check_vanpool_rules(
    facts: VanpoolFacts, audit_date: dt.date, rules: VanpoolRules | None = None
) -> SpecialistResult:
    rules = rules or VanpoolRules.from_settings()
    month = facts.rides.month or MonthFacts(month=audit_date.replace(day=1))
    label = month.month.strftime("%Y-%m")
    figures = month_figures(month, facts.seats, facts.miles_per_trip)
    verdicts = judge(figures, rules)
    verdict = van_verdict(verdicts)
    evidence: list[Evidence] = [_evidence(facts, label, figures, verdicts, rules)]
    if verdict == "unknown":
        missing = [rule for rule in ("seats", "occupancy") if verdicts[rule] == "unknown"]
        evidence.append(
            NoDataEvidence(
                missing=" and ".join(_MISSING[rule] for rule in missing),
                detail=f"{facts.vanpool_id} in {label}: {_gap(figures, missing)}",
            )
        )
    return SpecialistResult(
        check="vanpool_rules",
        verdict=verdict,
        confidence=5 if verdict != "unknown" else 2,
        reasoning=_reasoning(facts.vanpool_id, label, figures, verdicts, rules),
        evidence=evidence,
        riders=[],
    )


def judge(figures: MonthFigures, rules: VanpoolRules) -> dict[str, Verdict]:
    occupancy = figures.occupancy
    share = figures.commute_share
    return {
        "seats": _at_least(figures.seats, Fraction(rules.min_seats)),
        "occupancy": _at_least(occupancy, Fraction(str(rules.min_occupancy))),
        "commute": _at_least(share, Fraction(str(rules.min_commute_share))),
    }


def van_verdict(verdicts: dict[str, Verdict]) -> Verdict:
    """Any rule failing fails; seats or occupancy unknown is unknown; commute unknown is not."""
    if "fail" in verdicts.values():
        return "fail"
    if "unknown" in (verdicts["seats"], verdicts["occupancy"]):
        return "unknown"
    return "pass"


def _at_least(value: int | Fraction | None, minimum: Fraction) -> Verdict:
    if value is None:
        return "unknown"
    return "pass" if value >= minimum else "fail"


_MISSING = {"seats": "seats (not counting the driver)", "occupancy": "trips in the month"}


def _gap(figures: MonthFigures, missing: list[str]) -> str:
    parts = []
    if "seats" in missing:
        parts.append("no seat count on record")
    if "occupancy" in missing and not figures.trips:
        parts.append("no trips logged")
    return ", ".join(parts) or "not enough data"


def _evidence(
    facts: VanpoolFacts,
    label: str,
    figures: MonthFigures,
    verdicts: dict[str, Verdict],
    rules: VanpoolRules,
) -> VanpoolMonthEvidence:
    cites = [Citation(record="vanpool_month", id=f"{facts.vanpool_id} {label}", field="seats")]
    if figures.seats_source == "vanpool":
        cites = [Citation(record="vanpool", id=facts.vanpool_id, field="seats")]
    if figures.trips_source != "none":
        rows = Citation(record="trip", id=f"{facts.vanpool_id} {label}", field="date")
        if figures.trips_source == "ride_days":
            rows = Citation(record="ride_day", id=f"{facts.vanpool_id} {label}", field="date")
        cites.append(rows)
    if figures.commute_source != "none":
        field = "commute_share" if figures.commute_source == "given" else "vehicle_miles"
        cites.append(
            Citation(record="vanpool_month", id=f"{facts.vanpool_id} {label}", field=field)
        )
    occupancy, share, average = figures.occupancy, figures.commute_share, figures.average_passengers
    return VanpoolMonthEvidence(
        cites=cites,
        vanpool_id=facts.vanpool_id,
        month=label,
        seats=figures.seats,
        seats_source=figures.seats_source,  # type: ignore[arg-type]
        trips=figures.trips,
        passenger_trips=figures.passenger_trips,
        days_operated=figures.days_operated,
        trips_source=figures.trips_source,  # type: ignore[arg-type]
        average_passengers=round(float(average), 2) if average is not None else None,
        occupancy=round(float(occupancy), 4) if occupancy is not None else None,
        occupancy_percent=_percent(occupancy),
        vehicle_miles=figures.odometer_miles,
        miles_per_trip=figures.miles_per_trip,
        commute_share=round(float(share), 4) if share is not None else None,
        commute_percent=_percent(share),
        commute_source=figures.commute_source,  # type: ignore[arg-type]
        rules=verdicts,
        minimums={
            "seats": rules.min_seats,
            "occupancy_percent": rules.min_occupancy * 100,
            "commute_percent": rules.min_commute_share * 100,
        },
    )


def _number(value: float) -> str:
    return f"{value:g}"


def _percent(share: Fraction | None) -> int | None:
    """A whole percent, rounded down: 49.9 % is written 49 %, never a passing 50 %."""
    return None if share is None else int(share * 100)


def _reasoning(
    vanpool_id: str,
    label: str,
    figures: MonthFigures,
    verdicts: dict[str, Verdict],
    rules: VanpoolRules,
) -> str:
    seats = (
        f"{figures.seats} seats not counting the driver"
        if figures.seats
        else "no seat count on record"
    )
    sentences = [f"{vanpool_id} in {label}: {seats} (at least {rules.min_seats} needed)."]
    occupancy = figures.occupancy
    if occupancy is not None:
        average = Fraction(figures.passenger_trips, figures.trips)
        sentences.append(
            f"{figures.trips} trips carried {figures.passenger_trips} passengers, "
            f"{float(average):.2f} a trip: {_percent(occupancy)} % of the seats "
            f"(at least {_number(rules.min_occupancy * 100)} % needed)."
        )
    elif not figures.trips:
        sentences.append("No trips logged in the month, so occupancy is not known.")
    share = figures.commute_share
    if share is not None:
        how = "as reported" if figures.commute_source == "given" else "from the odometer"
        sentences.append(
            f"Commute share {_percent(share)} % {how} "
            f"(at least {_number(rules.min_commute_share * 100)} % needed)."
        )
    else:
        sentences.append("Commute mileage is not known, so that rule does not apply.")
    failed = [rule for rule, verdict in verdicts.items() if verdict == "fail"]
    if failed:
        sentences.append(f"Fails: {', '.join(failed)}.")
    return " ".join(sentences)
