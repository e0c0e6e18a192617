"""Preloaded facts: everything an audit needs, read in a fixed number of queries.

Specialists are pure functions of these frozen records (principle 3, "preload,
don't wander"): they never touch the database, so the same code judges a
vanpool from the database and a labelled case from an evaluation file.
"""

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Prefetch

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
    schedule: list | None = None  # weekly JSON as stored
    rotation: dict | None = None
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
    schedule: list = field(default_factory=list)  # weekly JSON; empty → majority shift
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


def vanpool_facts(vanpool: Vanpool) -> VanpoolFacts:
    return VanpoolFacts(
        vanpool_id=vanpool.vanpool_id,
        pk=vanpool.pk,
        status=vanpool.status,
        work_site=vanpool.work_site,
        pickup=_point(vanpool.pickup_lat, vanpool.pickup_lng),
        pickup_zip=vanpool.pickup_zip,
        work_site_point=_point(vanpool.work_site_lat, vanpool.work_site_lng),
        max_miles=vanpool.effective_max_miles,
        schedule=list(vanpool.schedule or []),
        # `active_riders` is preload_vanpools' Prefetch(to_attr=...), which the stubs cannot see.
        riders=tuple(rider_facts(rider.employee) for rider in vanpool.active_riders),  # type: ignore[attr-defined]
    )


def preload_vanpools(vanpool_ids: Iterable[str]) -> dict[str, VanpoolFacts]:
    """Facts for these vanpools and their active riders, in four queries whatever the size."""
    active_riders = Prefetch(
        "riders",
        queryset=Rider.objects.filter(status=Rider.Status.ACTIVE)
        .select_related("employee__shift")
        .prefetch_related(
            Prefetch("employee__leaves", queryset=Leave.objects.order_by("start_date"))
        )
        .order_by("employee__employee_id"),
        to_attr="active_riders",
    )
    vanpools = Vanpool.objects.filter(vanpool_id__in=list(vanpool_ids)).prefetch_related(
        active_riders
    )
    return {vanpool.vanpool_id: vanpool_facts(vanpool) for vanpool in vanpools}


def facts_json(facts: VanpoolFacts) -> dict:
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


def _point_json(point: Point | None) -> dict | None:
    return {"lat": point.lat, "lng": point.lng} if point else None


def _rider_json(rider: RiderFacts) -> dict:
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
