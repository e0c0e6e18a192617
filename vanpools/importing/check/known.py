"""The records a file's rows name, by ID: a handful of queries whatever the file's size."""

from collections.abc import Mapping
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models.functions import Lower

from vanpools.importing.rows import Table
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool


@dataclass
class Known:
    """Stored records by ID; the planners put the file's own shifts and vanpools over them."""

    shifts: dict[str, Shift]
    vanpools: dict[str, Vanpool]
    employees: dict[str, Employee]
    coordinators: dict[str, list[User]]  # staff users by lower-case email
    leaves: dict[int, list[Leave]]  # by employee pk
    seats: dict[int, Rider]  # active seat by employee pk


def load_known(tables: Mapping[str, Table]) -> Known:
    shift_keys = _keys(tables, "shifts", "shift_id") + _keys(tables, "employees", "shift_id")
    shifts = Shift.objects.in_bulk(shift_keys, field_name="shift_id")
    vanpool_keys = _keys(tables, "vanpools", "vanpool_id")
    vanpool_keys += _keys(tables, "employees", "vanpool_id")
    vanpools = Vanpool.objects.in_bulk(vanpool_keys, field_name="vanpool_id")
    employee_keys = _keys(tables, "employees", "employee_id")
    employees = Employee.objects.in_bulk(employee_keys, field_name="employee_id")
    coordinators = _staff_by_email(_keys(tables, "vanpools", "coordinator_email"))
    employee_pks = [employee.pk for employee in employees.values()]
    leaves: dict[int, list[Leave]] = {}
    for leave in Leave.objects.filter(employee_id__in=employee_pks):
        leaves.setdefault(leave.employee_id, []).append(leave)
    active = Rider.objects.filter(employee_id__in=employee_pks, status=Rider.Status.ACTIVE)
    seats = {rider.employee_id: rider for rider in active.select_related("vanpool")}
    return Known(shifts, vanpools, employees, coordinators, leaves, seats)


def _keys(tables: Mapping[str, Table], kind: str, column: str) -> list[str]:
    table = tables.get(kind)
    keys = set()
    for row in table.rows if table else []:
        value = row.cells.get(column)
        if isinstance(value, str | int) and not isinstance(value, bool):
            keys.add(str(value).strip())
    return sorted(keys)


def _staff_by_email(emails: list[str]) -> dict[str, list[User]]:
    if not emails:
        return {}
    users = (
        get_user_model()
        .objects.annotate(email_lower=Lower("email"))
        .filter(is_staff=True, email_lower__in=[email.lower() for email in emails])
    )
    by_email: dict[str, list[User]] = {}
    for user in users:
        by_email.setdefault(user.email_lower, []).append(user)
    return by_email
