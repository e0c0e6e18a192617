"""check_parking: a permit in force on the audit date beside an active seat fails."""

import datetime as dt

import pytest

from agents.contracts import NoDataEvidence, ParkingEvidence
from audit.facts import RiderFacts, VanpoolFacts
from audit.parking import check_parking
from audit.ride_facts import PermitFacts, RiderRides, VanRides

AUDIT = dt.date(2026, 11, 23)
JUNE = dt.date(2026, 6, 1)


def permit(valid_from: str, valid_to: str | None = None, **fields: str) -> PermitFacts:
    return PermitFacts(
        permit_id="P-1",
        lot="Garage B",
        valid_from=dt.date.fromisoformat(valid_from),
        valid_to=dt.date.fromisoformat(valid_to) if valid_to else None,
        **fields,
    )


def van(*permits: PermitFacts, joined: dt.date = JUNE, covered: bool = True) -> VanpoolFacts:
    holder = RiderFacts(
        employee_id="E1", home_zip="94587", rides=RiderRides(joined=joined, permits=permits)
    )
    other = RiderFacts(employee_id="E2", home_zip="94587")
    return VanpoolFacts(
        vanpool_id="VP-301",
        work_site="Mercy Hospital",
        riders=(holder, other),
        rides=VanRides(parking_covered=covered),
    )


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (van(permit("2026-09-01", "2026-12-31")), "fail"),
        (van(permit("2026-09-01", "2026-12-31", status="returned")), "pass"),
        (van(permit("2026-09-01", "2026-12-31", status="revoked")), "pass"),
        (van(permit("2026-01-01", "2026-11-22")), "pass"),
        (van(permit("2026-01-01", "2026-11-23")), "fail"),
        (van(permit("2026-11-23")), "fail"),
        (van(permit("2026-12-01", "2027-05-31")), "pass"),
        (van(permit("2026-01-01", kind="vanpool")), "pass"),
        (van(permit("2026-01-01"), joined=dt.date(2026, 11, 24)), "pass"),
        (van(permit("2026-01-01"), joined=AUDIT), "fail"),
        (van(), "pass"),
    ],
    ids=[
        "in force", "returned", "revoked", "ended the day before", "ends on the day",
        "no end", "starts after", "vanpool permit", "seat starts after", "seat starts on the day",
        "no permit",
    ],
)  # fmt: skip
def test_a_standard_permit_in_force_beside_an_active_seat_fails(facts, expected):
    assert check_parking(facts, AUDIT).rider_verdicts() == {"E1": expected, "E2": "pass"}


def test_without_a_permit_list_every_rider_is_unknown_and_a_gap():
    result = check_parking(van(permit("2026-01-01"), covered=False), AUDIT)
    assert result.rider_verdicts() == {"E1": "unknown", "E2": "unknown"}
    assert all(isinstance(item, NoDataEvidence) for item in result.evidence)


def test_the_evidence_names_the_permit_and_its_lot():
    result = check_parking(van(permit("2026-09-01", "2026-12-31")), AUDIT)
    (item,) = result.evidence
    assert isinstance(item, ParkingEvidence)
    assert (item.permit_id, item.lot, item.in_force, item.conflict) == (
        "P-1",
        "Garage B",
        True,
        True,
    )
    assert result.riders[0].reason == (
        "E1 holds a seat since 2026-06-01 and a parking permit in force: permit P-1 for "
        "Garage B, valid 2026-09-01 – 2026-12-31."
    )
