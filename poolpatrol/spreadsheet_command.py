"""The command-line half of every spreadsheet export: where the rows go, and in what format.

``export_findings`` and ``export_vanpool_report`` differ in their rows and
agree on the rest: CSV to the terminal by default, CSV or XLSX to a file
(the format from ``--format`` or the file's suffix), and a clear error,
before any row is read, for a format we do not write or a folder that does
not exist.
"""

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from poolpatrol.spreadsheets import Cell, as_csv, as_xlsx

FORMATS = ("csv", "xlsx")


class SpreadsheetCommand(BaseCommand):
    """A command that writes one table, as CSV (terminal or file) or XLSX (file)."""

    noun = "row"  # what one row is, for "3 vanpools written to report.csv"

    def add_output_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--site", help="only this work site's vanpools")
        parser.add_argument("--format", default="", help="csv or xlsx (default: from --output)")
        parser.add_argument("--output", help="the file to write (default: CSV to the terminal)")

    def output_format(self, options: dict[str, Any]) -> str:
        """The format to write, checked with the output's folder; CommandError otherwise."""
        output = options["output"]
        kind = options["format"] or (Path(output).suffix.lstrip(".").lower() if output else "csv")
        if kind not in FORMATS:
            raise CommandError(f"--format {kind!r}: one of {', '.join(FORMATS)}")
        if kind == "xlsx" and not output:
            raise CommandError("an XLSX file needs --output FILE.xlsx")
        if output and not Path(output).parent.is_dir():
            raise CommandError(
                f"--output {output}: the folder {Path(output).parent} does not exist"
            )
        return kind

    def write_table(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[Cell]],
        *,
        kind: str,
        output: str | None,
        title: str,
    ) -> None:
        if not output:
            sys.stdout.write(as_csv(columns, rows))
            return
        # Excel reads a CSV without a byte-order mark as the local code page.
        data = (
            as_xlsx(columns, rows, title)
            if kind == "xlsx"
            else as_csv(columns, rows).encode("utf-8-sig")
        )
        Path(output).write_bytes(data)
        plural = "" if len(rows) == 1 else "s"
        self.stdout.write(f"{len(rows)} {self.noun}{plural} written to {output}")
