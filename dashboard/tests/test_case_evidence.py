"""The case page draws the ridership, parking and vanpool-rules evidence a check cites."""

import pytest
from django.urls import reverse

from agents.contracts import (
    NoDataEvidence,
    ParkingEvidence,
    RidershipEvidence,
    VanpoolMonthEvidence,
)
from dashboard.queries import EvidenceItem
from tests.factories import CaseFactory, VerificationFactory

pytestmark = pytest.mark.django_db

RIDERSHIP = RidershipEvidence(
    employee_id="EMP-1047",
    window_start="2026-11-09",  # a Monday
    window_end="2026-11-20",  # the Friday after next
    rule="3 days a week (3 of the rider's 5)",
    scheduled=10,
    counted=9,
    covered=9,
    aboard=3,
    required=6,
    sources=["trips"],
    calendar={
        "2026-11-09": "aboard",
        "2026-11-10": "missed",
        "2026-11-11": "holiday",
        "2026-11-12": "aboard",
        "2026-11-13": "leave",
        "2026-11-16": "missed",
        "2026-11-17": "not_covered",
        "2026-11-18": "aboard",
        "2026-11-19": "missed",
        "2026-11-20": "missed",
    },
)


def test_a_ridership_window_is_drawn_as_weeks_from_monday_with_each_day_marked():
    weeks = EvidenceItem("ridership", "fail", RIDERSHIP.model_dump(), 1).calendar_weeks
    assert len(weeks) == 2 and all(len(week) == 7 for week in weeks)
    assert [day["mark"] for day in weeks[0]] == [
        "aboard", "missed", "holiday", "aboard", "leave", "", "",
    ]  # fmt: skip
    assert weeks[1][1] == {"date": "2026-11-17", "day": "17", "mark": "not_covered"}


def test_a_window_without_dates_draws_no_calendar():
    item = RIDERSHIP.model_dump() | {"window_start": "", "window_end": ""}
    assert EvidenceItem("ridership", "fail", item, 1).calendar_weeks == []


def test_the_case_page_shows_the_calendar_the_permit_and_the_vans_month(client, coordinator):
    case = CaseFactory()
    VerificationFactory(
        case=case, check_type="ridership", evidence=[RIDERSHIP.model_dump(mode="json")]
    )
    permit = ParkingEvidence(
        employee_id="EMP-1047", permit_id="P-7301", lot="Garage B", valid_from="2026-11-23",
        valid_to="", status="active", kind="standard", seat_joined="2024-12-25",
        in_force=True, conflict=True,
    )  # fmt: skip
    VerificationFactory(case=case, check_type="parking", evidence=[permit.model_dump(mode="json")])
    month = VanpoolMonthEvidence(
        employee_id="", vanpool_id=case.vanpool.vanpool_id, month="2026-10", seats=11,
        seats_source="month", trips=44, passenger_trips=412, days_operated=22,
        trips_source="trips", average_passengers=9.36, occupancy=0.85, occupancy_percent=85,
        vehicle_miles=None, miles_per_trip=None, commute_share=0.72, commute_percent=72,
        commute_source="given", rules={"seats": "pass", "occupancy": "pass", "commute": "fail"},
        minimums={"seats": 6, "occupancy_percent": 50, "commute_percent": 80},
    )  # fmt: skip
    gap = NoDataEvidence(missing="badge swipes", detail="no gate data for the site in the window")
    VerificationFactory(
        case=case,
        check_type="vanpool_rules",
        evidence=[month.model_dump(mode="json"), gap.model_dump(mode="json")],
    )
    client.force_login(coordinator)
    html = client.get(reverse("case-detail", args=[case.case_id])).content.decode()
    assert "rode on <strong>3 of 9</strong>" in html
    assert 'class="ride-calendar"' in html and 'class="ride-missed"' in html
    assert "Garage B" in html and "valid 2026-11-23 – no end" in html
    assert "in force beside the seat" in html
    assert "72 % (given)" in html and "under 80 %" in html
    assert "no badge swipes: no gate data for the site in the window" in html
