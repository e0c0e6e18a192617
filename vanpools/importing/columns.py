"""The roster's columns per kind (docs/roster-format.md, "Columns"): what a file may hold.

The read stage accepts these names (and reports the rest); the check stage
reads each cell with its reader and requires the required ones. A new column
is one entry here (and its reader in ``cells``); a new kind is one entry in
each table.
"""

from collections.abc import Callable
from typing import Any

from vanpools.importing.cells import (
    boolean,
    choice,
    coordinate,
    iso_date,
    leave_spans,
    one_vanpool,
    rotation,
    text,
    weekly,
    whole_number,
    zip_code,
)
from vanpools.importing.mapping.spec import RIDERS
from vanpools.models import Employee, Leave, Vanpool

KINDS: tuple[str, ...] = ("shifts", "vanpools", "employees")  # also the order rows are applied

COLUMNS: dict[str, dict[str, Callable[[object], Any]]] = {
    "shifts": {
        "shift_id": text,
        "name": text,
        "schedule": weekly,
        "rotation": rotation,
        "schedule_text": text,
        "overnight": boolean,
    },
    "vanpools": {
        "vanpool_id": text,
        "name": text,
        "work_site": text,
        "work_site_address": text,
        "work_site_lat": coordinate("lat"),
        "work_site_lng": coordinate("lng"),
        "pickup_address": text,
        "pickup_zip": zip_code,
        "pickup_lat": coordinate("lat"),
        "pickup_lng": coordinate("lng"),
        "capacity": whole_number,
        "status": choice(Vanpool.Status),
        "coordinator_email": text,
        "schedule": weekly,
        "max_commute_miles": whole_number,
    },
    "employees": {
        "employee_id": text,
        "first_name": text,
        "last_name": text,
        "email": text,
        "title": text,
        "work_site": text,
        "home_address": text,
        "home_zip": zip_code,
        "home_lat": coordinate("lat"),
        "home_lng": coordinate("lng"),
        "status": choice(Employee.Status),
        "time_type": choice(Employee.TimeType),
        "shift_id": text,
        "vanpool_id": one_vanpool,
        "joined": iso_date,
        "pto": leave_spans,
        "leave": leave_spans,
    },
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "shifts": ("shift_id", "name"),
    "vanpools": ("vanpool_id", "name", "work_site"),
    "employees": ("employee_id", "first_name", "last_name", "email", "work_site", "home_zip"),
}
ID_COLUMNS = {"shifts": "shift_id", "vanpools": "vanpool_id", "employees": "employee_id"}
# Columns that are not a field of the row's own model; the planners handle them.
RELATED_COLUMNS: dict[str, set[str]] = {
    "shifts": set(),
    "vanpools": {"coordinator_email"},
    "employees": {"shift_id", "vanpool_id", "joined", "pto", "leave"},
}
COORDINATE_PAIRS: dict[str, tuple[tuple[str, str], ...]] = {
    "shifts": (),
    "vanpools": (("work_site_lat", "work_site_lng"), ("pickup_lat", "pickup_lng")),
    "employees": (("home_lat", "home_lng"),),
}
# Names a row may use for a point object (``"pickup": {"lat": …, "lng": …}``).
POINTS: dict[str, tuple[str, ...]] = {
    kind: tuple(lat.removesuffix("_lat") for lat, _ in pairs)
    for kind, pairs in COORDINATE_PAIRS.items()
}
SHIFT_SCHEDULE_COLUMNS = ("schedule", "rotation", "schedule_text")
LEAVE_COLUMNS = {"pto": Leave.Kind.PTO, "leave": Leave.Kind.LEAVE}


def accepted_names(kind: str) -> list[str]:
    """Every name a row of the kind may hold: its columns, point objects and a rider list."""
    extra = [RIDERS] if kind == "vanpools" else []
    return [*COLUMNS[kind], *POINTS[kind], *extra]
