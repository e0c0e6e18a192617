"""One import, stage by stage: read (and map) → check → write → preview.

Reading collects every error it can, checking adds each row's, and only a
file without errors is written, in one transaction: a bad export changes
nothing.
"""

from pathlib import Path
from typing import Any

from django.db import transaction

from vanpools.importing.check.planning import plan_import
from vanpools.importing.columns import KINDS, accepted_names
from vanpools.importing.mapping.load import load_mapping
from vanpools.importing.mapping.spec import MappingError, RosterMapping
from vanpools.importing.preview import preview
from vanpools.importing.read.context import Reading
from vanpools.importing.read.csv_rows import csv_tables
from vanpools.importing.read.files import decode_json, read_text
from vanpools.importing.read.json_rows import check_paths, json_tables
from vanpools.importing.read.rider_lists import seat_riders
from vanpools.importing.result import ImportFailed, ImportResult, fail
from vanpools.importing.rows import Table
from vanpools.importing.write import write_plans


def import_data(
    data: dict[str, Any] | list[Any],
    *,
    dry_run: bool = False,
    source: str = "",
    mapping: RosterMapping | None = None,
) -> ImportResult:
    """Import rows in docs/roster-format.md's JSON shape (decoded), or any shape a mapping reads."""
    read = Reading(source or "data", mapping)
    tables = json_tables(data, kind=None, read=read)
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
        fail(source, f"cannot read {suffix or 'extension-less'} files: save it as CSV or JSON")
    read = Reading(source, read_mapping(mapping))
    text = read_text(path)
    if suffix == ".json":
        tables = json_tables(decode_json(text), kind=kind, read=read)
    else:
        tables = csv_tables(text, kind=kind, read=read)
    return _import(tables, read, dry_run=dry_run)


def read_mapping(mapping: RosterMapping | Path | str | None) -> RosterMapping | None:
    """A mapping as given, or read from its file; a bad file is an ImportFailed."""
    if mapping is None or isinstance(mapping, RosterMapping):
        return mapping
    try:
        return load_mapping(mapping, {kind: accepted_names(kind) for kind in KINDS})
    except MappingError as exc:
        fail(exc.where, str(exc))


def _import(tables: list[Table], read: Reading, *, dry_run: bool) -> ImportResult:
    tables = seat_riders(tables, read)
    check_paths(tables, read)
    planned = plan_import(tables, read.errors)
    kinds = [table.kind for table in tables]
    if planned.errors:
        shown = preview(planned, kinds, read, dry_run=True) if dry_run else None
        raise ImportFailed(planned.errors, preview=shown)
    # Before the write, which moves the stored values the preview compares against.
    result = preview(planned, kinds, read, dry_run=dry_run)
    with transaction.atomic():
        write_plans(planned)
        if dry_run:
            transaction.set_rollback(True)
    return result
