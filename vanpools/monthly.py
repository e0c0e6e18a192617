"""A van's month in figures: trips, passenger trips, miles, seats, occupancy, commute share.

One definition of each figure, read by the vanpool rules (``audit.vanpool_rules``)
and printed by the monthly report (``vanpools.monthly_report``):

- **trips**: the trip log's rows dated in the month; with no trip rows but
  ride-day rows, each date with rows is two trips (there and back) carrying
  that date's riders;
- **passenger trips**: passengers aboard those trips, not counting the driver;
- **days operated**: dates with a trip (or a ride-day row);
- **seats**: adult seats not counting the driver, the month's if reported,
  else the vanpool's;
- **miles per trip**: the month's, else the vanpool's;
- **vehicle miles**: the month's odometer miles when reported, else trips ×
  miles per trip; **commute miles** are trips × miles per trip;
- **commute share**: as reported, else commute miles ÷ odometer miles (at most
  1) when both are known;
- **occupancy**: passenger trips ÷ trips ÷ seats.

Figures are exact fractions, so a rule compares them without rounding.
"""

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django.db.models import Count, Sum
from django.db.models.functions import TruncMonth

from vanpools.program import VanpoolMonth
from vanpools.trips import RideDay, Trip


@dataclass(frozen=True)
class MonthFacts:
    """One van's month as recorded: the operator's report and the logs' totals."""

    month: dt.date  # its first day
    seats: int | None = None  # the month's own, if reported
    vehicle_miles: float | None = None
    miles_per_trip: float | None = None
    commute_share: float | None = None
    trips: int = 0
    passenger_trips: int = 0
    trip_days: int = 0
    ride_day_rows: int = 0
    ride_day_dates: int = 0


@dataclass(frozen=True)
class MonthFigures:
    seats: int | None
    seats_source: str  # "month" | "vanpool" | "none"
    trips: int
    passenger_trips: int
    days_operated: int
    trips_source: str  # "trips" | "ride_days" | "none"
    miles_per_trip: float | None
    odometer_miles: float | None
    commute_share: Fraction | None
    commute_source: str  # "given" | "computed" | "none"

    @property
    def occupancy(self) -> Fraction | None:
        if not self.seats or not self.trips:
            return None
        return Fraction(self.passenger_trips, self.trips * self.seats)

    @property
    def average_passengers(self) -> Fraction | None:
        return Fraction(self.passenger_trips, self.trips) if self.trips else None

    @property
    def commute_miles(self) -> Fraction | None:
        if self.miles_per_trip is None:
            return None
        return Fraction(str(self.miles_per_trip)) * self.trips

    @property
    def vehicle_miles(self) -> Fraction | None:
        if self.odometer_miles is not None:
            return Fraction(str(self.odometer_miles))
        return self.commute_miles

    @property
    def passenger_miles(self) -> Fraction | None:
        if self.miles_per_trip is None:
            return None
        return Fraction(str(self.miles_per_trip)) * self.passenger_trips


def month_figures(
    month: MonthFacts, van_seats: int | None, van_miles_per_trip: float | None
) -> MonthFigures:
    seats, seats_source = (month.seats, "month") if month.seats else (van_seats, "vanpool")
    if not seats:
        seats, seats_source = None, "none"
    if month.trips:
        trips, passengers, days, source = (
            month.trips,
            month.passenger_trips,
            month.trip_days,
            "trips",
        )
    elif month.ride_day_rows:
        # A ride-day row is a day aboard: each such date is a trip there and one back.
        trips, passengers = 2 * month.ride_day_dates, 2 * month.ride_day_rows
        days, source = month.ride_day_dates, "ride_days"
    else:
        trips, passengers, days, source = 0, 0, 0, "none"
    per_trip = month.miles_per_trip if month.miles_per_trip is not None else van_miles_per_trip
    share, share_source = _commute_share(month, trips, per_trip)
    return MonthFigures(
        seats=seats,
        seats_source=seats_source,
        trips=trips,
        passenger_trips=passengers,
        days_operated=days,
        trips_source=source,
        miles_per_trip=per_trip,
        odometer_miles=month.vehicle_miles,
        commute_share=share,
        commute_source=share_source,
    )


def _commute_share(
    month: MonthFacts, trips: int, per_trip: float | None
) -> tuple[Fraction | None, str]:
    if month.commute_share is not None:
        return Fraction(str(month.commute_share)), "given"
    if month.vehicle_miles and per_trip is not None:
        commute = Fraction(str(per_trip)) * trips
        return min(Fraction(1), commute / Fraction(str(month.vehicle_miles))), "computed"
    return None, "none"


def next_month(month: dt.date) -> dt.date:
    return (month.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


def month_facts(van_pks: list[int], month: dt.date) -> dict[int, MonthFacts]:
    """Each van's month, in three queries however many vans: trips, ride days, reports."""
    in_month = {"date__gte": month, "date__lt": next_month(month)}
    trips = {
        row["vanpool_id"]: row
        for row in Trip.objects.filter(vanpool_id__in=van_pks, **in_month)
        .values("vanpool_id")
        .annotate(n=Count("id"), p=Sum("passengers"), d=Count("date", distinct=True))
        .order_by()
    }
    ride_days = {
        row["vanpool_id"]: row
        for row in RideDay.objects.filter(
            vanpool_id__in=van_pks, source=RideDay.Source.RIDE_DAY, **in_month
        )
        .values("vanpool_id")
        .annotate(n=Count("id"), d=Count("date", distinct=True))
        .order_by()
    }
    reported = {
        row["vanpool_id"]: row
        for row in VanpoolMonth.objects.filter(vanpool_id__in=van_pks, month=month).values()
    }
    none: dict[str, Any] = {}
    out = {}
    for pk in van_pks:
        trip, day, row = trips.get(pk, none), ride_days.get(pk, none), reported.get(pk, none)
        out[pk] = _facts(month, trip, day, row)
    return out


def van_months(van_pk: int, months: list[dt.date]) -> dict[dt.date, MonthFacts]:
    """One van's ``months`` (first days, in order), in three queries however many months."""
    if not months:
        return {}
    in_range = {"date__gte": months[0], "date__lt": next_month(months[-1])}
    trips = {
        row["m"]: row
        for row in Trip.objects.filter(vanpool_id=van_pk, **in_range)
        .annotate(m=TruncMonth("date"))
        .values("m")
        .annotate(n=Count("id"), p=Sum("passengers"), d=Count("date", distinct=True))
        .order_by()
    }
    ride_days = {
        row["m"]: row
        for row in RideDay.objects.filter(
            vanpool_id=van_pk, source=RideDay.Source.RIDE_DAY, **in_range
        )
        .annotate(m=TruncMonth("date"))
        .values("m")
        .annotate(n=Count("id"), d=Count("date", distinct=True))
        .order_by()
    }
    reported = {
        row["month"]: row
        for row in VanpoolMonth.objects.filter(vanpool_id=van_pk, month__in=months).values()
    }
    none: dict[str, Any] = {}
    return {
        month: _facts(
            month, trips.get(month, none), ride_days.get(month, none), reported.get(month, none)
        )
        for month in months
    }


def _facts(
    month: dt.date, trip: Mapping[str, Any], day: Mapping[str, Any], row: Mapping[str, Any]
) -> MonthFacts:
    return MonthFacts(
        month=month,
        seats=row.get("seats"),
        vehicle_miles=row.get("vehicle_miles"),
        miles_per_trip=row.get("miles_per_trip"),
        commute_share=row.get("commute_share"),
        trips=trip.get("n", 0),
        passenger_trips=trip.get("p") or 0,
        trip_days=trip.get("d", 0),
        ride_day_rows=day.get("n", 0),
        ride_day_dates=day.get("d", 0),
    )
