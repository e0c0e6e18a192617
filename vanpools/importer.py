"""Roster import: HR's shifts, vanpools and employees, upserted by ID.

docs/roster-format.md is the contract. It runs in two
passes. The first parses every row and checks it against the rest of the file
and the database, collecting all errors, so HR can fix a file in one go. Only
a file without errors is written, in one transaction: a bad export changes
nothing. Each row is compared with what is stored and only differences are
written, which makes re-sending the same file a no-op.
"""

import csv
import difflib
import io
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, NoReturn, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models.functions import Lower
from django.utils import timezone

from vanpools.geo import clean_zip, parse_coordinate, zip_as_given
from vanpools.hr_text import read_day_blocks
from vanpools.mapping import (
    MISSING,
    RIDERS,
    KindMapping,
    MappingError,
    RosterMapping,
    Seat,
    load_mapping,
    lookup,
    map_row,
    record_keys,
    seats_from_riders,
    typo_distance,
    used_keys,
)
from vanpools.mapping_checks import did_you_mean, unmatched_paths, unmatched_rider_keys
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool
from vanpools.schedules import (
    DaySpan,
    ScheduleError,
    format_compact_weekly,
    parse_compact_weekly,
    parse_rotation,
    parse_weekly,
)

KINDS: tuple[str, ...] = ("shifts", "vanpools", "employees")  # also the order rows are applied
OUTCOMES: tuple[str, ...] = ("created", "updated", "unchanged")


@dataclass
class RowError:
    """One problem in the file: where (``line 7`` / ``employees[3]``), column, reason."""

    where: str
    field: str
    message: str

    def __str__(self) -> str:
        if self.field:
            return f"{self.where}, {self.field}: {self.message}"
        return f"{self.where}: {self.message}"


class ImportFailed(Exception):
    """The file has errors; nothing was written. ``errors`` lists every one.

    A dry run also carries its ``preview``: what the rows without errors would do.
    """

    def __init__(self, errors: list[RowError], preview: "ImportResult | None" = None) -> None:
        self.errors = errors
        self.preview = preview
        super().__init__(f"{_plural(len(errors), 'error')}; nothing was imported.")


DIFFERENCES_SHOWN = 5  # per kind: a preview shows the first few, then how many more


@dataclass
class ImportResult:
    """What the import did (or, in a dry run, would do) per kind of row."""

    counts: dict[str, dict[str, int]]
    kinds: list[str] = field(default_factory=list)  # kinds the file held, in import order
    dry_run: bool = False
    source: str = ""
    refused: dict[str, int] = field(default_factory=dict)  # rows with errors, per kind
    # Per kind: "EMP-1003: home_zip 94538 → 94536", for the first rows that change.
    differences: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        if not self.kinds:
            lines = ["the file has no rows"]
        else:
            refused = self.dry_run or any(self.refused.values())
            header = f"{'':<10}{'created':>9}{'updated':>9}{'unchanged':>11}"
            lines = [header + (f"{'refused':>9}" if refused else "")]
            for kind in self.kinds:
                count = self.counts[kind]
                line = (
                    f"{kind:<10}{count['created']:>9}{count['updated']:>9}{count['unchanged']:>11}"
                )
                lines.append(line + (f"{self.refused.get(kind, 0):>9}" if refused else ""))
        if self.dry_run:
            lines += self.difference_lines()
        lines += [f"warning: {warning}" for warning in self.warnings]
        if self.dry_run:
            lines.append("dry run: nothing was saved")
        return lines

    def difference_lines(self) -> list[str]:
        lines = []
        for kind in self.kinds:
            changes = self.differences.get(kind, [])
            if not changes:
                continue
            lines.append(f"{kind}, first changes:")
            lines += [f"  {change}" for change in changes[:DIFFERENCES_SHOWN]]
            if len(changes) > DIFFERENCES_SHOWN:
                lines.append(f"  … and {len(changes) - DIFFERENCES_SHOWN} more")
        return lines


def import_data(
    data: dict[str, Any] | list[Any],
    *,
    dry_run: bool = False,
    source: str = "",
    mapping: RosterMapping | None = None,
) -> ImportResult:
    """Import rows in docs/roster-format.md's JSON shape (decoded), or any shape a mapping reads."""
    read = _Read(source or "data", mapping)
    tables = _json_tables(data, kind=None, read=read)
    return _import(tables, read, dry_run=dry_run)


def import_file(
    path: Path | str,
    *,
    kind: str | None = None,
    dry_run: bool = False,
    mapping: RosterMapping | Path | str | None = None,
) -> ImportResult:
    """Import a .json or .csv export; ``kind`` names a CSV's (or a JSON list's) rows.

    ``mapping`` (a RosterMapping or a mapping file's path) says which source
    column feeds which roster column; see docs/roster-format.md.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    path = Path(path)
    source = str(path)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".csv"):
        _fail(source, f"cannot read {suffix or 'extension-less'} files: save it as CSV or JSON")
    read = _Read(source, read_mapping(mapping))
    text = _read_text(path)
    if suffix == ".json":
        tables = _json_tables(_decode_json(text), kind=kind, read=read)
    else:
        tables = _csv_tables(text, kind=kind, read=read)
    return _import(tables, read, dry_run=dry_run)


def read_mapping(mapping: RosterMapping | Path | str | None) -> RosterMapping | None:
    """A mapping as given, or read from its file; a bad file is an ImportFailed."""
    if mapping is None or isinstance(mapping, RosterMapping):
        return mapping
    try:
        return load_mapping(mapping, {kind: _accepted_names(kind) for kind in KINDS})
    except MappingError as exc:
        _fail(exc.where, str(exc))


def _import(tables: list["_Table"], read: "_Read", *, dry_run: bool) -> ImportResult:
    tables = _seat_riders(tables, read)
    _check_paths(tables, read)
    run = _Run(tables, read.errors)
    run.plan()
    kinds = [table.kind for table in tables]
    if run.errors:
        preview = None
        if dry_run:
            preview = ImportResult(
                run.counts(),
                kinds,
                dry_run=True,
                source=read.source,
                refused=run.refused,
                differences=run.differences(),
                warnings=read.warnings + run.warnings(),
            )
        raise ImportFailed(run.errors, preview=preview)
    with transaction.atomic():
        run.write()
        warnings = read.warnings + run.warnings()
        if dry_run:
            transaction.set_rollback(True)
    return ImportResult(
        counts=run.counts(),
        kinds=kinds,
        dry_run=dry_run,
        source=read.source,
        refused=run.refused,
        differences=run.differences(),
        warnings=warnings,
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _fail(where: str, message: str) -> NoReturn:
    raise ImportFailed([RowError(where, "", message)])


# Reading files --------------------------------------------------------------


@dataclass
class _Row:
    where: str
    cells: dict[str, object]  # only the given cells: blank means "not given"
    # Mapped files: the source column or path each cell came from, for messages.
    sources: dict[str, str] = field(default_factory=dict)
    # A seat from a vanpool's rider list: only employee_id and the seat are given,
    # so the employee must exist and nothing else of them changes.
    partial: bool = False
    riders: object = None  # vanpools: the rider list as given, if any
    # Columns a mapping could not make (its error is already listed): not "missing" too.
    failed: set[str] = field(default_factory=set)

    def column(self, name: str) -> str:
        """How messages name a column: with its source when a mapping renamed it."""
        source = self.sources.get(name)
        return f"{name} (from {source})" if source and source.lower() != name else name


@dataclass
class _Table:
    kind: str
    rows: list[_Row]
    # Columns whose absence the header check already reported, so rows don't repeat it.
    missing_columns: set[str] = field(default_factory=set)
    # JSON: where the rows are, and the rows as given, to check the mapping's paths against.
    where: str = ""
    sources: list[object] | None = None


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        _fail(str(path), "no such file")
    except OSError as exc:
        _fail(str(path), f"cannot read the file: {exc.strerror or exc}")
    try:
        text = raw.decode("utf-8-sig")  # Excel's "CSV UTF-8" starts with a BOM
    except UnicodeDecodeError as exc:
        _fail(str(path), f"not UTF-8 text (byte {exc.start + 1}); save it as CSV UTF-8")
    if not text.strip():
        _fail(str(path), "the file is empty")
    return text


def _decode_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(f"line {exc.lineno}", f"not valid JSON: {exc.msg} (column {exc.colno})")


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


@dataclass
class _Read:
    """What reading the file found besides rows: errors, and warnings about what it skipped."""

    source: str
    mapping: RosterMapping | None
    errors: list[RowError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def spec(self, kind: str) -> KindMapping:
        found = self.mapping.for_kind(kind) if self.mapping else None
        return found or KindMapping()

    def error(self, where: str, column: str, message: str) -> None:
        self.errors.append(RowError(where, column, message))

    def unknown_columns(self, kind: str, unknown: dict[str, list[str]]) -> None:
        """Columns the roster has no place for: one line for all rows, not one per row.

        With a mapping they are ignored (HR exports carry level, manager, cost
        centre…); without one they are errors, as a typo would lose data.
        """
        if not unknown:
            return
        if self.mapping is not None:
            names = ", ".join(sorted(unknown, key=str.lower))
            self.warnings.append(
                f"{kind}: ignored {_plural(len(unknown), 'column')} the mapping does not use: "
                f"{names}"
            )
            return
        for column, places in unknown.items():
            rows = f" (in {_plural(len(places), 'row')})" if len(places) > 1 else ""
            hint = "" if _suggest(column, COLUMNS[kind]) else MAPPING_HINT
            self.error(places[0], column, _unknown_column(column, kind) + rows + hint)


MAPPING_HINT = "; a mapping file (--mapping) can map it to a roster column or ignore it"


def _json_tables(data: object, *, kind: str | None, read: _Read) -> list[_Table]:
    sections = _json_sections(data, kind, read)
    tables = []
    for name, (path, rows) in sections.items():
        if not isinstance(rows, list):
            read.error(path, "", f"expected a list of rows, found {_type_name(rows)}")
            continue
        tables.append(_Table(name, _json_rows(name, path, rows, read), where=path, sources=[*rows]))
    return tables


def _check_paths(tables: list[_Table], read: _Read) -> None:
    """A mapped path that no JSON row holds is an error, as a CSV column the file lacks is."""
    for table in tables:
        if table.sources is None or read.mapping is None:
            continue
        for found in unmatched_paths(read.spec(table.kind), table.sources):
            # No near miss: perhaps the export leaves out a key no row fills this time.
            hint = found.hint or (
                f"; if the export leaves out keys with no value, remove {found.column} "
                "from the mapping for this file"
            )
            message = (
                f"the mapping reads this path for {found.column}, "
                f"but no row of {table.where} has it{hint}"
            )
            read.error(table.where, found.path, message)
            table.missing_columns.add(found.column)  # reported here, not again on every row
            # Nor what the rows made of the path's absence (a schedule's days with no hours).
            labels = {(row.where, row.column(found.column)) for row in table.rows}
            read.errors[:] = [e for e in read.errors if (e.where, e.field) not in labels]


def _json_sections(data: object, kind: str | None, read: _Read) -> dict[str, tuple[str, object]]:
    """Each kind's rows: (where they are, the rows), from a mapping's paths or the sections."""
    located: dict[str, tuple[str, object]] = {}
    for name in KINDS:
        path = read.spec(name).rows
        if path is None:
            continue
        rows = lookup(data, path)
        if rows is MISSING:
            read.error(read.source, name, f"the mapping's rows = '{path}' is not in the file")
        else:
            located[name] = (path, rows)
    if isinstance(data, list):
        if not located:
            detected = kind or _kind_from_rows(data, read)
            located[detected] = (detected, data)
    elif isinstance(data, dict):
        used = {path.split(".")[0].strip().lower() for path, _ in located.values()}
        ignored: list[str] = []
        for key, value in data.items():
            name = str(key).strip().lower()
            if name in KINDS and name not in located:
                located[name] = (name, value)
            elif name not in used and name not in KINDS:
                ignored.append(str(key))
        _unknown_sections(ignored, read)
    else:
        _fail(read.source, "expected an object with shifts, vanpools and/or employees, or a list")
    if kind is not None and set(located) - {kind}:
        others = ", ".join(sorted(set(located) - {kind}))
        _fail(read.source, f"the file also holds {others}; leave out --kind to import all of it")
    return {name: located[name] for name in KINDS if name in located}


def _unknown_sections(keys: list[str], read: _Read) -> None:
    if keys and read.mapping is not None:
        read.warnings.append(
            f"ignored {_plural(len(keys), 'top-level key')} the mapping reads no rows from: "
            + ", ".join(keys)
        )
    elif read.mapping is None:
        for key in keys:
            read.error(read.source, key, "unknown section" + _suggest(key, KINDS))


def _type_name(value: object) -> str:
    return {dict: "an object", str: "text", type(None): "null"}.get(type(value), "a value")


LAT_KEYS, LNG_KEYS = ("lat", "latitude"), ("lng", "lon", "long", "longitude")
# Names a row may use for a point object or a rider list, besides the roster's columns.
POINTS: dict[str, tuple[str, ...]] = {
    kind: tuple(lat.removesuffix("_lat") for lat, _ in pairs)
    for kind, pairs in {
        "shifts": (),
        "vanpools": (("work_site_lat", "work_site_lng"), ("pickup_lat", "pickup_lng")),
        "employees": (("home_lat", "home_lng"),),
    }.items()
}


def _flat_coordinates(
    kind: str, row: dict, where: str, errors: list[RowError]
) -> dict[str, object]:
    """``"pickup": {"lat": 37.5, "lng": -122.0}`` → ``pickup_lat``, ``pickup_lng``.

    Other tools keep a point as one object; the columns are a pair. Only a
    key whose ``_lat``/``_lng`` pair exists is read so; anything else in the
    object is an error that shows the expected shape.
    """
    flat: dict[str, object] = {}
    for key, value in row.items():
        name = str(key)
        if not (isinstance(value, dict) and f"{name}_lat" in COLUMNS[kind]):
            flat[key] = value
            continue
        given = {str(k).lower(): v for k, v in value.items()}
        lat = next((given[k] for k in LAT_KEYS if k in given), None)
        lng = next((given[k] for k in LNG_KEYS if k in given), None)
        unknown = sorted(set(given) - set(LAT_KEYS) - set(LNG_KEYS))
        if unknown or lat is None or lng is None:
            found = json.dumps(value)[:80]
            expected = f'{{"lat": 37.59, "lng": -122.02}} (or {name}_lat and {name}_lng columns)'
            errors.append(RowError(where, name, f"found {found}; expected {expected}"))
            continue
        flat[f"{name}_lat"], flat[f"{name}_lng"] = lat, lng
    return flat


def _kind_from_rows(rows: list[object], read: _Read) -> str:
    """What a bare JSON list holds, from its rows' keys, as a CSV's kind from its header.

    A list of vanpools or of shifts used to be read as employees (and every
    row refused) unless ``--kind`` was given.
    """
    keys = {str(key).strip().lower() for row in rows[:50] if isinstance(row, dict) for key in row}
    if not keys:
        _fail(read.source, "expected a list of rows, each an object of column: value")
    kind = _kind_of_names(sorted(keys), read)
    if kind is None:
        _fail(
            read.source,
            "no employee_id, vanpool_id or shift_id key in the rows: cannot tell whether they "
            "are employees, vanpools or shifts (give --kind)",
        )
    return kind


def _kind_of_names(names: list[str], read: _Read) -> str | None:
    """The kind whose ID column (or the mapping's source for it) is among the names."""
    mapped = [kind for kind in KINDS if read.mapping and read.mapping.for_kind(kind)]
    if len(mapped) == 1:
        return mapped[0]
    for kind in ("employees", "vanpools", "shifts"):
        recipe = read.spec(kind).columns.get(ID_COLUMNS[kind])
        sources = [path.split(".")[0].lower() for path in recipe.paths()] if recipe else []
        if ID_COLUMNS[kind] in names or any(source in names for source in sources):
            return kind
    return None


def _json_rows(kind: str, path: str, rows: list[object], read: _Read) -> list[_Row]:
    spec = read.spec(kind)
    names = _accepted_names(kind)
    used = used_keys(spec, names)
    unknown: dict[str, list[str]] = {}
    parsed = []
    for index, row in enumerate(rows):
        where = f"{path}[{index}]"
        if not isinstance(row, dict):
            read.error(where, "", "expected an object of column: value")
            continue
        for key in row:
            if str(key).strip().lower() not in used:
                unknown.setdefault(str(key), []).append(where)
        parsed.append(_mapped_row(kind, spec, row, where, read))
    read.unknown_columns(kind, unknown)
    return parsed


def _accepted_names(kind: str) -> list[str]:
    extra = [RIDERS] if kind == "vanpools" else []
    return [*COLUMNS[kind], *POINTS[kind], *extra]


def _mapped_row(kind: str, spec: KindMapping, row: dict, where: str, read: _Read) -> _Row:
    mapped = map_row(spec, kind, row, _accepted_names(kind))
    parsed = _Row(where, {}, sources=mapped.sources)
    for column, message in mapped.problems:
        read.error(where, parsed.column(column), message)
        parsed.failed.add(column)
    cells = _flat_coordinates(kind, mapped.cells, where, read.errors)
    parsed.riders = cells.pop(RIDERS, None)
    parsed.cells = {k: v for k, v in cells.items() if k in COLUMNS[kind] and not _is_blank(v)}
    return parsed


def _csv_tables(text: str, *, kind: str | None, read: _Read) -> list[_Table]:
    records = _csv_records(text)
    header = [name.strip() for name in records[0][1]]
    names = [name.lower() for name in header]
    if kind is None:
        kind = _kind_of_names(names, read)
    if kind is None:
        _kind_from_header(header)  # fails with the reason
    spec = read.spec(kind)
    if read.mapping is None and not any(name in COLUMNS[kind] for name in names):
        _kind_from_header(header)  # fails with the reason
    table = _Table(kind, [], missing_columns=_missing_columns(names, kind, spec))
    _check_header(header, kind, records[1:], read, table.missing_columns)
    for line, cells in records[1:]:
        if all(not cell.strip() for cell in cells):
            continue  # spreadsheets leave empty rows at the end
        if any(cell.strip() for cell in cells[len(names) :]):
            message = f"{len(cells)} cells, but the header has {len(names)} columns"
            read.error(f"line {line}", "", message)
        given = {name: cell for name, cell in zip(names, cells, strict=False) if cell.strip()}
        table.rows.append(_mapped_row(kind, spec, given, f"line {line}", read))
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
        _fail(f"line {reader.line_num}", f"not readable as CSV: {exc}")
    return records


def _kind_from_header(header: list[str]) -> NoReturn:
    """Fail with the reason no kind could be told from a header."""
    names = [name.lower() for name in header]
    if not any(name in COLUMNS[kind] for name in names for kind in KINDS):
        message = "the first line must be the header row naming the columns"
        shown = ", ".join(name for name in header[:5] if name)
        if shown:
            more = ", …" if len(header) > 5 else ""
            message += (
                f"; none of {shown}{more} is a roster column: another system's export needs "
                "a mapping file (--mapping) naming which of its columns feeds which"
            )
        _fail("line 1", message)
    _fail("line 1", "no employee_id, vanpool_id or shift_id column: cannot tell what the rows are")


def _check_header(
    header: list[str],
    kind: str,
    records: list[tuple[int, list[str]]],
    read: _Read,
    missing: set[str],
) -> None:
    names = [name.lower() for name in header]
    spec = read.spec(kind)
    used = used_keys(spec, _accepted_names(kind))
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


def _unknown_column(name: object, kind: str) -> str:
    return "unknown column" + _suggest(str(name), COLUMNS[kind])


def _suggest(name: object, known: Iterable[str]) -> str:
    """A "did you mean" only for what looks like a slip of the keys.

    difflib alone calls ``level`` (an HR export's grade column) close to
    ``leave``, which sent administrators renaming the wrong column. A hint is
    given for one typo (two in a long name: a letter dropped, added, changed
    or two swapped) or for the known name with a part added or cut
    (``home_zipcode`` → ``home_zip``).
    """
    given = str(name).strip().lower()
    for candidate in difflib.get_close_matches(given, list(known), n=3):
        if typo_distance(given, candidate) <= (1 if len(candidate) <= 6 else 2) or (
            min(len(given), len(candidate)) >= 5
            and (given.startswith(candidate) or candidate.startswith(given))
        ):
            return f"; did you mean {candidate}?"
    return ""


# Reading cells --------------------------------------------------------------


class _CellError(ValueError):
    """One cell's value is wrong; the message is shown after its row and column."""


def _shown(raw: object) -> str:
    return f"'{raw.strip()}'" if isinstance(raw, str) else json.dumps(raw)


def _text(raw: object) -> str:
    if isinstance(raw, str):
        return raw.strip()
    if isinstance(raw, int) and not isinstance(raw, bool):
        return str(raw)  # a JSON number where text is expected, e.g. a ZIP
    raise _CellError(f"expected text, got {_shown(raw)}")


def _zip(raw: object) -> str:
    value = clean_zip(_text(raw))  # a spreadsheet read 01810 as the number 1810
    if value is None:
        raise _CellError(f"{_shown(raw)} is not a US ZIP code (5 digits, or ZIP+4 like 02139-4307)")
    return value


def _coordinate(axis: str) -> Callable[[object], float]:
    def parse(raw: object) -> float:
        try:
            return parse_coordinate(raw, axis)
        except ValueError as error:
            raise _CellError(str(error)) from None

    return parse


def _whole_number(raw: object) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and re.fullmatch(r"[+-]?[0-9]+", raw.strip()):
        return int(raw)
    raise _CellError(f"{_shown(raw)} is not a whole number")


_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


def _boolean(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    value = str(raw).strip().lower() if isinstance(raw, str | int) else ""
    if value in _TRUE | _FALSE:
        return value in _TRUE
    raise _CellError(f"{_shown(raw)} is not true or false")


def _date(raw: object) -> date:
    value = _text(raw)
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise _CellError(f"'{value}' is not a date (YYYY-MM-DD)")


def _choice(choices: type[models.TextChoices]) -> Callable[[object], str]:
    def parse(raw: object) -> str:
        value = _text(raw).lower().replace(" ", "_").replace("-", "_")
        if value not in choices.values:
            raise _CellError(f"{_shown(raw)} is not one of {', '.join(choices.values)}")
        return value

    return parse


def _json_cell(raw: object) -> object:
    """A JSON value: as given in a JSON file, or written as JSON text in a CSV cell."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _CellError(f"not valid JSON: {exc.msg} (character {exc.pos + 1})") from None


def _stored_weekly(spans: list[DaySpan]) -> list[dict[str, str]]:
    return [{"day": span.day, "start": span.start, "end": span.end} for span in spans]


def _weekly(raw: object) -> list[dict[str, str]]:
    try:
        if isinstance(raw, str) and not raw.lstrip().startswith(("[", "{")):
            spans = parse_compact_weekly(raw)
        else:
            spans = _weekly_data(_json_cell(raw))
    except ScheduleError as exc:
        raise _CellError(str(exc)) from None
    return _stored_weekly(spans)


def _weekly_data(value: object) -> list[DaySpan]:
    """A row per day (the stored shape), or day blocks as scheduling tools keep them."""
    if isinstance(value, list) and all(
        isinstance(item, dict) and "day" in item and "days" not in item for item in value
    ):
        return parse_weekly(value)
    return read_day_blocks(value)


def _rotation(raw: object) -> dict[str, Any]:
    try:
        return parse_rotation(_json_cell(raw)).model_dump(mode="json")
    except ScheduleError as exc:
        raise _CellError(str(exc)) from None


def _leave_spans(raw: object) -> set[tuple[date, date]]:
    """``2026-12-01..2026-12-05; 2026-12-24`` (or a JSON list of such strings)."""
    items = raw.split(";") if isinstance(raw, str) else raw
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise _CellError("expected dates or ranges like 2026-12-01..2026-12-05, separated by ;")
    spans = set()
    for item in (item.strip() for item in items):
        if not item:
            continue
        first, separator, last = item.partition("..")
        try:
            start = _date(first)
            end = _date(last) if separator else start
        except _CellError as exc:
            raise _CellError(str(exc) + _separator_hint(item)) from None
        if end < start:
            raise _CellError(f"'{item}' ends before it starts")
        spans.add((start, end))
    return spans


ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _separator_hint(item: str) -> str:
    """Several dates in one item were listed with another separator than ``;``."""
    dates = ISO_DATE.findall(item)
    if len(dates) < 2 or ".." in item:
        return ""
    return (
        f"; dates are separated by ';', as in '{'; '.join(dates)}' "
        f"(a range is written {dates[0]}..{dates[1]})"
    )


def _one_vanpool(raw: object) -> str:
    value = _text(raw)
    if re.search(r"[,;\s]", value):
        raise _CellError(f"an employee has one seat; got '{value}'")
    return value


COLUMNS: dict[str, dict[str, Callable[[object], Any]]] = {
    "shifts": {
        "shift_id": _text,
        "name": _text,
        "schedule": _weekly,
        "rotation": _rotation,
        "schedule_text": _text,
        "overnight": _boolean,
    },
    "vanpools": {
        "vanpool_id": _text,
        "name": _text,
        "work_site": _text,
        "work_site_address": _text,
        "work_site_lat": _coordinate("lat"),
        "work_site_lng": _coordinate("lng"),
        "pickup_address": _text,
        "pickup_zip": _zip,
        "pickup_lat": _coordinate("lat"),
        "pickup_lng": _coordinate("lng"),
        "capacity": _whole_number,
        "status": _choice(Vanpool.Status),
        "coordinator_email": _text,
        "schedule": _weekly,
        "max_commute_miles": _whole_number,
    },
    "employees": {
        "employee_id": _text,
        "first_name": _text,
        "last_name": _text,
        "email": _text,
        "title": _text,
        "work_site": _text,
        "home_address": _text,
        "home_zip": _zip,
        "home_lat": _coordinate("lat"),
        "home_lng": _coordinate("lng"),
        "status": _choice(Employee.Status),
        "time_type": _choice(Employee.TimeType),
        "shift_id": _text,
        "vanpool_id": _one_vanpool,
        "joined": _date,
        "pto": _leave_spans,
        "leave": _leave_spans,
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
SHIFT_SCHEDULE_COLUMNS = ("schedule", "rotation", "schedule_text")
LEAVE_COLUMNS = {"pto": Leave.Kind.PTO, "leave": Leave.Kind.LEAVE}


def _canonical(name: str, stored: object) -> object:
    """Stored JSON in the shape the parsers produce, so equal schedules compare equal."""
    try:
        if name == "schedule":
            return _stored_weekly(parse_weekly(stored))
        if name == "rotation" and stored is not None:
            return parse_rotation(stored).model_dump(mode="json")
    except ScheduleError:
        pass  # stored data the import would not accept: any given value differs
    return stored


# Planning and writing -------------------------------------------------------


@dataclass
class _SeatChange:
    vanpool_key: str | None = None  # take a new seat in this vanpool
    joined: date | None = None
    leave: Rider | None = None  # the active seat given up for the new one
    retime: Rider | None = None  # the same seat, with a corrected start date


@dataclass
class _Plan:
    instance: models.Model
    created: bool
    changed: set[str]
    where: str = ""  # the row it came from
    before: dict[str, object] = field(default_factory=dict)  # changed fields' stored values
    shift: Shift | None = None  # employees: set once the shift itself is saved
    seat: _SeatChange | None = None
    leaves_to_delete: list[Leave] = field(default_factory=list)
    leaves_to_create: list[Leave] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        if self.created:
            return "created"
        dirty = self.changed or self.seat or self.leaves_to_delete or self.leaves_to_create
        return "updated" if dirty else "unchanged"


class _Run:
    """One import: plan() checks every row and decides each write; write() applies them."""

    def __init__(self, tables: list[_Table], errors: list[RowError]) -> None:
        self.tables = {table.kind: table for table in tables}
        self.errors = list(errors)
        self.plans: dict[str, list[_Plan]] = {kind: [] for kind in KINDS}
        self.seen: dict[str, dict[str, _Row]] = {kind: {} for kind in KINDS}
        # Shifts and vanpools by ID: stored ones, then the file's rows over them.
        self.shifts: dict[str, Shift] = {}
        self.vanpools: dict[str, Vanpool] = {}
        self.employees: dict[str, Employee] = {}
        self.coordinators: dict[str, list[User]] = {}
        self.leaves: dict[int, list[Leave]] = {}  # by employee pk
        self.seats: dict[int, Rider] = {}  # active seat by employee pk
        self.refused: dict[str, int] = dict.fromkeys(KINDS, 0)
        self.today = timezone.localdate()

    # Prefetch: a handful of queries whatever the file's size.

    def _keys(self, kind: str, column: str) -> list[str]:
        table = self.tables.get(kind)
        keys = set()
        for row in table.rows if table else []:
            value = row.cells.get(column)
            if isinstance(value, str | int) and not isinstance(value, bool):
                keys.add(str(value).strip())
        return sorted(keys)

    def _prefetch(self) -> None:
        shift_keys = self._keys("shifts", "shift_id") + self._keys("employees", "shift_id")
        self.shifts = Shift.objects.in_bulk(shift_keys, field_name="shift_id")
        vanpool_keys = self._keys("vanpools", "vanpool_id") + self._keys("employees", "vanpool_id")
        self.vanpools = Vanpool.objects.in_bulk(vanpool_keys, field_name="vanpool_id")
        employee_keys = self._keys("employees", "employee_id")
        self.employees = Employee.objects.in_bulk(employee_keys, field_name="employee_id")
        self.coordinators = self._staff_by_email(self._keys("vanpools", "coordinator_email"))
        employee_pks = [employee.pk for employee in self.employees.values()]
        for leave in Leave.objects.filter(employee_id__in=employee_pks):
            self.leaves.setdefault(leave.employee_id, []).append(leave)
        active = Rider.objects.filter(employee_id__in=employee_pks, status=Rider.Status.ACTIVE)
        self.seats = {rider.employee_id: rider for rider in active.select_related("vanpool")}

    def _staff_by_email(self, emails: list[str]) -> dict[str, list[User]]:
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

    # Checks shared by all kinds.

    def _error(self, row: _Row, column: str, message: str) -> None:
        self.errors.append(RowError(row.where, row.column(column) if column else "", message))

    def _parse(self, row: _Row, kind: str) -> dict[str, Any]:
        values = {}
        for column, parse in COLUMNS[kind].items():
            if column in row.cells:
                try:
                    values[column] = parse(row.cells[column])
                except _CellError as exc:
                    self._error(row, column, str(exc))
        missing_reported = self.tables[kind].missing_columns
        for column in REQUIRED[kind] if not row.partial else ():
            if column not in row.cells and column not in {*row.failed, *missing_reported}:
                self._error(row, column, "a value is required")
        if kind == "employees" and "home_zip" in values:
            values["home_zip_as_given"] = zip_as_given(_text(row.cells["home_zip"]))
        for lat, lng in COORDINATE_PAIRS[kind]:
            if {lat, lng} & {*row.failed, *missing_reported}:
                continue  # one of the pair is already reported
            if (lat in row.cells) != (lng in row.cells):
                self._error(row, lng if lat in row.cells else lat, f"give {lat} and {lng} together")
        return values

    def _claim(self, row: _Row, kind: str, values: dict[str, Any]) -> str | None:
        """The row's ID, unless it is missing or an earlier row has it."""
        key = values.get(ID_COLUMNS[kind])
        if not key:
            return None
        first = self.seen[kind].get(key)
        if first is not None:
            self._error(row, ID_COLUMNS[kind], f"'{key}' is already on {first.where}")
            return None
        self.seen[kind][key] = row
        return key

    def _apply(self, row: _Row, instance: models.Model, kind: str, values: dict[str, Any]) -> _Plan:
        """Set the row's own fields on the instance; plan the write of those that differ."""
        before = {}
        for name, value in values.items():
            if name in RELATED_COLUMNS[kind]:
                continue
            stored = getattr(instance, name)
            if _canonical(name, stored) != value:
                setattr(instance, name, value)
                before[name] = stored
        return _Plan(instance, instance.pk is None, set(before), where=row.where, before=before)

    def _validate(self, row: _Row, instance: models.Model, kind: str, first_error: int) -> None:
        """The model's own rules (ID formats, lengths, ranges, emails, schedules)."""
        given = {name for name in row.cells if name not in RELATED_COLUMNS[kind]}
        # Fields the row did not give are not its fault; uniqueness is what upsert handles,
        # and the constraint and foreign key checks would cost a query per row.
        exclude = [f.name for f in instance._meta.concrete_fields if f.name not in given]
        try:
            instance.full_clean(exclude=exclude, validate_unique=False, validate_constraints=False)
        except ValidationError as exc:
            reported = {error.field for error in self.errors[first_error:]}
            # Columns the mapping could not make are reported already, once.
            reported |= {*row.failed, *self.tables[kind].missing_columns}
            for name, messages in exc.message_dict.items():
                column = "" if name == "__all__" else name
                if column in reported:
                    continue  # the cell's own error already says what is wrong
                for message in messages:
                    raw = row.cells.get(name)
                    self._error(row, column, _with_value(message, raw) + _id_hint(name, raw))

    # Per kind.

    def plan(self) -> None:
        self._prefetch()
        for kind, plan_row in (
            ("shifts", self._plan_shift),
            ("vanpools", self._plan_vanpool),
            ("employees", self._plan_employee),
        ):
            table = self.tables.get(kind)
            for row in table.rows if table else []:
                first_error = len(self.errors)
                plan = plan_row(row, first_error)
                if plan is not None:
                    self.plans[kind].append(plan)
        self._set_refused_aside()

    def _set_refused_aside(self) -> None:
        """Rows with an error are refused: a preview counts them apart from the rest."""
        bad = {error.where for error in self.errors}
        for kind in KINDS:
            table = self.tables.get(kind)
            self.refused[kind] = sum(row.where in bad for row in table.rows) if table else 0
            self.plans[kind] = [plan for plan in self.plans[kind] if plan.where not in bad]

    def _plan_shift(self, row: _Row, first_error: int) -> _Plan | None:
        values = self._parse(row, "shifts")
        given = [column for column in SHIFT_SCHEDULE_COLUMNS if column in row.cells]
        if not given and "schedule" not in self.tables["shifts"].missing_columns:
            self._error(row, "schedule", "give a schedule, rotation or schedule_text")
        key = self._claim(row, "shifts", values)
        if key is None:
            return None
        shift = self.shifts.get(key) or Shift(shift_id=key)
        self.shifts[key] = shift
        plan = self._apply(row, shift, "shifts", values)
        self._validate(row, shift, "shifts", first_error)
        return plan

    def _plan_vanpool(self, row: _Row, first_error: int) -> _Plan | None:
        values = self._parse(row, "vanpools")
        key = self._claim(row, "vanpools", values)
        if key is None:
            return None
        vanpool = self.vanpools.get(key) or Vanpool(vanpool_id=key)
        self.vanpools[key] = vanpool
        plan = self._apply(row, vanpool, "vanpools", values)
        if "coordinator_email" in values:
            coordinator = self._coordinator(row, values["coordinator_email"])
            if coordinator is not None and vanpool.coordinator_id != coordinator.pk:
                plan.before["coordinator"] = (
                    vanpool.coordinator.email if vanpool.coordinator else ""
                )
                vanpool.coordinator = coordinator
                plan.changed.add("coordinator")
        self._validate(row, vanpool, "vanpools", first_error)
        return plan

    def _coordinator(self, row: _Row, email: str) -> User | None:
        users = self.coordinators.get(email.lower(), [])
        if len(users) == 1:
            return users[0]
        if users:
            self._error(row, "coordinator_email", f"'{email}' belongs to several staff users")
        else:
            self._error(row, "coordinator_email", f"'{email}' is not the email of a staff user")
        return None

    def _plan_employee(self, row: _Row, first_error: int) -> _Plan | None:
        values = self._parse(row, "employees")
        if self._gives_second_seat(row, values):
            return None
        key = self._claim(row, "employees", values)
        if key is None:
            return None
        if row.partial and key not in self.employees:
            message = f"no employee '{key}' in this file or already stored"
            self._error(row, "employee_id", message)
            return None
        employee = self.employees.get(key) or Employee(employee_id=key)
        plan = self._apply(row, employee, "employees", values)
        if "shift_id" in values:
            plan.shift = self._shift_change(row, employee, values["shift_id"])
            if plan.shift is not None:
                plan.changed.add("shift")
        plan.seat = self._seat_change(row, employee, values)
        for column, kind in LEAVE_COLUMNS.items():
            if column in values:
                self._plan_leaves(plan, kind, values[column])
        self._validate(row, employee, "employees", first_error)
        return plan

    def _gives_second_seat(self, row: _Row, values: dict[str, Any]) -> bool:
        first = self.seen["employees"].get(values.get("employee_id", ""))
        seat = values.get("vanpool_id")
        if first is None or seat is None:
            return False
        first_seat = str(first.cells.get("vanpool_id", "")).strip()
        if not first_seat or first_seat == seat:
            return False
        message = f"given two seats: {first_seat} on {first.where} and {seat} here"
        self._error(row, "vanpool_id", message)
        return True

    def _shift_change(self, row: _Row, employee: Employee, key: str) -> Shift | None:
        shift = self.shifts.get(key)
        if shift is None:
            self._error(row, "shift_id", f"no shift '{key}' in this file or already stored")
            return None
        if shift.pk is not None and shift.pk == employee.shift_id:
            return None
        return shift

    def _seat_change(
        self, row: _Row, employee: Employee, values: dict[str, Any]
    ) -> _SeatChange | None:
        key, joined = values.get("vanpool_id"), values.get("joined")
        if key is None:
            if joined is not None:
                self._error(row, "joined", "joined is when a seat started: give vanpool_id too")
            return None
        if key not in self.vanpools:
            self._error(row, "vanpool_id", f"no vanpool '{key}' in this file or already stored")
            return None
        current = self.seats.get(employee.pk) if employee.pk else None
        if current is None or current.vanpool.vanpool_id != key:
            return _SeatChange(vanpool_key=key, joined=joined or self.today, leave=current)
        if joined is not None and joined != current.joined:
            return _SeatChange(joined=joined, retime=current)
        return None

    def _plan_leaves(self, plan: _Plan, kind: str, wanted: set[tuple[date, date]]) -> None:
        stored = [leave for leave in self.leaves.get(plan.instance.pk, []) if leave.kind == kind]
        have = {(leave.start_date, leave.end_date) for leave in stored}
        # Replace by difference, so kept spans keep their notes and ids.
        plan.leaves_to_delete += [
            leave for leave in stored if (leave.start_date, leave.end_date) not in wanted
        ]
        plan.leaves_to_create += [
            Leave(kind=kind, start_date=start, end_date=end) for start, end in sorted(wanted - have)
        ]

    def write(self) -> None:
        for plan in self.plans["shifts"] + self.plans["vanpools"]:
            if plan.created or plan.changed:
                plan.instance.save()
        for plan in self.plans["employees"]:
            if plan.shift is not None:
                cast(Employee, plan.instance).shift = plan.shift  # saved above: it has a pk
            if plan.created or plan.changed:
                plan.instance.save()
        self._write_seats()
        self._write_leaves()

    def _write_seats(self) -> None:
        new_seats = []
        for plan in self.plans["employees"]:
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
                vanpool = self.vanpools[seat.vanpool_key]
                employee = cast(Employee, plan.instance)
                new_seats.append(Rider(vanpool=vanpool, employee=employee, joined=seat.joined))
        Rider.objects.bulk_create(new_seats)

    def _write_leaves(self) -> None:
        stale = [leave.pk for plan in self.plans["employees"] for leave in plan.leaves_to_delete]
        if stale:
            Leave.objects.filter(pk__in=stale).delete()
        new = []
        for plan in self.plans["employees"]:
            for leave in plan.leaves_to_create:
                leave.employee = cast(Employee, plan.instance)
                new.append(leave)
        Leave.objects.bulk_create(new)

    def counts(self) -> dict[str, dict[str, int]]:
        counts = {kind: dict.fromkeys(OUTCOMES, 0) for kind in KINDS}
        for kind, plans in self.plans.items():
            for plan in plans:
                counts[kind][plan.outcome] += 1
        return counts

    # What a preview shows.

    def differences(self) -> dict[str, list[str]]:
        """Per kind, one line per row that would be created or changed, in file order."""
        return {
            kind: [_difference(plan) for plan in plans if plan.outcome != "unchanged"]
            for kind, plans in self.plans.items()
        }

    def warnings(self) -> list[str]:
        """Seats the audit will skip and rows that look incomplete: legal, but worth a look.

        Worked out from the plan (the file over what is stored), so a dry run
        warns as the import would; one query counts the stored vanpools' riders.
        """
        off_service, no_seat = [], []
        for plan in self.plans["employees"]:
            employee = cast(Employee, plan.instance)
            vanpool = self._seat_after(plan)
            if vanpool is None:
                if employee.status == Employee.Status.ACTIVE:
                    no_seat.append(employee.employee_id)
            elif vanpool.status != Vanpool.Status.ACTIVE:
                off_service.append(
                    f"{employee.employee_id} on {vanpool.vanpool_id} ({vanpool.status})"
                )
        warnings = []
        if off_service:
            warnings.append(
                f"{_plural(len(off_service), 'rider')} seated on a vanpool that is not active "
                f"(the audit skips them): {_first(off_service)}"
            )
        if no_seat:
            warnings.append(
                f"{_plural(len(no_seat), 'active employee')} with no seat: {_first(no_seat)}"
            )
        empty = self._vanpools_without_riders()
        if empty:
            warnings.append(
                f"{_plural(len(empty), 'active vanpool')} with no riders: {_first(empty)}"
            )
        return warnings

    def _seat_after(self, plan: _Plan) -> Vanpool | None:
        seat = plan.seat
        if seat is not None and seat.vanpool_key is not None:
            return self.vanpools[seat.vanpool_key]
        current = self.seats.get(plan.instance.pk) if plan.instance.pk else None
        return current.vanpool if current is not None else None

    def _vanpools_without_riders(self) -> list[str]:
        vanpools = [cast(Vanpool, plan.instance) for plan in self.plans["vanpools"]]
        stored = [vanpool.pk for vanpool in vanpools if vanpool.pk]
        riders = dict(
            Rider.objects.filter(vanpool_id__in=stored, status=Rider.Status.ACTIVE)
            .values_list("vanpool_id")
            .annotate(count=models.Count("pk"))
            .values_list("vanpool_id", "count")
        )
        by_key = {vanpool.vanpool_id: riders.get(vanpool.pk, 0) for vanpool in vanpools}
        for plan in self.plans["employees"]:
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


def _difference(plan: _Plan) -> str:
    """``EMP-1003: home_zip 94538 → 94536; seat VP-101 → VP-102`` (or ``…: new``)."""
    instance = plan.instance
    key = str(getattr(instance, _ID_FIELDS[type(instance)]))
    if plan.created:
        parts = ["new"]
    else:
        parts = [
            f"{name} {_value_text(plan.before[name])} → {_value_text(_current(instance, name))}"
            if name in plan.before
            else f"{name} → {_value_text(_current(instance, name))}"
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


_ID_FIELDS: dict[type, str] = {
    Shift: "shift_id",
    Vanpool: "vanpool_id",
    Employee: "employee_id",
}


def _current(instance: models.Model, name: str) -> object:
    if name == "shift":
        shift = cast(Employee, instance).shift
        return shift.shift_id if shift else ""
    if name == "coordinator":
        coordinator = cast(Vanpool, instance).coordinator
        return coordinator.email if coordinator else ""
    return getattr(instance, name)


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


# A vanpool's rider list -------------------------------------------------------------------


def _seat_riders(tables: list[_Table], read: _Read) -> list[_Table]:
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
    employees = by_kind.get("employees") or _Table(
        "employees", [], where=f"{vanpools.where}[*].{RIDERS}", sources=[]
    )
    rows = {_cell_text(row, "employee_id"): row for row in employees.rows}
    recipe = read.spec("vanpools").columns.get(RIDERS)
    records = record_keys(read.spec("employees"), _accepted_names("employees"))
    unknown: dict[str, list[str]] = {}
    ignored: dict[str, list[str]] = {}
    given: list[object] = []
    for vanpool in vanpools.rows:
        vanpool_id = _cell_text(vanpool, "vanpool_id")
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
                row = _Row(where, {"employee_id": seat.employee_id}, partial=True)
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


def _ignored_rider_keys(ignored: dict[str, list[str]], read: _Read) -> None:
    """A seat object's own keys (``participant_id``): named once; unmapped, an error."""
    if not ignored:
        return
    if read.mapping is not None:
        names = ", ".join(sorted(ignored, key=str.lower))
        read.warnings.append(
            f"vanpools: ignored {_plural(len(ignored), 'key')} of rider objects "
            f"the mapping does not use: {names}"
        )
        return
    for key, places in ignored.items():
        rows = f" (in {_plural(len(places), 'rider')})" if len(places) > 1 else ""
        read.error(
            places[0],
            key,
            f"unknown key in a rider object{rows}"
            + (
                _suggest(key, COLUMNS["employees"])
                or "; a seat gives employee_id and joined (a whole record, the employee's "
                "columns); a mapping file (--mapping) can ignore it"
            ),
        )


def _record_row(
    seat: Seat, where: str, read: _Read, unknown: dict[str, list[str]], records: set[str]
) -> _Row:
    record = cast(dict, seat.record)
    spec = read.spec("employees")
    used = used_keys(spec, _accepted_names("employees")) | {"id", "joined"}
    for key in record:
        if str(key).strip().lower() not in used:
            unknown.setdefault(str(key), []).append(where)
    row = _mapped_row("employees", spec, record, where, read)
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


def _seat(row: _Row, vanpool: _Row, vanpool_id: str, seat: Seat, read: _Read) -> None:
    """Give the row the vanpool's seat, unless it names another."""
    where = f"{vanpool.where}.{seat.where}"
    given = _cell_text(row, "vanpool_id")
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


def _cell_text(row: _Row, column: str) -> str:
    value = row.cells.get(column)
    return (
        str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    )


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
    return f"{message.rstrip('.')} (got {_shown(raw)})"
