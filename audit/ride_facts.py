"""Preloaded ridership, parking and monthly facts for a chunk of vanpools.

The same discipline as ``audit.facts``: a fixed number of queries per chunk,
plain frozen values out, no model instances. ``audit.facts.preload_vanpools``
calls ``preload_rides`` and attaches what it returns to each vanpool's facts.
"""

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection
from django.db.models import Count, Max, Q, Sum

from vanpools.models import BadgeSwipe, DataCoverage, Holiday, ParkingPermit, RideDay
from vanpools.monthly import MonthFacts, month_facts

Kind = DataCoverage.Kind


class RideMark(NamedTuple):
    """A day the data shows a rider aboard their van (a tuple: tens of thousands a chunk)."""

    date: dt.date
    source: str  # "trip" | "ride_day"
    ref: str


@dataclass(frozen=True)
class SwipeFacts:
    at: dt.datetime  # the site's wall-clock time, naive
    site: str = ""
    direction: str = ""
    gate: str = ""


@dataclass(frozen=True)
class CoverageSpan:
    kind: str  # a DataCoverage.Kind value
    start: dt.date | None = None
    end: dt.date | None = None

    def covers(self, day: dt.date) -> bool:
        return (self.start is None or self.start <= day) and (self.end is None or day <= self.end)


@dataclass(frozen=True)
class PermitFacts:
    permit_id: str
    lot: str
    valid_from: dt.date
    valid_to: dt.date | None = None
    status: str = "active"
    kind: str = "standard"

    def in_force(self, day: dt.date) -> bool:
        ends_after = self.valid_to is None or day <= self.valid_to
        return self.status == "active" and self.valid_from <= day and ends_after


@dataclass(frozen=True)
class RiderRides:
    joined: dt.date | None = None
    ride_days: tuple[RideMark, ...] = ()
    swipes: tuple[SwipeFacts, ...] = ()
    permits: tuple[PermitFacts, ...] = ()


@dataclass(frozen=True)
class VanRides:
    holidays: tuple[tuple[dt.date, str], ...] = ()
    coverage: tuple[CoverageSpan, ...] = ()
    parking_covered: bool = False
    month: MonthFacts | None = None
    riders: dict[int, RiderRides] = field(default_factory=dict)  # by Employee pk
    # What the window's ride days and swipes are, in a few numbers: the input hash
    # reads this instead of the rows, so an unchanged van is known without loading them.
    fingerprint: str = ""
    loaded: bool = True  # False: the riders' ride days and swipes are still to be read


def ridership_window(
    audit_date: dt.date, window_days: int | None = None
) -> tuple[dt.date, dt.date]:
    """The window's first and last dates: ``window_days`` ending the day before the audit."""
    days = settings.RIDERSHIP_WINDOW_DAYS if window_days is None else window_days
    return audit_date - dt.timedelta(days=days), audit_date - dt.timedelta(days=1)


def judged_month(audit_date: dt.date) -> dt.date:
    """The last complete calendar month before the audit date (its first day)."""
    return (audit_date.replace(day=1) - dt.timedelta(days=1)).replace(day=1)


@dataclass(frozen=True)
class Seat:
    """What the preload needs of one active seat."""

    vanpool_pk: int
    employee_pk: int
    joined: dt.date


def preload_rides(
    vans: list[dict[str, Any]], seats: list[Seat], audit_date: dt.date, *, load: bool = True
) -> dict[int, VanRides]:
    """Ride, parking and month facts for these vans (rows of ``Vanpool.values``), by van pk.

    A fixed number of queries whatever the number of vans: coverage, the ride
    days' fingerprint, holidays, the month's trips, ride days and report, and
    swipes' fingerprint and permits when some source covers them; with
    ``load``, the ride days and swipes themselves (else ``load_rides`` reads
    them later, for the vans whose fingerprint changed).
    """
    start, end = ridership_window(audit_date)
    van_pks = [van["pk"] for van in vans]
    employee_pks = [seat.employee_pk for seat in seats]
    sites = {van["work_site"] for van in vans}
    coverage = _coverage(van_pks, sites, audit_date)
    kinds = {
        span.kind
        for spans in (coverage.by_van, coverage.by_site)
        for group in spans.values()
        for span in group
    }
    badge = Kind.BADGE_SWIPES in kinds
    # Swipes and permits count only where a source covers them: no query without one.
    permits = _permits(employee_pks) if Kind.PERMITS in kinds else {}
    fingerprints = _fingerprints(van_pks, seats, start, end, badge)
    holidays = _holidays(sites, start, end)
    months = month_facts(van_pks, judged_month(audit_date))
    ride_days, swipes = _rows(van_pks, employee_pks, start, end, badge) if load else ({}, {})
    riders: dict[int, dict[int, RiderRides]] = defaultdict(dict)
    for seat in seats:
        riders[seat.vanpool_pk][seat.employee_pk] = RiderRides(
            joined=seat.joined,
            ride_days=tuple(ride_days.get((seat.vanpool_pk, seat.employee_pk), ())),
            swipes=tuple(swipes.get(seat.employee_pk, ())),
            permits=tuple(permits.get(seat.employee_pk, ())),
        )
    out: dict[int, VanRides] = {}
    for van in vans:
        site = van["work_site"]
        spans = coverage.by_van.get(van["pk"], []) + coverage.by_site.get(site, [])
        spans += coverage.by_site.get("", [])
        out[van["pk"]] = VanRides(
            holidays=tuple(sorted(holidays.get(site, []) + holidays.get("", []))),
            coverage=tuple(span for span in spans if span.kind != Kind.PERMITS),
            parking_covered=any(span.kind == Kind.PERMITS for span in spans),
            month=months[van["pk"]],
            riders=riders.get(van["pk"], {}),
            fingerprint=fingerprints.get(van["pk"], ""),
            loaded=load,
        )
    return out


def load_rides(rides: dict[int, VanRides], audit_date: dt.date) -> dict[int, VanRides]:
    """``rides`` (by van pk) with their riders' ride days and swipes read: two queries."""
    start, end = ridership_window(audit_date)
    employee_pks = [pk for van in rides.values() for pk in van.riders]
    badge = any(span.kind == Kind.BADGE_SWIPES for van in rides.values() for span in van.coverage)
    ride_days, swipes = _rows(list(rides), employee_pks, start, end, badge)
    out = {}
    for van_pk, van in rides.items():
        riders = {
            employee_pk: replace(
                rider,
                ride_days=tuple(ride_days.get((van_pk, employee_pk), ())),
                swipes=tuple(swipes.get(employee_pk, ())),
            )
            for employee_pk, rider in van.riders.items()
        }
        out[van_pk] = replace(van, riders=riders, loaded=True)
    return out


def _rows(
    van_pks: list[int], employee_pks: list[int], start: dt.date, end: dt.date, badge: bool
) -> tuple[dict[tuple[int, int], list[RideMark]], dict[int, list[SwipeFacts]]]:
    swipes = _swipes(employee_pks, start, end) if badge else {}
    return _ride_days(van_pks, start, end), swipes


def _fingerprints(
    van_pks: list[int], seats: list[Seat], start: dt.date, end: dt.date, badge: bool
) -> dict[int, str]:
    """Each van's window of ride days (and its riders' swipes) as count, id sum and last id.

    Ride records are replaced, never edited (an import deletes and inserts; the
    admin shows them read-only), and ids are never reused, so any change to a
    van's rows in the window changes these numbers.
    """
    rides = {
        row[0]: f"ride_days {row[1]}:{row[2]}:{row[3]}"
        for row in RideDay.objects.filter(vanpool_id__in=van_pks, date__range=(start, end))
        .values("vanpool_id")
        .annotate(n=Count("id"), total=Sum("id"), last=Max("id"))
        .values_list("vanpool_id", "n", "total", "last")
        .order_by()
    }
    if badge:
        by_employee = {
            row[0]: row[1:]
            for row in BadgeSwipe.objects.filter(
                employee_id__in=[seat.employee_pk for seat in seats],
                date__range=(start - dt.timedelta(days=1), end + dt.timedelta(days=1)),
            )
            .values("employee_id")
            .annotate(n=Count("id"), total=Sum("id"), last=Max("id"))
            .values_list("employee_id", "n", "total", "last")
            .order_by()
        }
        riders: dict[int, list[int]] = defaultdict(list)
        for seat in seats:
            riders[seat.vanpool_pk].append(seat.employee_pk)
        for van_pk, employees in riders.items():
            counts = [by_employee[e] for e in sorted(employees) if e in by_employee]
            if counts:
                shown = " ".join(f"{n}:{total}:{last}" for n, total, last in counts)
                rides[van_pk] = f"{rides.get(van_pk, 'ride_days 0')}; swipes {shown}"
    return rides


def _ride_days(
    van_pks: list[int], start: dt.date, end: dt.date
) -> dict[tuple[int, int], list[RideMark]]:
    found: dict[tuple[int, int], list[RideMark]] = defaultdict(list)
    if not van_pks:
        return found
    query = (
        RideDay.objects.filter(vanpool_id__in=van_pks, date__range=(start, end))
        .order_by("date", "source", "employee_id")
        .values_list("vanpool_id", "employee_id", "date", "source", "ref")
    )
    # Read past the ORM's per-value converters: a chunk holds tens of thousands of
    # rows, and SQLite's dates arrive as ISO text that fromisoformat reads at C speed.
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for vanpool_pk, employee_pk, date, source, ref in cursor.fetchall():
            day = date if isinstance(date, dt.date) else dt.date.fromisoformat(date)
            found[(vanpool_pk, employee_pk)].append(RideMark(day, source, ref))
    return found


def _swipes(employee_pks: list[int], start: dt.date, end: dt.date) -> dict[int, list[SwipeFacts]]:
    # A day either side: an overnight van's arrival may be matched across midnight.
    found: dict[int, list[SwipeFacts]] = defaultdict(list)
    rows = (
        BadgeSwipe.objects.filter(
            employee_id__in=employee_pks,
            date__range=(start - dt.timedelta(days=1), end + dt.timedelta(days=1)),
        )
        .order_by("date", "time", "gate")
        .values_list("employee_id", "date", "time", "site", "direction", "gate")
    )
    for employee_pk, date, time, site, direction, gate in rows:
        at = dt.datetime.combine(date, time)
        found[employee_pk].append(SwipeFacts(at, site, direction, gate))
    return found


def _permits(employee_pks: list[int]) -> dict[int, list[PermitFacts]]:
    found: dict[int, list[PermitFacts]] = defaultdict(list)
    rows = (
        ParkingPermit.objects.filter(employee_id__in=employee_pks)
        .order_by("valid_from", "permit_id")
        .values_list("employee_id", "permit_id", "lot", "valid_from", "valid_to", "status", "kind")
    )
    for employee_pk, permit_id, lot, valid_from, valid_to, status, kind in rows:
        found[employee_pk].append(PermitFacts(permit_id, lot, valid_from, valid_to, status, kind))
    return found


class _Coverage(NamedTuple):
    by_van: dict[int, list[CoverageSpan]]
    by_site: dict[str, list[CoverageSpan]]  # "" = every site


def _coverage(van_pks: list[int], sites: set[str], audit_date: dt.date) -> _Coverage:
    by_van: dict[int, list[CoverageSpan]] = defaultdict(list)
    by_site: dict[str, list[CoverageSpan]] = defaultdict(list)
    rows = (
        DataCoverage.objects.filter(
            Q(vanpool_id__in=van_pks) | Q(vanpool__isnull=True, work_site__in=[*sites, ""])
        )
        .order_by("kind", "start", "end", "pk")
        .values_list("kind", "vanpool_id", "work_site", "start", "end")
    )
    for kind, vanpool_pk, site, start, end in rows:
        span = CoverageSpan(kind, start, end)
        if kind == Kind.PERMITS and not span.covers(audit_date):
            continue  # a permit list covers the days it was the whole list
        if vanpool_pk is not None:
            by_van[vanpool_pk].append(span)
        else:
            by_site[site].append(span)
    return _Coverage(by_van, by_site)


def _holidays(
    sites: set[str], start: dt.date, end: dt.date
) -> dict[str, list[tuple[dt.date, str]]]:
    found: dict[str, list[tuple[dt.date, str]]] = defaultdict(list)
    rows = Holiday.objects.filter(date__range=(start, end), work_site__in=[*sites, ""]).values_list(
        "work_site", "date", "name"
    )
    for site, date, name in rows:
        found[site].append((date, name))
    return found


def rides_json(rides: RiderRides) -> dict[str, Any]:
    """A rider's ride facts as plain JSON, for the trace and the input hash.

    Not the ride days and swipes themselves: the van's ``fingerprint`` stands for
    them in the hash, and the ridership evidence lists the days it counted.
    """
    return {
        "joined": rides.joined.isoformat() if rides.joined else None,
        "permits": [
            {
                "permit_id": permit.permit_id,
                "lot": permit.lot,
                "valid_from": permit.valid_from.isoformat(),
                "valid_to": permit.valid_to.isoformat() if permit.valid_to else None,
                "status": permit.status,
                "kind": permit.kind,
            }
            for permit in rides.permits
        ],
    }


def van_rides_json(rides: VanRides) -> dict[str, Any]:
    month = rides.month
    return {
        "holidays": [f"{day.isoformat()} {name}" for day, name in rides.holidays],
        "coverage": [
            f"{span.kind} {span.start or '…'}..{span.end or '…'}" for span in rides.coverage
        ],
        "parking_covered": rides.parking_covered,
        "ride_fingerprint": rides.fingerprint,
        "month": None
        if month is None
        else {
            "month": month.month.isoformat()[:7],
            "seats": month.seats,
            "vehicle_miles": month.vehicle_miles,
            "miles_per_trip": month.miles_per_trip,
            "commute_share": month.commute_share,
            "trips": month.trips,
            "passenger_trips": month.passenger_trips,
            "trip_days": month.trip_days,
            "ride_day_rows": month.ride_day_rows,
            "ride_day_dates": month.ride_day_dates,
        },
    }
