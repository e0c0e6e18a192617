"""One record import: read → plan → write, all or nothing.

Every row is read and checked first; a file with any error writes nothing and
lists every error (a thousand, and how many more). Only what differs from the
stored records is written, in one transaction; a file identical to what is
stored writes nothing at all, not even a transaction.
"""

import csv
import datetime as dt
import json
import tomllib
from pathlib import Path

import yaml
from django.db import transaction

from vanpools.importing.mapping.load import load_mapping
from vanpools.importing.mapping.spec import MappingError, RosterMapping
from vanpools.importing.records.base import Known, RecordKind
from vanpools.importing.records.kinds import COLUMNS, RECORD_KINDS, kind_of_header
from vanpools.importing.records.program import Holidays, Permits, VanpoolMonths
from vanpools.importing.records.read import Source, open_source
from vanpools.importing.records.rides import RideDays, Trips
from vanpools.importing.records.swipes import BadgeSwipes
from vanpools.importing.result import ImportFailed, ImportResult, RowError, fail, plural

KIND_CLASSES: dict[str, type[RecordKind]] = {
    "trips": Trips,
    "ride_days": RideDays,
    "badge_swipes": BadgeSwipes,
    "permits": Permits,
    "vanpool_months": VanpoolMonths,
    "holidays": Holidays,
}


def import_records(
    path: Path | str,
    *,
    kind: str | None = None,
    mapping: RosterMapping | Path | str | None = None,
    dry_run: bool = False,
    period: tuple[dt.date, dt.date] | None = None,
    site: str = "",
) -> ImportResult:
    """Import a trip log, ride days, badge swipes, permits, vanpool months or holidays."""
    if kind is not None and kind not in RECORD_KINDS:
        raise ValueError(f"kind must be one of {', '.join(RECORD_KINDS)}, not {kind!r}")
    path = Path(path)
    source, rows = open_source(path, kind, _mapping(mapping))
    records = _kind(source, period, site)
    with records.open():
        for where, cells in rows:
            records.add(where, cells)
        records.finish()
        if source.error_count:
            raise ImportFailed(_listed(source))
        records.plan()
        result = _result(records, source, dry_run)
        if not dry_run and _changes(result, records):
            with transaction.atomic():
                records.write()
    return result


def record_kind_of(path: Path, mapping: Path | None = None) -> str | None:
    """The record kind a mapping's section, or a file's header (or JSON keys), names.

    None for a roster file, or one this cannot read (the roster importer then
    says what is wrong with it).
    """
    if mapping is not None:
        named = [kind for kind in _mapping_sections(mapping) if kind in RECORD_KINDS]
        if named:
            return named[0]
    try:
        if path.suffix.lower() == ".csv":
            with path.open(encoding="utf-8-sig", newline="") as handle:
                header = next(csv.reader(handle), [])
            return kind_of_header([name.strip().lower() for name in header])
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text(encoding="utf-8-sig"))
            if isinstance(data, dict):
                named = [key for key in data if key in RECORD_KINDS]
                return named[0] if len(named) == 1 else None
            if isinstance(data, list):
                keys = sorted(
                    {str(k).lower() for row in data[:50] if isinstance(row, dict) for k in row}
                )
                return kind_of_header(keys)
    except (OSError, UnicodeDecodeError, csv.Error, json.JSONDecodeError):
        return None  # the roster importer says what is wrong with the file
    return None


def _mapping_sections(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8-sig")
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, yaml.YAMLError):
        return []
    return list(data) if isinstance(data, dict) else []


def _mapping(mapping: RosterMapping | Path | str | None) -> RosterMapping | None:
    if mapping is None or isinstance(mapping, RosterMapping):
        return mapping
    try:
        return load_mapping(mapping, {kind: list(COLUMNS[kind]) for kind in RECORD_KINDS})
    except MappingError as exc:
        fail(exc.where, str(exc))


def _kind(source: Source, period: tuple[dt.date, dt.date] | None, site: str) -> RecordKind:
    known = Known.load()
    if source.kind == "permits":
        return Permits(source, known, period, site=site)
    return KIND_CLASSES[source.kind](source, known, period)


def _listed(source: Source) -> list[RowError]:
    errors = list(source.errors)
    hidden = source.error_count - len(errors)
    if hidden:
        errors.append(RowError(source.path.name, "", f"… and {plural(hidden, 'more error')}"))
    return errors


def _result(records: RecordKind, source: Source, dry_run: bool) -> ImportResult:
    counts = records.counts
    warnings = list(source.warnings) + records.warnings()
    if counts.removed:
        warnings.append(
            f"{records.kind}: {plural(counts.removed, 'stored row')} the file no longer holds for "
            "the dates it covers " + ("would be" if dry_run else "were") + " removed"
        )
    return ImportResult(
        counts={
            records.kind: {
                "created": counts.created,
                "updated": counts.updated,
                "unchanged": counts.unchanged,
            }
        },
        kinds=[records.kind],
        dry_run=dry_run,
        source=str(source.path),
        differences={records.kind: counts.changes},
        warnings=warnings,
    )


def _changes(result: ImportResult, records: RecordKind) -> bool:
    counts = records.counts
    coverage = getattr(records, "coverage", None)
    return bool(
        counts.created
        or counts.updated
        or counts.removed
        or coverage
        or (isinstance(records, Permits) and not records.covered)
    )
