"""The write stage: apply a checked file's plans, kind by kind, in the import's transaction.

Only what differs from the stored rows is written (a plan lists it), so
importing the same file twice writes nothing the second time. Every write of
the importer is here, and each is recorded in the records' history: saves and
deletes through simple-history's signals, bulk writes (which send no signal)
through ``bulk_create_recorded`` and ``bulk_update_recorded``. Employees,
seats and leave are written in bulk: a history row per save would double an
import of thousands of changed employees (docs/performance.md#roster-import).
"""

from collections import defaultdict
from collections.abc import Callable
from typing import cast

from django.utils import timezone

from vanpools.history import bulk_create_recorded, bulk_update_recorded
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
    """Write the new and changed employees, then their seats and leave, in bulk."""
    for plan in plans:
        if plan.shift is not None:
            cast(Employee, plan.instance).shift = plan.shift  # saved above: it has a pk
    # New rows get their pks back (SQLite ≥ 3.35, PostgreSQL): seats and leave name them.
    bulk_create_recorded(Employee, [cast(Employee, p.instance) for p in plans if p.created])
    # One bulk update per set of changed fields: each writes only what its rows changed.
    by_fields: dict[tuple[str, ...], list[Employee]] = defaultdict(list)
    for plan in plans:
        if plan.changed and not plan.created:
            by_fields[tuple(sorted(plan.changed))].append(cast(Employee, plan.instance))
    for fields, employees in by_fields.items():
        bulk_update_recorded(Employee, employees, fields)
    _write_seats(plans, known)
    _write_leaves(plans)


def _write_seats(plans: list[Plan], known: Known) -> None:
    given_up, retimed, new_seats = [], [], []
    for plan in plans:
        seat = plan.seat
        if seat is None:
            continue
        assert seat.joined is not None  # _seat_change dates every seat it plans
        if seat.leave is not None:
            seat.leave.status = Rider.Status.CANCELLED
            seat.leave.cancelled_at = timezone.now()
            seat.leave.cancel_reason = f"moved to {seat.vanpool_key} by roster import"
            given_up.append(seat.leave)
        if seat.retime is not None:
            seat.retime.joined = seat.joined
            retimed.append(seat.retime)
        if seat.vanpool_key is not None:
            vanpool = known.vanpools[seat.vanpool_key]
            employee = cast(Employee, plan.instance)
            new_seats.append(Rider(vanpool=vanpool, employee=employee, joined=seat.joined))
    # Cancelled before the new seats exist: one active seat per employee.
    bulk_update_recorded(Rider, given_up, ["status", "cancelled_at", "cancel_reason"])
    bulk_update_recorded(Rider, retimed, ["joined"])
    bulk_create_recorded(Rider, new_seats)


def _write_leaves(plans: list[Plan]) -> None:
    stale = [leave.pk for plan in plans for leave in plan.leaves_to_delete]
    if stale:
        # A queryset delete sends each row's post_delete: the history records every one.
        Leave.objects.filter(pk__in=stale).delete()
    new = []
    for plan in plans:
        for leave in plan.leaves_to_create:
            leave.employee = cast(Employee, plan.instance)
            new.append(leave)
    bulk_create_recorded(Leave, new)


# One writer per kind; write_plans runs them in KINDS order.
WRITERS: dict[str, Callable[[list[Plan], Known], None]] = {
    "shifts": write_records,
    "vanpools": write_records,
    "employees": write_employees,
}
