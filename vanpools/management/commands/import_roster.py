"""manage.py import_roster FILE [--kind shifts|vanpools|employees] [--dry-run]"""

from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from vanpools.importer import KINDS, ImportFailed, import_file


class Command(BaseCommand):
    help = (
        "Upsert shifts, vanpools and employees from an HR export (CSV or JSON) by ID. "
        "All or nothing: a file with any bad row changes nothing. "
        "See README, 'Roster import format'."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", type=Path, help="a .csv or .json export")
        parser.add_argument(
            "--kind", choices=KINDS, help="what a CSV's rows are (default: by header)"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="check and count, but save nothing"
        )

    def handle(
        self, *args: object, file: Path, kind: str | None, dry_run: bool, **options: object
    ) -> None:
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        try:
            result = import_file(file, kind=kind, dry_run=dry_run)
        except ImportFailed as exc:
            for error in exc.errors:
                self.stderr.write(str(error))
            raise CommandError(str(exc)) from None
        for line in result.summary_lines():
            self.stdout.write(line)
