"""manage.py import_roster FILE [--mapping M] [--kind K] [--dry-run] [--period A..B] [--site S]"""

import datetime as dt
from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from vanpools.importing import KINDS, ImportFailed, ImportResult, import_file
from vanpools.importing.records import RECORD_KINDS, import_records, record_kind_of


class Command(BaseCommand):
    help = (
        "Upsert shifts, vanpools and employees from an HR or vanpool-vendor export (CSV or "
        "JSON) by ID; or import a trip log, ride days, badge swipes, parking permits, vanpool "
        "months or holidays. All or nothing: a file with any bad row changes nothing. "
        "See docs/roster-format.md."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", type=Path, help="a .csv or .json export")
        parser.add_argument(
            "--mapping",
            type=Path,
            help="a .toml or .yaml file naming which source column feeds which roster column",
        )
        parser.add_argument(
            "--kind",
            choices=KINDS + RECORD_KINDS,
            help="what a CSV's rows are (default: by header)",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="show what would be created, updated, unchanged and refused; save nothing",
        )
        parser.add_argument(
            "--period",
            help="trips, ride days, badge swipes: the dates the file is complete for, "
            "START..END (default: each vanpool's or site's first to last date in the file)",
        )
        parser.add_argument(
            "--site",
            default="",
            help="permits: the work site the list is complete for (default: every site)",
        )

    def handle(
        self,
        *args: object,
        file: Path,
        mapping: Path | None,
        kind: str | None,
        dry_run: bool,
        period: str | None,
        site: str,
        **options: object,
    ) -> None:
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        if mapping is not None and not mapping.is_file():
            raise CommandError(f"{mapping}: no such mapping file")
        records = kind in RECORD_KINDS if kind else record_kind_of(file, mapping) is not None
        if (period or site) and not records:
            raise CommandError("--period and --site are for trips, ride days, swipes and permits")
        try:
            if records:
                result = import_records(
                    file,
                    kind=kind,
                    mapping=mapping,
                    dry_run=dry_run,
                    period=_period(period),
                    site=site,
                )
            else:
                result = import_file(file, kind=kind, dry_run=dry_run, mapping=mapping)
        except ImportFailed as exc:
            if exc.preview is not None:
                self._write(exc.preview)
            for error in exc.errors:
                self.stderr.write(str(error))
            raise CommandError(str(exc)) from None
        self._write(result)

    def _write(self, result: ImportResult) -> None:
        for line in result.summary_lines():
            self.stdout.write(line)


def _period(text: str | None) -> tuple[dt.date, dt.date] | None:
    if not text:
        return None
    start, _, end = text.partition("..")
    try:
        first, last = dt.date.fromisoformat(start.strip()), dt.date.fromisoformat(end.strip())
    except ValueError:
        raise CommandError(
            f"--period {text!r}: write START..END, e.g. 2026-10-01..2026-10-31"
        ) from None
    if last < first:
        raise CommandError(f"--period {text!r}: ends before it starts")
    return first, last
