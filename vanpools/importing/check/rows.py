"""The checks every kind's rows share: cells, required columns, one row per ID, model rules."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from vanpools.importing.cells import CellError, shown, stored_weekly
from vanpools.importing.check.context import Checking
from vanpools.importing.check.plans import Plan
from vanpools.importing.columns import (
    COLUMNS,
    COORDINATE_PAIRS,
    ID_COLUMNS,
    RELATED_COLUMNS,
    REQUIRED,
)
from vanpools.importing.rows import Row
from vanpools.schedules import ScheduleError, parse_rotation, parse_weekly


def parse_row(checking: Checking, row: Row, kind: str) -> dict[str, Any]:
    """Each given cell read by its column's reader; the required and paired ones present."""
    values = {}
    for column, parse in COLUMNS[kind].items():
        if column in row.cells:
            try:
                values[column] = parse(row.cells[column])
            except CellError as exc:
                checking.error(row, column, str(exc))
    missing_reported = checking.reported_missing(kind)
    for column in REQUIRED[kind] if not row.partial else ():
        if column not in row.cells and column not in {*row.failed, *missing_reported}:
            checking.error(row, column, "a value is required")
    for lat, lng in COORDINATE_PAIRS[kind]:
        if {lat, lng} & {*row.failed, *missing_reported}:
            continue  # one of the pair is already reported
        if (lat in row.cells) != (lng in row.cells):
            checking.error(row, lng if lat in row.cells else lat, f"give {lat} and {lng} together")
    return values


def claim_id(checking: Checking, row: Row, kind: str, values: dict[str, Any]) -> str | None:
    """The row's ID, unless it is missing or an earlier row has it."""
    key = values.get(ID_COLUMNS[kind])
    if not key:
        return None
    first = checking.seen[kind].get(key)
    if first is not None:
        checking.error(row, ID_COLUMNS[kind], f"'{key}' is already on {first.where}")
        return None
    checking.seen[kind][key] = row
    return str(key)


def apply_values(row: Row, instance: models.Model, kind: str, values: dict[str, Any]) -> Plan:
    """Set the row's own fields on the instance; plan the write of those that differ."""
    before = {}
    for name, value in values.items():
        if name in RELATED_COLUMNS[kind]:
            continue
        stored = getattr(instance, name)
        if _canonical(name, stored) != value:
            setattr(instance, name, value)
            before[name] = stored
    return Plan(instance, instance.pk is None, set(before), where=row.where, before=before)


def validate_row(
    checking: Checking, row: Row, instance: models.Model, kind: str, first_error: int
) -> None:
    """The model's own rules (ID formats, lengths, ranges, emails, schedules)."""
    given = {name for name in row.cells if name not in RELATED_COLUMNS[kind]}
    # Fields the row did not give are not its fault; uniqueness is what upsert handles,
    # and the constraint and foreign key checks would cost a query per row.
    exclude = [f.name for f in instance._meta.concrete_fields if f.name not in given]
    try:
        instance.full_clean(exclude=exclude, validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        reported = {error.field for error in checking.errors[first_error:]}
        # Columns the mapping could not make are reported already, once.
        reported |= {*row.failed, *checking.reported_missing(kind)}
        for name, messages in exc.message_dict.items():
            column = "" if name == "__all__" else name
            if column in reported:
                continue  # the cell's own error already says what is wrong
            for message in messages:
                raw = row.cells.get(name)
                checking.error(row, column, _with_value(message, raw) + _id_hint(name, raw))


def _canonical(name: str, stored: object) -> object:
    """Stored JSON in the shape the parsers produce, so equal schedules compare equal."""
    try:
        if name == "schedule":
            return stored_weekly(parse_weekly(stored))
        if name == "rotation" and stored is not None:
            return parse_rotation(stored).model_dump(mode="json")
    except ScheduleError:
        pass  # stored data the import would not accept: any given value differs
    return stored


ID_PREFIXES = {"employee_id": "EMP-", "vanpool_id": "VP-"}


def _id_hint(column: str, raw: object) -> str:
    """Another system's IDs are often bare numbers: say how a mapping turns them into ours."""
    if column in ID_PREFIXES and str(raw).strip().isdigit():
        return f'; a mapping\'s format = "{ID_PREFIXES[column]}{{}}" prefixes IDs kept as numbers'
    return ""


def _with_value(message: str, raw: object) -> str:
    """Django's field messages don't quote the value; HR needs to see which one."""
    if raw is None or isinstance(raw, list | dict) or len(str(raw)) > 60:
        return message
    return f"{message.rstrip('.')} (got {shown(raw)})"
