"""A JSON export's rows: each kind's section (or the mapping's path to it), row by row."""

from vanpools.importing.columns import KINDS, accepted_names
from vanpools.importing.mapping.checks import unmatched_paths
from vanpools.importing.mapping.recipes import MISSING, lookup, used_keys
from vanpools.importing.read.context import Reading, suggest
from vanpools.importing.read.kind import kind_from_rows
from vanpools.importing.read.source_rows import mapped_row
from vanpools.importing.result import fail, plural
from vanpools.importing.rows import Row, Table


def json_tables(data: object, *, kind: str | None, read: Reading) -> list[Table]:
    """A table per kind the decoded JSON holds; ``kind`` names a bare list's rows."""
    sections = _json_sections(data, kind, read)
    tables = []
    for name, (path, rows) in sections.items():
        if not isinstance(rows, list):
            read.error(path, "", f"expected a list of rows, found {_type_name(rows)}")
            continue
        tables.append(Table(name, _json_rows(name, path, rows, read), where=path, sources=[*rows]))
    return tables


def check_paths(tables: list[Table], read: Reading) -> None:
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


def _json_sections(data: object, kind: str | None, read: Reading) -> dict[str, tuple[str, object]]:
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
            detected = kind or kind_from_rows(data, read)
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
        fail(read.source, "expected an object with shifts, vanpools and/or employees, or a list")
    if kind is not None and set(located) - {kind}:
        others = ", ".join(sorted(set(located) - {kind}))
        fail(read.source, f"the file also holds {others}; leave out --kind to import all of it")
    return {name: located[name] for name in KINDS if name in located}


def _unknown_sections(keys: list[str], read: Reading) -> None:
    if keys and read.mapping is not None:
        read.warnings.append(
            f"ignored {plural(len(keys), 'top-level key')} the mapping reads no rows from: "
            + ", ".join(keys)
        )
    elif read.mapping is None:
        for key in keys:
            read.error(read.source, key, "unknown section" + suggest(key, KINDS))


def _type_name(value: object) -> str:
    return {dict: "an object", str: "text", type(None): "null"}.get(type(value), "a value")


def _json_rows(kind: str, path: str, rows: list[object], read: Reading) -> list[Row]:
    spec = read.spec(kind)
    names = accepted_names(kind)
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
        parsed.append(mapped_row(kind, spec, row, where, read))
    read.unknown_columns(kind, unknown)
    return parsed
