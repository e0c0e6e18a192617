"""The monthly vanpool report: one row per van, the figures an NTD vanpool report asks for.

The columns and how each maps to the National Transit Database's vanpool
reporting fields are in docs/operating.md ("The monthly vanpool report"); the
figures are ``vanpools.monthly``'s, the same the §132(f) rules read. Four
queries for any number of vans: the vans, and their month's trips, ride days
and reports.
"""

import datetime as dt
from collections.abc import Iterator
from fractions import Fraction

from django.db.models import QuerySet

from poolpatrol.spreadsheets import Cell
from vanpools.models import Vanpool
from vanpools.monthly import MonthFigures, month_facts, month_figures

COLUMNS = (
    "vanpool_id", "name", "work_site", "month", "days_operated", "trips", "passenger_trips",
    "unlinked_passenger_trips", "passenger_miles", "vehicle_miles", "vehicle_miles_source",
    "revenue_miles", "miles_per_trip", "seats", "average_passengers", "average_occupancy",
    "commute_share", "commute_share_source",
)  # fmt: skip
FORMATS = ("csv", "xlsx")


def parse_month(text: str) -> dt.date:
    """``YYYY-MM`` → the month's first day; ValueError with the expected shape otherwise."""
    try:
        return dt.datetime.strptime(text.strip(), "%Y-%m").date()
    except ValueError:
        raise ValueError(f"{text!r} is not a month: write YYYY-MM, e.g. 2026-10") from None


def report_rows(vanpools: QuerySet[Vanpool], month: dt.date) -> Iterator[tuple[Cell, ...]]:
    vans = list(
        vanpools.order_by("vanpool_id").values_list(
            "pk", "vanpool_id", "name", "work_site", "seats", "miles_per_trip"
        )
    )
    facts = month_facts([van[0] for van in vans], month)
    label = month.strftime("%Y-%m")
    for pk, vanpool_id, name, site, seats, per_trip in vans:
        figures = month_figures(facts[pk], seats, per_trip)
        yield (vanpool_id, name, site, label, *_figures(figures))


def _figures(figures: MonthFigures) -> tuple[Cell, ...]:
    # Every trip has a driver, who commutes too: NTD counts the driver as a passenger.
    upt = figures.passenger_trips + figures.trips
    upt_miles = (
        Fraction(str(figures.miles_per_trip)) * upt if figures.miles_per_trip is not None else None
    )
    return (
        figures.days_operated,
        figures.trips,
        figures.passenger_trips,
        upt,
        _round(upt_miles, 1),
        _round(figures.vehicle_miles, 1),
        _miles_source(figures),
        _round(figures.commute_miles, 1),
        figures.miles_per_trip,
        figures.seats,
        _round(figures.average_passengers, 2),
        _round(figures.occupancy, 4),
        _round(figures.commute_share, 4),
        figures.commute_source if figures.commute_source != "none" else "",
    )


def _miles_source(figures: MonthFigures) -> str:
    if figures.odometer_miles is not None:
        return "odometer"
    return "trips × miles per trip" if figures.miles_per_trip is not None else ""


def _round(value: Fraction | None, places: int) -> float | None:
    return None if value is None else round(float(value), places)
