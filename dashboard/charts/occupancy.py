"""A van's average occupancy by month: passengers a trip as a share of its seats (§132(f))."""

import datetime as dt
from dataclasses import dataclass

from django.conf import settings

from dashboard.charts.bars import BarChart, bar_chart
from vanpools.models import Vanpool
from vanpools.monthly import month_figures, van_months

MONTHS = 6


@dataclass(frozen=True)
class OccupancyChart:
    chart: BarChart
    minimum_percent: int
    unknown: list[str]  # months with trips or seats missing, named so a person sees the gap


def last_months(today: dt.date, count: int = MONTHS) -> list[dt.date]:
    """The ``count`` complete months before ``today``'s, oldest first."""
    months, month = [], today.replace(day=1)
    for _ in range(count):
        month = (month - dt.timedelta(days=1)).replace(day=1)
        months.append(month)
    return months[::-1]


def occupancy_chart(vanpool: Vanpool, today: dt.date) -> OccupancyChart | None:
    """The months with figures, each bar toned by the rule; None when no month has any."""
    minimum = round(settings.VANPOOL_MIN_OCCUPANCY * 100)
    facts = van_months(vanpool.pk, last_months(today))
    bars, unknown = [], []
    for month, month_facts in facts.items():
        figures = month_figures(month_facts, vanpool.seats, vanpool.miles_per_trip)
        if figures.occupancy is None:
            if figures.trips or month_facts.seats:
                unknown.append(f"{month:%b %Y}")
            continue
        percent = round(float(figures.occupancy) * 100)
        bars.append((f"{month:%b %Y}", percent, "bar-ok" if percent >= minimum else "bar-danger"))
    if not bars and not unknown:
        return None
    return OccupancyChart(bar_chart(bars), minimum, unknown)
