"""A vanpool's rider list: its riders' seats, as employee rows give them.

Run after reading every table, before checking: the list's seats and whole
records become rows of the employees table, so the check stage sees one
shape whatever the export's.
"""

from typing import cast

from vanpools.importing.columns import COLUMNS, REQUIRED, accepted_names
from vanpools.importing.mapping.checks import unmatched_rider_keys
from vanpools.importing.mapping.recipes import used_keys
from vanpools.importing.mapping.riders import Seat, record_keys, seats_from_riders
from vanpools.importing.mapping.spec import RIDERS
from vanpools.importing.read.context import Reading, suggest
from vanpools.importing.read.source_rows import mapped_row
from vanpools.importing.result import plural
from vanpools.importing.rows import Row, Table, cell_text


def seat_riders(tables: list[Table], read: Reading) -> list[Table]:
    """A vanpool's ``riders`` become its riders' ``vanpool_id``, as an employee row gives it.

    An employee row in the file takes the seat (an other seat given there is an
    error); an employee only on the list gets a seat-only row, which needs the
    employee stored already. A list of whole employee records (a vanpool tool
    that keeps its riders inside each vanpool) gives employee rows, read as
    the employees' own rows are (through the mapping's [employees], if any).
    """
    by_kind = {table.kind: table for table in tables}
    vanpools = by_kind.get("vanpools")
    if vanpools is None or all(row.riders is None for row in vanpools.rows):
        return tables
    employees = by_kind.get("employees") or Table(
        "employees", [], where=f"{vanpools.where}[*].{RIDERS}", sources=[]
    )
    rows = {cell_text(row, "employee_id"): row for row in employees.rows}
    recipe = read.spec("vanpools").columns.get(RIDERS)
    records = record_keys(read.spec("employees"), accepted_names("employees"))
    unknown: dict[str, list[str]] = {}
    ignored: dict[str, list[str]] = {}
    given: list[object] = []
    for vanpool in vanpools.rows:
        vanpool_id = cell_text(vanpool, "vanpool_id")
        if vanpool.riders is None or not vanpool_id:
            continue
        given += vanpool.riders if isinstance(vanpool.riders, list) else []
        seats, problems = seats_from_riders(vanpool.riders, recipe, records)
        for place, message in problems:
            read.error(vanpool.where, place, message)
        for seat in seats:
            where = f"{vanpool.where}.{seat.where}"
            for key in seat.ignored:
                ignored.setdefault(key, []).append(where)
            if seat.record is not None:
                record = _record_row(seat, where, read, unknown, records)
                rows.setdefault(seat.employee_id, record)
                employees.rows.append(record)  # a second row for one ID: planning says so
                if employees.sources is not None:
                    employees.sources.append(seat.record)
                _seat(record, vanpool, vanpool_id, seat, read)
                continue
            row = rows.get(seat.employee_id)
            if row is None:
                row = Row(where, {"employee_id": seat.employee_id}, partial=True)
                rows[seat.employee_id] = row
                employees.rows.append(row)
            _seat(row, vanpool, vanpool_id, seat, read)
    read.unknown_columns("employees", unknown)
    _ignored_rider_keys(ignored, read)
    for found in unmatched_rider_keys(recipe, given):
        hint = found.hint or (
            f"; if the export leaves out keys with no value, remove {found.column} "
            "from the mapping for this file"
        )
        message = f"no rider object of {vanpools.where} has this key{hint}"
        read.error(vanpools.where, f"{found.column} = '{found.path}'", message)
    if "employees" not in by_kind and employees.rows:
        tables = [*tables, employees]
    return tables


def _ignored_rider_keys(ignored: dict[str, list[str]], read: Reading) -> None:
    """A seat object's own keys (``participant_id``): named once; unmapped, an error."""
    if not ignored:
        return
    if read.mapping is not None:
        names = ", ".join(sorted(ignored, key=str.lower))
        read.warnings.append(
            f"vanpools: ignored {plural(len(ignored), 'key')} of rider objects "
            f"the mapping does not use: {names}"
        )
        return
    for key, places in ignored.items():
        rows = f" (in {plural(len(places), 'rider')})" if len(places) > 1 else ""
        read.error(
            places[0],
            key,
            f"unknown key in a rider object{rows}"
            + (
                suggest(key, COLUMNS["employees"])
                or "; a seat gives employee_id and joined (a whole record, the employee's "
                "columns); a mapping file (--mapping) can ignore it"
            ),
        )


def _record_row(
    seat: Seat, where: str, read: Reading, unknown: dict[str, list[str]], records: set[str]
) -> Row:
    record = cast(dict[str, object], seat.record)
    spec = read.spec("employees")
    used = used_keys(spec, accepted_names("employees")) | {"id", "joined"}
    for key in record:
        if str(key).strip().lower() not in used:
            unknown.setdefault(str(key), []).append(where)
    row = mapped_row("employees", spec, record, where, read)
    row.cells.setdefault("employee_id", seat.employee_id)
    lacking = [c for c in REQUIRED["employees"] if c not in row.cells and c not in row.failed]
    if lacking:
        # Say once why the object was read as a record, not "a value is required" per column.
        holds = ", ".join(str(key) for key in record if str(key).strip().lower() in records)
        read.error(
            where,
            "",
            f"read as the employee's whole record because it holds {holds}, but it has no "
            f"{', '.join(lacking)}: give all of them, or only the ID and joined to seat an "
            "employee already stored",
        )
        row.failed.update(lacking)
    return row


def _seat(row: Row, vanpool: Row, vanpool_id: str, seat: Seat, read: Reading) -> None:
    """Give the row the vanpool's seat, unless it names another."""
    where = f"{vanpool.where}.{seat.where}"
    given = cell_text(row, "vanpool_id")
    if given and given != vanpool_id:
        by = row.sources.get("vanpool_id") or row.where
        read.error(vanpool.where, seat.where, f"{seat.employee_id} is seated on {given} by {by}")
        return
    row.cells["vanpool_id"] = vanpool_id
    if row.where != where:
        row.sources["vanpool_id"] = where
    if seat.joined is not None and "joined" not in row.cells:
        row.cells["joined"] = seat.joined
        if row.where != where:
            row.sources["joined"] = where
