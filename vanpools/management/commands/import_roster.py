"""manage.py import_roster FILE [--mapping MAP.toml] [--kind KIND] [--dry-run]"""

from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from vanpools.importing import KINDS, ImportFailed, import_file


class Command(BaseCommand):
    help = (
        "Upsert shifts, vanpools and employees from an HR or vanpool-vendor export (CSV or "
        "JSON) by ID. All or nothing: a file with any bad row changes nothing. "
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
            "--kind", choices=KINDS, help="what a CSV's rows are (default: by header)"
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="show what would be created, updated, unchanged and refused; save nothing",
        )

    def handle(
        self,
        *args: object,
        file: Path,
        mapping: Path | None,
        kind: str | None,
        dry_run: bool,
        **options: object,
    ) -> None:
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        if mapping is not None and not mapping.is_file():
            raise CommandError(f"{mapping}: no such mapping file")
        try:
            result = import_file(file, kind=kind, dry_run=dry_run, mapping=mapping)
        except ImportFailed as exc:
            if exc.preview is not None:
                for line in exc.preview.summary_lines():
                    self.stdout.write(line)
            for error in exc.errors:
                self.stderr.write(str(error))
            raise CommandError(str(exc)) from None
        for line in result.summary_lines():
            self.stdout.write(line)
