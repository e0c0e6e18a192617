"""The write stage: apply a checked file's plans, kind by kind, in the import's transaction.

Only what differs from the stored rows is written (a plan lists it), so
importing the same file twice writes nothing the second time. Every write of
the importer is here.
"""

from collections.abc import Callable
from typing import cast

from django.utils import timezone

from vanpools.importing.check.known import Known
from vanpools.importing.check.planning import Planned
from vanpools.importing.check.plans import Plan
from vanpools.importing.columns import KINDS
from vanpools.models import Employee, Leave, Rider


def write_plans(planned: Planned) -> None:
    """Each kind's writes in KINDS order: the shifts and vanpools employees name come first."""
    for kind in KINDS:
        WRITERS[kind](planned.plans[kind], planned.known)


def write_records(plans: list[Plan], known: Known) -> None:
    """Save each new or changed record (shifts, vanpools)."""
    for plan in plans:
        if plan.created or plan.changed:
            plan.instance.save()


def write_employees(plans: list[Plan], known: Known) -> None:
    """Save each new or changed employee, then their seats and leave in bulk."""
    for plan in plans:
        if plan.shift is not None:
            cast(Employee, plan.instance).shift = plan.shift  # saved above: it has a pk
        if plan.created or plan.changed:
            plan.instance.save()
    _write_seats(plans, known)
    _write_leaves(plans)


def _write_seats(plans: list[Plan], known: Known) -> None:
    new_seats = []
    for plan in plans:
        seat = plan.seat
        if seat is None:
            continue
        assert seat.joined is not None  # _seat_change dates every seat it plans
        if seat.leave is not None:
            # Cancelled before the new seat exists: one active seat per employee.
            seat.leave.status = Rider.Status.CANCELLED
            seat.leave.cancelled_at = timezone.now()
            seat.leave.cancel_reason = f"moved to {seat.vanpool_key} by roster import"
            seat.leave.save(update_fields=["status", "cancelled_at", "cancel_reason"])
        if seat.retime is not None:
            seat.retime.joined = seat.joined
            seat.retime.save(update_fields=["joined"])
        if seat.vanpool_key is not None:
            vanpool = known.vanpools[seat.vanpool_key]
            employee = cast(Employee, plan.instance)
            new_seats.append(Rider(vanpool=vanpool, employee=employee, joined=seat.joined))
    Rider.objects.bulk_create(new_seats)


def _write_leaves(plans: list[Plan]) -> None:
    stale = [leave.pk for plan in plans for leave in plan.leaves_to_delete]
    if stale:
        Leave.objects.filter(pk__in=stale).delete()
    new = []
    for plan in plans:
        for leave in plan.leaves_to_create:
            leave.employee = cast(Employee, plan.instance)
            new.append(leave)
    Leave.objects.bulk_create(new)


# One writer per kind; write_plans runs them in KINDS order.
WRITERS: dict[str, Callable[[list[Plan], Known], None]] = {
    "shifts": write_records,
    "vanpools": write_records,
    "employees": write_employees,
}
