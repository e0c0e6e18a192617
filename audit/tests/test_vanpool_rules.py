"""check_vanpool_rules: seats, average occupancy and commute share of one van's month."""

import datetime as dt

import pytest

from agents.contracts import NoDataEvidence, VanpoolMonthEvidence
from audit.facts import VanpoolFacts
from audit.ride_facts import VanRides
from audit.vanpool_rules import check_vanpool_rules
from vanpools.monthly import MonthFacts

AUDIT = dt.date(2026, 11, 23)
OCTOBER = dt.date(2026, 10, 1)


def van(van_seats: int | None = 7, van_miles: float | None = None, **month: object) -> VanpoolFacts:
    """The van's seats and miles per trip, then its month's figures."""
    return VanpoolFacts(
        vanpool_id="VP-401",
        seats=van_seats,
        miles_per_trip=van_miles,
        rides=VanRides(month=MonthFacts(month=OCTOBER, **month)),  # type: ignore[arg-type]
    )


def rules_of(facts: VanpoolFacts) -> tuple[str, dict[str, str]]:
    result = check_vanpool_rules(facts, AUDIT)
    month = next(e for e in result.evidence if isinstance(e, VanpoolMonthEvidence))
    return result.verdict, dict(month.rules)


@pytest.mark.parametrize(
    ("facts", "verdict", "rules"),
    [
        (van(5, trips=44, passenger_trips=176), "fail", ("fail", "pass", "unknown")),
        (van(6, trips=40, passenger_trips=120), "pass", ("pass", "pass", "unknown")),
        (van(7, trips=44, passenger_trips=150), "fail", ("pass", "fail", "unknown")),
        (van(7, trips=44, passenger_trips=154), "pass", ("pass", "pass", "unknown")),
        (
            van(7, trips=44, passenger_trips=154, commute_share=0.75),
            "fail",
            ("pass", "pass", "fail"),
        ),
        (
            van(7, trips=44, passenger_trips=154, commute_share=0.8),
            "pass",
            ("pass", "pass", "pass"),
        ),
        (
            van(7, 36, trips=42, passenger_trips=168, vehicle_miles=2000),
            "fail",
            ("pass", "pass", "fail"),
        ),
        (
            van(7, 36, trips=42, passenger_trips=168, vehicle_miles=1890),
            "pass",
            ("pass", "pass", "pass"),
        ),
        (
            van(7, 36, trips=42, passenger_trips=168, vehicle_miles=1000),
            "pass",
            ("pass", "pass", "pass"),
        ),
        (
            van(7, 36, trips=42, passenger_trips=168, vehicle_miles=1512, miles_per_trip=20),
            "fail",
            ("pass", "pass", "fail"),
        ),
        (van(5, seats=7, trips=40, passenger_trips=160), "pass", ("pass", "pass", "unknown")),
        (van(None, trips=40, passenger_trips=200), "unknown", ("unknown", "unknown", "unknown")),
        (van(8), "unknown", ("pass", "unknown", "unknown")),
        (van(4), "fail", ("fail", "unknown", "unknown")),
        (van(12, ride_day_rows=120, ride_day_dates=20), "pass", ("pass", "pass", "unknown")),
        (van(12, ride_day_rows=100, ride_day_dates=20), "fail", ("pass", "fail", "unknown")),
    ],
)
def test_each_rule_and_the_vans_verdict(facts, verdict, rules):
    assert rules_of(facts) == (
        verdict,
        dict(zip(("seats", "occupancy", "commute"), rules, strict=True)),
    )


def test_an_unknown_month_is_a_gap_named_in_the_evidence():
    result = check_vanpool_rules(van(8), AUDIT)
    gap = next(e for e in result.evidence if isinstance(e, NoDataEvidence))
    assert (gap.employee_id, gap.missing) == ("", "trips in the month")
    assert result.riders == []


def test_the_reasoning_gives_the_months_figures():
    result = check_vanpool_rules(van(7, trips=44, passenger_trips=150), AUDIT)
    assert result.reasoning == (
        "VP-401 in 2026-10: 7 seats not counting the driver (at least 6 needed). 44 trips "
        "carried 150 passengers, 3.41 a trip: 48 % of the seats (at least 50 % needed). "
        "Commute mileage is not known, so that rule does not apply. Fails: occupancy."
    )
