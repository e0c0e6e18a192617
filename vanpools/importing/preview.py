"""The preview stage: what a checked file does, in words: counts, first changes, warnings.

Worked out from the plans (the file over what is stored) before anything is
written, so a dry run, a preview with refused rows and an import all report
the same changes.
"""

import json
from typing import cast

from django.db import models

from vanpools.importing.check.planning import Planned
from vanpools.importing.check.plans import Plan
from vanpools.importing.columns import KINDS
from vanpools.importing.read.context import Reading
from vanpools.importing.result import DIFFERENCES_SHOWN, OUTCOMES, ImportResult, plural
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool
from vanpools.schedules import ScheduleError, format_compact_weekly, parse_weekly


def preview(planned: Planned, kinds: list[str], read: Reading, *, dry_run: bool) -> ImportResult:
    """What the plans do; ``kinds`` are the file's, ``read`` holds the read stage's warnings."""
    return ImportResult(
        counts=counts(planned),
        kinds=kinds,
        dry_run=dry_run,
        source=read.source,
        refused=planned.refused,
        differences=differences(planned),
        warnings=read.warnings + warnings(planned),
    )


def counts(planned: Planned) -> dict[str, dict[str, int]]:
    """Per kind, how many rows are created, updated and unchanged."""
    counted = {kind: dict.fromkeys(OUTCOMES, 0) for kind in KINDS}
    for kind, plans in planned.plans.items():
        for plan in plans:
            counted[kind][plan.outcome] += 1
    return counted


def differences(planned: Planned) -> dict[str, list[str]]:
    """Per kind, one line per row that would be created or changed, in file order."""
    return {
        kind: [_difference(plan) for plan in plans if plan.outcome != "unchanged"]
        for kind, plans in planned.plans.items()
    }


def warnings(planned: Planned) -> list[str]:
    """Seats the audit will skip and rows that look incomplete: legal, but worth a look.

    One query counts the stored vanpools' riders.
    """
    off_service, no_seat = [], []
    for plan in planned.plans["employees"]:
        employee = cast(Employee, plan.instance)
        vanpool = _seat_after(planned, plan)
        if vanpool is None:
            if employee.status == Employee.Status.ACTIVE:
                no_seat.append(employee.employee_id)
        elif vanpool.status != Vanpool.Status.ACTIVE:
            off_service.append(f"{employee.employee_id} on {vanpool.vanpool_id} ({vanpool.status})")
    found = []
    if off_service:
        found.append(
            f"{plural(len(off_service), 'rider')} seated on a vanpool that is not active "
            f"(the audit skips them): {_first(off_service)}"
        )
    if no_seat:
        found.append(f"{plural(len(no_seat), 'active employee')} with no seat: {_first(no_seat)}")
    empty = _vanpools_without_riders(planned)
    if empty:
        found.append(f"{plural(len(empty), 'active vanpool')} with no riders: {_first(empty)}")
    return found


def _seat_after(planned: Planned, plan: Plan) -> Vanpool | None:
    seat = plan.seat
    if seat is not None and seat.vanpool_key is not None:
        return planned.known.vanpools[seat.vanpool_key]
    current = planned.known.seats.get(plan.instance.pk) if plan.instance.pk else None
    return current.vanpool if current is not None else None


def _vanpools_without_riders(planned: Planned) -> list[str]:
    vanpools = [cast(Vanpool, plan.instance) for plan in planned.plans["vanpools"]]
    stored = [vanpool.pk for vanpool in vanpools if vanpool.pk]
    riders = dict(
        Rider.objects.filter(vanpool_id__in=stored, status=Rider.Status.ACTIVE)
        .values_list("vanpool_id")
        .annotate(count=models.Count("pk"))
        .values_list("vanpool_id", "count")
    )
    by_key = {vanpool.vanpool_id: riders.get(vanpool.pk, 0) for vanpool in vanpools}
    for plan in planned.plans["employees"]:
        seat = plan.seat
        if seat is not None and seat.vanpool_key in by_key:
            by_key[seat.vanpool_key] += 1
        if seat is not None and seat.leave is not None:
            left = seat.leave.vanpool.vanpool_id
            if left in by_key:
                by_key[left] -= 1
    return [
        vanpool.vanpool_id
        for vanpool in vanpools
        if vanpool.status == Vanpool.Status.ACTIVE and by_key[vanpool.vanpool_id] <= 0
    ]


def _first(items: list[str], shown: int = DIFFERENCES_SHOWN) -> str:
    more = f", … and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _difference(plan: Plan) -> str:
    """``EMP-1003: home_zip 94538 → 94536; seat VP-101 → VP-102`` (or ``…: new``)."""
    instance = plan.instance
    key = str(getattr(instance, ID_FIELDS[type(instance)]))
    if plan.created:
        parts = ["new"]
    else:
        parts = [
            f"{name} {_value_text(plan.before[name])} → {_value_text(_planned(plan, name))}"
            if name in plan.before
            else f"{name} → {_value_text(_planned(plan, name))}"
            for name in sorted(plan.changed)
        ]
    seat = plan.seat
    if seat is not None and seat.vanpool_key is not None:
        left = f"{seat.leave.vanpool.vanpool_id} → " if seat.leave is not None else ""
        parts.append(f"seat {left}{seat.vanpool_key}")
    elif seat is not None and seat.retime is not None:
        parts.append(f"seat joined {seat.retime.joined} → {seat.joined}")
    for kind, label in ((Leave.Kind.PTO, "pto"), (Leave.Kind.LEAVE, "leave")):
        added = sum(leave.kind == kind for leave in plan.leaves_to_create)
        dropped = sum(leave.kind == kind for leave in plan.leaves_to_delete)
        if added or dropped:
            parts.append(f"{label} +{added} −{dropped}")
    return f"{key}: " + "; ".join(parts)


# How a preview names a record: by the ID the file gives.
ID_FIELDS: dict[type[models.Model], str] = {
    Shift: "shift_id",
    Vanpool: "vanpool_id",
    Employee: "employee_id",
}


def _planned(plan: Plan, name: str) -> object:
    """A changed field's new value: set on the instance, but an employee's shift on the plan
    (the write sets it once a new shift is saved)."""
    if name == "shift":
        return plan.shift.shift_id if plan.shift else ""
    if name == "coordinator":
        coordinator = cast(Vanpool, plan.instance).coordinator
        return coordinator.email if coordinator else ""
    return getattr(plan.instance, name)


def _value_text(value: object) -> str:
    """A stored value as a person reads it: schedules compact, long text cut."""
    if value is None or value == "":
        return "(blank)"
    if isinstance(value, list):
        try:
            return format_compact_weekly(parse_weekly(value))
        except ScheduleError:
            pass
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:39] + "…"
