"""preload_vanpools reads rides, swipes, permits, coverage, holidays and the month."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit.facts import facts_json, preload_vanpools, with_rides
from audit.ride_facts import CoverageSpan, RideMark, SwipeFacts, judged_month, ridership_window
from tests.factories import EmployeeFactory, RiderFactory, VanpoolFactory
from vanpools.models import (
    BadgeSwipe,
    DataCoverage,
    Holiday,
    ParkingPermit,
    RideDay,
    Trip,
    VanpoolMonth,
)

pytestmark = pytest.mark.django_db
AUDIT = dt.date(2026, 11, 23)


def test_the_window_ends_the_day_before_the_audit_and_the_month_is_the_last_complete_one():
    assert ridership_window(AUDIT, 28) == (dt.date(2026, 10, 26), dt.date(2026, 11, 22))
    assert judged_month(AUDIT) == dt.date(2026, 10, 1)
    assert judged_month(dt.date(2026, 1, 1)) == dt.date(2025, 12, 1)


def a_van_with_records(site: str = "Harbor DC"):
    van = VanpoolFactory(work_site=site, seats=7, miles_per_trip=30)
    seat = RiderFactory(vanpool=van, employee=EmployeeFactory(), joined=dt.date(2026, 6, 1))
    rider = seat.employee
    trip = Trip.objects.create(
        vanpool=van, date=dt.date(2026, 10, 27), trip_ref=f"{van.vanpool_id}-T1", passengers=4
    )
    RideDay.objects.create(
        vanpool=van, employee=rider, date=trip.date, source="trip", ref=trip.trip_ref
    )
    RideDay.objects.create(  # outside the window: not read
        vanpool=van, employee=rider, date=dt.date(2026, 9, 1), source="trip", ref="old"
    )
    BadgeSwipe.objects.create(
        employee=rider, date=dt.date(2026, 11, 2), time=dt.time(6, 52), site=site, direction="in"
    )
    ParkingPermit.objects.create(
        permit_id=f"P-{van.vanpool_id}",
        employee=rider,
        lot="Garage B",
        valid_from=dt.date(2026, 9, 1),
    )
    DataCoverage.objects.create(
        kind="trips", vanpool=van, start=dt.date(2026, 10, 1), end=dt.date(2026, 11, 30)
    )
    DataCoverage.objects.create(kind="badge_swipes", work_site=site, start=dt.date(2026, 10, 1))
    DataCoverage.objects.create(kind="permits", work_site="")
    Holiday.objects.get_or_create(
        date=dt.date(2026, 11, 11), work_site="", defaults={"name": "Veterans Day"}
    )
    VanpoolMonth.objects.create(vanpool=van, month=dt.date(2026, 10, 1), vehicle_miles=2100)
    return van, rider


def test_it_reads_each_riders_rides_swipes_and_permits_and_the_vans_month():
    van, _ = a_van_with_records()
    facts = preload_vanpools([van.vanpool_id], AUDIT)[van.vanpool_id]
    (rider,) = facts.riders
    assert rider.rides.joined == dt.date(2026, 6, 1)
    assert rider.rides.ride_days == (
        RideMark(dt.date(2026, 10, 27), "trip", f"{van.vanpool_id}-T1"),
    )
    assert rider.rides.swipes == (
        SwipeFacts(dt.datetime(2026, 11, 2, 6, 52), "Harbor DC", "in", ""),
    )
    assert [p.permit_id for p in rider.rides.permits] == [f"P-{van.vanpool_id}"]
    assert facts.rides.holidays == ((dt.date(2026, 11, 11), "Veterans Day"),)
    assert facts.rides.coverage == (
        CoverageSpan("trips", dt.date(2026, 10, 1), dt.date(2026, 11, 30)),
        CoverageSpan("badge_swipes", dt.date(2026, 10, 1), None),
    )
    assert facts.rides.parking_covered
    month = facts.rides.month
    assert (month.trips, month.passenger_trips, month.trip_days, month.vehicle_miles) == (
        1,
        4,
        1,
        2100,
    )
    assert (facts.seats, facts.miles_per_trip) == (7, 30)


def test_a_new_ride_day_swipe_or_trip_changes_the_facts_json_and_so_the_input_hash():
    van, employee = a_van_with_records()

    def encoded() -> dict:
        return facts_json(preload_vanpools([van.vanpool_id], AUDIT, rides=False)[van.vanpool_id])

    before = encoded()
    assert before["month"]["trips"] == 1
    assert before["ride_fingerprint"].startswith("ride_days 1:")
    changes = [
        lambda: RideDay.objects.create(
            vanpool=van, employee=employee, date=dt.date(2026, 11, 3), source="trip", ref="T3"
        ),
        lambda: RideDay.objects.filter(ref=f"{van.vanpool_id}-T1").delete(),
        lambda: BadgeSwipe.objects.create(
            employee=employee, date=dt.date(2026, 11, 4), time=dt.time(7)
        ),
        lambda: Trip.objects.create(
            vanpool=van, date=dt.date(2026, 10, 28), trip_ref="T2", passengers=3
        ),
    ]
    seen = [before]
    for change in changes:
        change()
        now = encoded()
        assert now not in seen
        seen.append(now)


def test_rides_left_unread_are_read_by_with_rides_to_the_same_facts():
    van, _ = a_van_with_records()
    full = preload_vanpools([van.vanpool_id], AUDIT)[van.vanpool_id]
    light = preload_vanpools([van.vanpool_id], AUDIT, rides=False)[van.vanpool_id]
    assert light.riders[0].rides.ride_days == () and not light.rides.loaded
    assert facts_json(light) == facts_json(full)  # the same input hash either way
    with CaptureQueriesContext(connection) as captured:
        (read,) = with_rides([light], AUDIT)
    assert read == full
    assert len(captured) == 2  # ride days, swipes


def test_a_permit_list_covers_only_the_sites_and_days_it_names():
    van, _ = a_van_with_records()
    DataCoverage.objects.filter(kind="permits").update(work_site="Elsewhere")
    assert not preload_vanpools([van.vanpool_id], AUDIT)[van.vanpool_id].rides.parking_covered
    DataCoverage.objects.filter(kind="permits").update(
        work_site=van.work_site, end=dt.date(2026, 11, 22)
    )
    assert not preload_vanpools([van.vanpool_id], AUDIT)[van.vanpool_id].rides.parking_covered


def test_the_rides_take_the_same_queries_however_many_vans():
    def queries(count: int) -> int:
        ids = [a_van_with_records(f"Site {count}-{n}")[0].vanpool_id for n in range(count)]
        with CaptureQueriesContext(connection) as captured:
            preload_vanpools(ids, AUDIT)
        return len(captured)

    # Roster 4; coverage, permits, the rides' and swipes' fingerprints, holidays,
    # the month's trips, ride days and report (8), and the ride days and swipes (2).
    assert queries(2) == queries(12) == 4 + 8 + 2
