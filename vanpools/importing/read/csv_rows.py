"""A CSV export's rows: one kind per file, told by the header, which is checked first."""

import csv
import io

from vanpools.importing.columns import COLUMNS, REQUIRED, SHIFT_SCHEDULE_COLUMNS, accepted_names
from vanpools.importing.mapping.checks import did_you_mean
from vanpools.importing.mapping.recipes import used_keys
from vanpools.importing.mapping.spec import KindMapping
from vanpools.importing.read.context import Reading
from vanpools.importing.read.kind import kind_from_header, kind_of_names
from vanpools.importing.read.source_rows import mapped_row
from vanpools.importing.result import fail
from vanpools.importing.rows import Table


def csv_tables(text: str, *, kind: str | None, read: Reading) -> list[Table]:
    """The one table a CSV holds; ``kind`` names its rows when the header does not."""
    records = _csv_records(text)
    header = [name.strip() for name in records[0][1]]
    names = [name.lower() for name in header]
    if kind is None:
        kind = kind_of_names(names, read)
    if kind is None:
        kind_from_header(header)  # fails with the reason
    spec = read.spec(kind)
    if read.mapping is None and not any(name in COLUMNS[kind] for name in names):
        kind_from_header(header)  # fails with the reason
    table = Table(kind, [], missing_columns=_missing_columns(names, kind, spec))
    _check_header(header, kind, records[1:], read, table.missing_columns)
    for line, cells in records[1:]:
        if all(not cell.strip() for cell in cells):
            continue  # spreadsheets leave empty rows at the end
        if any(cell.strip() for cell in cells[len(names) :]):
            message = f"{len(cells)} cells, but the header has {len(names)} columns"
            read.error(f"line {line}", "", message)
        given = {name: cell for name, cell in zip(names, cells, strict=False) if cell.strip()}
        table.rows.append(mapped_row(kind, spec, given, f"line {line}", read))
    return [table]


def _csv_records(text: str) -> list[tuple[int, list[str]]]:
    # strict: an unclosed quote is an error, not a cell that swallows the rest of the file.
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records = []
    line = 1  # a record may span lines (quoted newlines): keep the line it starts on
    try:
        for cells in reader:
            records.append((line, cells))
            line = reader.line_num + 1
    except csv.Error as exc:
        fail(f"line {reader.line_num}", f"not readable as CSV: {exc}")
    return records


def _check_header(
    header: list[str],
    kind: str,
    records: list[tuple[int, list[str]]],
    read: Reading,
    missing: set[str],
) -> None:
    names = [name.lower() for name in header]
    spec = read.spec(kind)
    used = used_keys(spec, accepted_names(kind))
    unknown: dict[str, list[str]] = {}
    for index, name in enumerate(names):
        if not name:
            # Spreadsheets export trailing unnamed columns; only a filled one is a problem.
            if any(index < len(cells) and cells[index].strip() for _, cells in records):
                read.error("line 1", f"column {index + 1}", "has values but no name")
        elif names.index(name) != index:
            read.error("line 1", name, "the column appears twice")
        elif name not in used:
            # Unmapped, the name is ours (lower case); mapped, it is the export's, as written.
            unknown[name if read.mapping is None else header[index]] = ["line 1"]
    read.unknown_columns(kind, unknown)
    absent: set[str] = set()
    for column, recipe in spec.columns.items():
        for path in recipe.paths():
            # A CSV header may hold dots ("Emp. No."): the whole name first.
            if (
                path.strip().lower() not in names
                and path.split(".")[0].strip().lower() not in names
            ):
                hint = did_you_mean(path, [dict.fromkeys(header, "")])
                read.error(
                    "line 1",
                    path,
                    f"the mapping reads this column for {column}, "
                    f"but the file has no such column{hint}",
                )
                absent.add(column)
    for column in sorted(missing):
        if column == "schedule" and column not in REQUIRED[kind]:
            message = "the file needs a schedule, rotation or schedule_text column"
        else:
            message = "required column is missing"
        if read.mapping is not None:
            message += f" (map it in the mapping's [{kind}.columns])"
        read.error("line 1", column, message)
    missing |= absent  # reported above, not again on every row


def _missing_columns(names: list[str], kind: str, spec: KindMapping) -> set[str]:
    given = set(names) | set(spec.columns)
    missing = {column for column in REQUIRED[kind] if column not in given}
    if kind == "shifts" and not any(column in given for column in SHIFT_SCHEDULE_COLUMNS):
        missing.add("schedule")
    return missing
