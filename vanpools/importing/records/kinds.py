"""The record kinds a file may hold, their columns and how each cell is read.

docs/roster-format.md ("Ride, permit and monthly records") is the contract. A
column is one entry here; ``build`` turns a row's cells into a record.
"""

from collections.abc import Callable
from typing import Any

from vanpools.importing.cells import CellError, iso_date, number, shown, text, whole_number
from vanpools.importing.records.cells import clock, id_list, month, share, timestamp

RECORD_KINDS: tuple[str, ...] = (
    "trips", "ride_days", "badge_swipes", "permits", "vanpool_months", "holidays",
)  # fmt: skip


def one_of(*values: str) -> Callable[[object], str]:
    def parse(raw: object) -> str:
        value = text(raw).lower().replace(" ", "_").replace("-", "_")
        if value not in values:
            raise CellError(f"{shown(raw)} is not one of {', '.join(values)}")
        return value

    return parse


COLUMNS: dict[str, dict[str, Callable[[object], Any]]] = {
    "trips": {
        "trip_id": text,
        "vanpool_id": text,
        "date": iso_date,
        "direction": one_of("to_work", "from_work"),
        "driver_id": text,
        "passengers": id_list,
        "passenger_count": whole_number,
        "miles": number,
    },
    "ride_days": {"employee_id": text, "date": iso_date, "vanpool_id": text},
    "badge_swipes": {
        "employee_id": text,
        "swiped_at": timestamp,
        "date": iso_date,
        "time": clock,
        "site": text,
        "gate": text,
        "direction": one_of("in", "out"),
    },
    "permits": {
        "permit_id": text,
        "employee_id": text,
        "lot": text,
        "valid_from": iso_date,
        "valid_to": iso_date,
        "status": one_of("active", "returned", "revoked"),
        "kind": one_of("standard", "vanpool"),
    },
    "vanpool_months": {
        "vanpool_id": text,
        "month": month,
        "seats": whole_number,
        "odometer_miles": number,
        "odometer_start": number,
        "odometer_end": number,
        "miles_per_trip": number,
        "commute_share": share,
    },
    "holidays": {"date": iso_date, "name": text, "work_site": text},
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "trips": ("vanpool_id", "date"),
    "ride_days": ("employee_id", "date"),
    "badge_swipes": ("employee_id",),  # and swiped_at, or date and time
    "permits": ("permit_id", "employee_id", "lot", "valid_from"),
    "vanpool_months": ("vanpool_id", "month"),
    "holidays": ("date", "name"),
}
# Columns no roster kind has: a header holding one is a record file.
SIGNATURES: dict[str, tuple[str, ...]] = {
    "trips": ("trip_id", "passengers", "passenger_count", "driver_id"),
    "badge_swipes": ("swiped_at", "gate"),
    "permits": ("permit_id", "valid_from"),
    "vanpool_months": ("month", "odometer_miles", "odometer_end", "commute_share"),
    "holidays": ("name",),
    "ride_days": ("date",),
}
# Where the ride records' dates are (the others have their own).
DATE_COLUMNS = ("date", "valid_from", "valid_to", "month")


def kind_of_header(names: list[str]) -> str | None:
    """The record kind a header names, or None (a roster file, or nothing known)."""
    given = set(names)
    for kind in ("trips", "badge_swipes", "permits", "vanpool_months"):
        if given & set(SIGNATURES[kind]):
            return kind
    if "date" in given and "employee_id" in given:
        return "ride_days"
    if {"date", "name"} <= given and not given & {"employee_id", "vanpool_id", "shift_id"}:
        return "holidays"
    return None
