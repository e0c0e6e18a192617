"""Planning an employee row: the shared checks, then its shift, seat and leave."""

from datetime import date
from typing import Any

from vanpools.geo import zip_as_given
from vanpools.importing.cells import text
from vanpools.importing.check.context import Checking
from vanpools.importing.check.plans import Plan, SeatChange
from vanpools.importing.check.rows import apply_values, claim_id, parse_row, validate_row
from vanpools.importing.columns import LEAVE_COLUMNS
from vanpools.importing.rows import Row
from vanpools.models import Employee, Leave, Shift


def plan_employee(checking: Checking, row: Row, first_error: int) -> Plan | None:
    values = parse_row(checking, row, "employees")
    if "home_zip" in values:
        values["home_zip_as_given"] = zip_as_given(text(row.cells["home_zip"]))
    if _gives_second_seat(checking, row, values):
        return None
    key = claim_id(checking, row, "employees", values)
    if key is None:
        return None
    if row.partial and key not in checking.known.employees:
        message = f"no employee '{key}' in this file or already stored"
        checking.error(row, "employee_id", message)
        return None
    employee = checking.known.employees.get(key) or Employee(employee_id=key)
    plan = apply_values(row, employee, "employees", values)
    if "shift_id" in values:
        plan.shift = _shift_change(checking, row, employee, values["shift_id"])
        if plan.shift is not None:
            plan.changed.add("shift")
    plan.seat = _seat_change(checking, row, employee, values)
    for column, kind in LEAVE_COLUMNS.items():
        if column in values:
            _plan_leaves(checking, plan, kind, values[column])
    validate_row(checking, row, employee, "employees", first_error)
    return plan


def _gives_second_seat(checking: Checking, row: Row, values: dict[str, Any]) -> bool:
    first = checking.seen["employees"].get(values.get("employee_id", ""))
    seat = values.get("vanpool_id")
    if first is None or seat is None:
        return False
    first_seat = str(first.cells.get("vanpool_id", "")).strip()
    if not first_seat or first_seat == seat:
        return False
    message = f"given two seats: {first_seat} on {first.where} and {seat} here"
    checking.error(row, "vanpool_id", message)
    return True


def _shift_change(checking: Checking, row: Row, employee: Employee, key: str) -> Shift | None:
    shift = checking.known.shifts.get(key)
    if shift is None:
        checking.error(row, "shift_id", f"no shift '{key}' in this file or already stored")
        return None
    if shift.pk is not None and shift.pk == employee.shift_id:
        return None
    return shift


def _seat_change(
    checking: Checking, row: Row, employee: Employee, values: dict[str, Any]
) -> SeatChange | None:
    key, joined = values.get("vanpool_id"), values.get("joined")
    if key is None:
        if joined is not None:
            checking.error(row, "joined", "joined is when a seat started: give vanpool_id too")
        return None
    if key not in checking.known.vanpools:
        checking.error(row, "vanpool_id", f"no vanpool '{key}' in this file or already stored")
        return None
    current = checking.known.seats.get(employee.pk) if employee.pk else None
    if current is None or current.vanpool.vanpool_id != key:
        return SeatChange(vanpool_key=key, joined=joined or checking.today, leave=current)
    if joined is not None and joined != current.joined:
        return SeatChange(joined=joined, retime=current)
    return None


def _plan_leaves(checking: Checking, plan: Plan, kind: str, wanted: set[tuple[date, date]]) -> None:
    """Replace by difference, so kept spans keep their notes and ids."""
    stored = checking.known.leaves.get(plan.instance.pk, [])
    stored = [leave for leave in stored if leave.kind == kind]
    have = {(leave.start_date, leave.end_date) for leave in stored}
    plan.leaves_to_delete += [
        leave for leave in stored if (leave.start_date, leave.end_date) not in wanted
    ]
    plan.leaves_to_create += [
        Leave(kind=kind, start_date=start, end_date=end) for start, end in sorted(wanted - have)
    ]
