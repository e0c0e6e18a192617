"""Preloaded facts: everything an audit needs, read in a fixed number of queries.

Specialists are pure functions of these frozen records (principle 3, "preload,
don't wander"): they never touch the database, so the same code judges a
vanpool from the database and a labelled case from an evaluation file.
"""

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.utils import timezone

from audit.ride_facts import (
    RiderRides,
    Seat,
    VanRides,
    load_rides,
    preload_rides,
    rides_json,
    van_rides_json,
)
from vanpools.geo import Point  # re-exported: facts are made of points
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool

__all__ = [
    "LeaveSpan",
    "Point",
    "RiderFacts",
    "ShiftFacts",
    "VanpoolFacts",
    "facts_json",
    "preload_vanpools",
]


@dataclass(frozen=True)
class ShiftFacts:
    shift_id: str
    name: str
    schedule: list[Any] | None = None  # weekly JSON as stored
    rotation: dict[str, Any] | None = None
    text: str = ""
    overnight: bool = False


@dataclass(frozen=True)
class LeaveSpan:
    start: dt.date
    end: dt.date
    kind: str = "pto"

    def covers(self, day: dt.date) -> bool:
        return self.start <= day <= self.end


@dataclass(frozen=True)
class RiderFacts:
    employee_id: str
    home_zip: str
    home: Point | None = None
    shift: ShiftFacts | None = None
    time_type: str = "full_time"
    status: str = "active"
    leave: tuple[LeaveSpan, ...] = ()
    home_zip_as_given: str = ""  # the roster's text, when a leading zero was restored
    # The seat's start, days aboard, badge swipes, parking permits.
    rides: RiderRides = field(default_factory=RiderRides)
    pk: int | None = None  # the Employee row, when the facts came from the database


@dataclass(frozen=True)
class VanpoolFacts:
    vanpool_id: str
    pk: int | None = None  # the Vanpool row, when the facts came from the database
    status: str = "active"
    work_site: str = ""
    pickup: Point | None = None
    pickup_zip: str = ""
    work_site_point: Point | None = None
    max_miles: float = 50
    schedule: list[Any] = field(default_factory=list)  # weekly JSON; empty → majority shift
    riders: tuple[RiderFacts, ...] = ()
    seats: int | None = None  # not counting the driver
    miles_per_trip: float | None = None
    rides: VanRides = field(default_factory=VanRides)  # holidays, data coverage, the judged month


def _point(lat: float | None, lng: float | None) -> Point | None:
    return Point(lat, lng) if lat is not None and lng is not None else None


def shift_facts(shift: Shift | None) -> ShiftFacts | None:
    if shift is None:
        return None
    return ShiftFacts(
        shift_id=shift.shift_id,
        name=shift.name,
        schedule=shift.schedule or None,
        rotation=shift.rotation or None,
        text=shift.schedule_text,
        overnight=shift.overnight,
    )


def rider_facts(employee: Employee) -> RiderFacts:
    return RiderFacts(
        employee_id=employee.employee_id,
        home_zip=employee.home_zip,
        home=_point(employee.home_lat, employee.home_lng),
        shift=shift_facts(employee.shift),
        time_type=employee.time_type,
        status=employee.status,
        leave=tuple(LeaveSpan(lv.start_date, lv.end_date, lv.kind) for lv in employee.leaves.all()),
        home_zip_as_given=employee.home_zip_as_given,
    )


def preload_vanpools(
    vanpool_ids: Iterable[str], audit_date: dt.date | None = None, *, rides: bool = True
) -> dict[str, VanpoolFacts]:
    """Facts for these vanpools and their active riders, in a fixed number of queries.

    Four for the roster, whatever the size, and ``preload_rides``'s for the
    ridership window, permits and month that ``audit_date`` (default today)
    sets. Without ``rides`` the riders' ride days and swipes are left for
    ``with_rides`` (their fingerprint is read): a bulk audit loads them only for
    the vanpools whose facts changed. Read as plain values, not model instances:
    a bulk audit preloads tens of thousands of riders, and building (and
    prefetch-wiring) a model object for each was most of an unchanged
    re-audit's time.
    """
    audit_date = audit_date or timezone.localdate()
    vanpools = list(
        Vanpool.objects.filter(vanpool_id__in=list(vanpool_ids)).values(*VANPOOL_FIELDS)
    )
    seats = list(
        Rider.objects.filter(
            vanpool_id__in=[van["pk"] for van in vanpools], status=Rider.Status.ACTIVE
        )
        .order_by("employee__employee_id")
        .values("vanpool_id", "joined", *(f"employee__{name}" for name in EMPLOYEE_FIELDS))
    )
    van_rides = preload_rides(
        vanpools,
        [Seat(seat["vanpool_id"], seat["employee__pk"], seat["joined"]) for seat in seats],
        audit_date,
        load=rides,
    )
    shifts = {
        shift["pk"]: _shift_facts(shift)
        for shift in Shift.objects.filter(
            pk__in={seat["employee__shift_id"] for seat in seats} - {None}
        ).values(*SHIFT_FIELDS)
    }
    leaves: dict[int, list[LeaveSpan]] = {}
    for employee_pk, start, end, kind in (
        Leave.objects.filter(employee_id__in=[seat["employee__pk"] for seat in seats])
        .order_by("start_date", "pk")
        .values_list("employee_id", "start_date", "end_date", "kind")
    ):
        leaves.setdefault(employee_pk, []).append(LeaveSpan(start, end, kind))
    riders: dict[int, list[RiderFacts]] = {}
    for seat in seats:
        rider_rides = van_rides[seat["vanpool_id"]].riders.get(seat["employee__pk"], RiderRides())
        riders.setdefault(seat["vanpool_id"], []).append(
            _rider_facts(seat, shifts, leaves, rider_rides)
        )
    return {
        van["vanpool_id"]: _vanpool_facts(
            van, tuple(riders.get(van["pk"], ())), van_rides[van["pk"]]
        )
        for van in vanpools
    }


def with_rides(facts: list[VanpoolFacts], audit_date: dt.date) -> list[VanpoolFacts]:
    """``facts`` with every rider's ride days and swipes read (two queries for all of them)."""
    waiting = {
        item.pk: item.rides for item in facts if item.pk is not None and not item.rides.loaded
    }
    if not waiting:
        return facts
    loaded = load_rides(waiting, audit_date)
    return [_with_loaded(item, loaded[item.pk]) if item.pk in loaded else item for item in facts]


def _with_loaded(facts: VanpoolFacts, rides: VanRides) -> VanpoolFacts:
    riders = tuple(
        replace(rider, rides=rides.riders.get(rider.pk, rider.rides)) if rider.pk else rider
        for rider in facts.riders
    )
    return replace(facts, riders=riders, rides=rides)


VANPOOL_FIELDS = (
    "pk", "vanpool_id", "status", "work_site", "pickup_lat", "pickup_lng", "pickup_zip",
    "work_site_lat", "work_site_lng", "max_commute_miles", "schedule", "seats", "miles_per_trip",
)  # fmt: skip
EMPLOYEE_FIELDS = (
    "pk", "employee_id", "home_zip", "home_lat", "home_lng", "shift_id", "time_type", "status",
    "home_zip_as_given",
)  # fmt: skip
SHIFT_FIELDS = ("pk", "shift_id", "name", "schedule", "rotation", "schedule_text", "overnight")


def _shift_facts(shift: dict[str, Any]) -> ShiftFacts:
    return ShiftFacts(
        shift_id=shift["shift_id"],
        name=shift["name"],
        schedule=shift["schedule"] or None,
        rotation=shift["rotation"] or None,
        text=shift["schedule_text"],
        overnight=shift["overnight"],
    )


def _rider_facts(
    seat: dict[str, Any],
    shifts: dict[int, ShiftFacts],
    leaves: dict[int, list[LeaveSpan]],
    rides: RiderRides,
) -> RiderFacts:
    return RiderFacts(
        employee_id=seat["employee__employee_id"],
        home_zip=seat["employee__home_zip"],
        home=_point(seat["employee__home_lat"], seat["employee__home_lng"]),
        shift=shifts.get(seat["employee__shift_id"]),
        time_type=seat["employee__time_type"],
        status=seat["employee__status"],
        leave=tuple(leaves.get(seat["employee__pk"], ())),
        home_zip_as_given=seat["employee__home_zip_as_given"],
        rides=rides,
        pk=seat["employee__pk"],
    )


def _vanpool_facts(
    van: dict[str, Any], riders: tuple[RiderFacts, ...], rides: VanRides
) -> VanpoolFacts:
    return VanpoolFacts(
        vanpool_id=van["vanpool_id"],
        pk=van["pk"],
        status=van["status"],
        work_site=van["work_site"],
        pickup=_point(van["pickup_lat"], van["pickup_lng"]),
        pickup_zip=van["pickup_zip"],
        work_site_point=_point(van["work_site_lat"], van["work_site_lng"]),
        max_miles=van["max_commute_miles"] or settings.DEFAULT_MAX_COMMUTE_MILES,
        schedule=list(van["schedule"] or []),
        riders=riders,
        seats=van["seats"],
        miles_per_trip=van["miles_per_trip"],
        rides=rides,
    )


def facts_json(facts: VanpoolFacts) -> dict[str, Any]:
    """The facts as plain JSON (dates as ISO strings), without the row's pk.

    Used for traces and for the audit's input hash, so two databases holding
    the same program hash the same. Built by hand: dataclasses.asdict deep-copies
    every schedule and was most of a bulk audit's time.
    """
    return {
        "vanpool_id": facts.vanpool_id,
        "status": facts.status,
        "work_site": facts.work_site,
        "pickup": _point_json(facts.pickup),
        "pickup_zip": facts.pickup_zip,
        "work_site_point": _point_json(facts.work_site_point),
        "max_miles": facts.max_miles,
        "schedule": facts.schedule,
        "riders": [_rider_json(rider) for rider in facts.riders],
        "seats": facts.seats,
        "miles_per_trip": facts.miles_per_trip,
        **van_rides_json(facts.rides),
    }


def _point_json(point: Point | None) -> dict[str, float] | None:
    return {"lat": point.lat, "lng": point.lng} if point else None


def _rider_json(rider: RiderFacts) -> dict[str, Any]:
    shift = rider.shift
    return {
        "employee_id": rider.employee_id,
        "home_zip": rider.home_zip,
        **({"home_zip_as_given": rider.home_zip_as_given} if rider.home_zip_as_given else {}),
        "home": _point_json(rider.home),
        "shift": None
        if shift is None
        else {
            "shift_id": shift.shift_id,
            "name": shift.name,
            "schedule": shift.schedule,
            "rotation": shift.rotation,
            "text": shift.text,
            "overnight": shift.overnight,
        },
        "time_type": rider.time_type,
        "status": rider.status,
        "leave": [
            {"start": span.start.isoformat(), "end": span.end.isoformat(), "kind": span.kind}
            for span in rider.leave
        ],
        **rides_json(rider.rides),
    }
