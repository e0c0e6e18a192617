"""A record file's rows, one at a time, in the records' own column names.

CSV is read as it streams (a month of a large program's trips is a million
lines); JSON is decoded whole, as a list of row objects or an object whose
key names the kind. A mapping renames and transforms cells as it does for the
roster (``vanpools.importing.mapping``).
"""

import csv
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vanpools.importing.mapping.recipes import map_row
from vanpools.importing.mapping.spec import KindMapping, RosterMapping
from vanpools.importing.read.context import suggest
from vanpools.importing.records.cells import id_list
from vanpools.importing.records.kinds import COLUMNS, RECORD_KINDS, REQUIRED, kind_of_header
from vanpools.importing.result import RowError, fail, plural
from vanpools.importing.rows import is_blank

Cells = dict[str, object]


@dataclass
class Source:
    """A file being read: where it is, its kind, its mapping, and what reading found."""

    path: Path
    kind: str
    mapping: RosterMapping | None = None
    errors: list[RowError] = field(default_factory=list)
    error_count: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def spec(self) -> KindMapping:
        found = self.mapping.for_kind(self.kind) if self.mapping else None
        return found or KindMapping()

    def error(self, where: str, column: str, message: str) -> None:
        # A systematic mistake in a million-line file is one problem told many
        # times: every one is counted, the first thousand are listed.
        self.error_count += 1
        if len(self.errors) < MAX_LISTED_ERRORS:
            self.errors.append(RowError(where, column, message))


MAX_LISTED_ERRORS = 1000


def open_source(
    path: Path, kind: str | None, mapping: RosterMapping | None
) -> tuple[Source, Iterator[tuple[str, Cells]]]:
    """The file's kind (given, or told by its header or keys) and its rows."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _csv(path, kind, mapping)
    if suffix == ".json":
        return _json(path, kind, mapping)
    fail(str(path), f"cannot read {suffix or 'extension-less'} files: save it as CSV or JSON")


def _csv(
    path: Path, kind: str | None, mapping: RosterMapping | None
) -> tuple[Source, Iterator[tuple[str, Cells]]]:
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
        reader = csv.reader(handle, strict=True)
        header = [name.strip() for name in next(reader, [])]
    except UnicodeDecodeError:
        fail(str(path), "not UTF-8 text: save the export as UTF-8 CSV")
    except csv.Error as exc:
        fail("line 1", f"not readable as CSV: {exc}")
    names = [name.lower() for name in header]
    source = Source(path, _kind(kind, names, mapping, str(path)), mapping)
    _check_header(source, header)

    def rows() -> Iterator[tuple[str, Cells]]:
        line = 2
        try:
            for cells in reader:
                where = f"line {line}"
                line = reader.line_num + 1
                if not any(cell.strip() for cell in cells):
                    continue
                if len(cells) > len(header) and any(c.strip() for c in cells[len(header) :]):
                    source.error(
                        where, "", f"{len(cells)} cells, but the header has {len(header)} columns"
                    )
                row = {name: cell for name, cell in zip(keys, cells, strict=False) if cell.strip()}
                yield where, _mapped(source, row, where)
        except csv.Error as exc:
            fail(f"line {reader.line_num}", f"not readable as CSV: {exc}")
        finally:
            handle.close()

    keys = header if mapping is not None else names
    return source, rows()


def _json(
    path: Path, kind: str | None, mapping: RosterMapping | None
) -> tuple[Source, Iterator[tuple[str, Cells]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        fail(str(path), "not UTF-8 text")
    except json.JSONDecodeError as exc:
        fail(str(path), f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")
    if isinstance(data, dict):
        named = [key for key in data if key in RECORD_KINDS]
        if len(named) != 1 or (kind and named[0] != kind):
            fail(
                str(path),
                f"expected one key naming the rows ({', '.join(RECORD_KINDS)}) or a list of rows",
            )
        kind, data = named[0], data[named[0]]
    if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
        fail(str(path), "expected a list of rows, each an object of column: value")
    names = sorted({str(key).strip().lower() for row in data[:50] for key in row})
    source = Source(path, _kind(kind, names, mapping, str(path)), mapping)
    label = source.kind
    _check_header(source, sorted({str(key).strip() for row in data[:50] for key in row}))

    def rows() -> Iterator[tuple[str, Cells]]:
        for index, row in enumerate(data):
            where = f"{label}[{index}]"
            given = (
                row if mapping is not None else {str(k).strip().lower(): v for k, v in row.items()}
            )
            yield where, _mapped(source, {k: v for k, v in given.items() if not is_blank(v)}, where)

    return source, rows()


def _kind(kind: str | None, names: list[str], mapping: RosterMapping | None, where: str) -> str:
    if kind is not None:
        return kind
    mapped = [k for k in RECORD_KINDS if mapping and mapping.for_kind(k)]
    found = mapped[0] if len(mapped) == 1 else kind_of_header(names)
    if found is None:
        fail(where, f"cannot tell what the rows are: give --kind ({', '.join(RECORD_KINDS)})")
    return found


def _check_header(source: Source, header: list[str]) -> None:
    """Columns the kind has no place for, and required ones missing, told once each."""
    kind, spec = source.kind, source.spec
    known = set(COLUMNS[kind])
    used = known | {
        path.split(".")[0].strip().lower() for r in spec.columns.values() for path in r.paths()
    }
    unknown = [name for name in header if name and name.lower() not in used]
    if unknown and source.mapping is not None:
        source.warnings.append(
            f"{kind}: ignored {plural(len(unknown), 'column')} the mapping does not use: "
            f"{', '.join(unknown)}"
        )
    else:
        for name in unknown:
            source.error("line 1", name, "unknown column" + suggest(name, known))
    given = {name.lower() for name in header} | set(spec.columns)
    for column in REQUIRED[kind]:
        if column not in given:
            source.error("line 1", column, "required column is missing")
    if kind == "badge_swipes" and "swiped_at" not in given and not {"date", "time"} <= given:
        source.error("line 1", "swiped_at", "give swiped_at, or date and time")


# Columns that hold a list: a mapping's transforms (a format, say) apply to each item.
LIST_COLUMNS = {"trips": ("passengers",)}


def _mapped(source: Source, row: Mapping[str, object], where: str) -> Cells:
    if source.mapping is None:
        return row if isinstance(row, dict) else dict(row)
    row = dict(row)
    for column in LIST_COLUMNS.get(source.kind, ()):
        recipe = source.spec.columns.get(column)
        if recipe is not None and isinstance(recipe.source, str):
            wanted = recipe.source.strip().lower()
            for key, given in row.items():
                if key.strip().lower() == wanted and isinstance(given, str):
                    row[key] = id_list(given)
    mapped = map_row(source.spec, source.kind, row, list(COLUMNS[source.kind]))
    for column, message in mapped.problems:
        source.error(where, column, message)
    return {name: value for name, value in mapped.cells.items() if name in COLUMNS[source.kind]}
