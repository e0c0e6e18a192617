"""Preloaded facts: everything an audit needs, read in a fixed number of queries.

Specialists are pure functions of these frozen records (principle 3, "preload,
don't wander"): they never touch the database, so the same code judges a
vanpool from the database and a labelled case from an evaluation file.
"""

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

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


def preload_vanpools(vanpool_ids: Iterable[str]) -> dict[str, VanpoolFacts]:
    """Facts for these vanpools and their active riders, in four queries whatever the size.

    Read as plain values, not model instances: a bulk audit preloads tens of
    thousands of riders, and building (and prefetch-wiring) a model object for
    each was most of an unchanged re-audit's time.
    """
    vanpools = list(
        Vanpool.objects.filter(vanpool_id__in=list(vanpool_ids)).values(*VANPOOL_FIELDS)
    )
    seats = list(
        Rider.objects.filter(
            vanpool_id__in=[van["pk"] for van in vanpools], status=Rider.Status.ACTIVE
        )
        .order_by("employee__employee_id")
        .values("vanpool_id", *(f"employee__{name}" for name in EMPLOYEE_FIELDS))
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
        riders.setdefault(seat["vanpool_id"], []).append(_rider_facts(seat, shifts, leaves))
    return {
        van["vanpool_id"]: _vanpool_facts(van, tuple(riders.get(van["pk"], ()))) for van in vanpools
    }


VANPOOL_FIELDS = (
    "pk", "vanpool_id", "status", "work_site", "pickup_lat", "pickup_lng", "pickup_zip",
    "work_site_lat", "work_site_lng", "max_commute_miles", "schedule",
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
    seat: dict[str, Any], shifts: dict[int, ShiftFacts], leaves: dict[int, list[LeaveSpan]]
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
    )


def _vanpool_facts(van: dict[str, Any], riders: tuple[RiderFacts, ...]) -> VanpoolFacts:
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
    }
