"""manage.py export_vanpool_report --month YYYY-MM [--site S] [--format F] [--output FILE]"""

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from poolpatrol import spreadsheets
from vanpools.models import Vanpool
from vanpools.monthly_report import COLUMNS, FORMATS, parse_month, report_rows


class Command(BaseCommand):
    help = "Write the monthly vanpool report (NTD vanpool fields), one row per van."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--month", required=True, help="the month, YYYY-MM")
        parser.add_argument("--site", help="only this work site's vanpools")
        parser.add_argument("--format", default="", help="csv or xlsx (default: from --output)")
        parser.add_argument("--output", help="the file to write (default: CSV to the terminal)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            month = parse_month(options["month"])
        except ValueError as error:
            raise CommandError(f"--month {error}") from None
        output, site = options["output"], options["site"]
        kind = options["format"] or (Path(output).suffix.lstrip(".").lower() if output else "csv")
        if kind not in FORMATS:
            raise CommandError(f"--format {kind!r}: one of {', '.join(FORMATS)}")
        if kind == "xlsx" and not output:
            raise CommandError("an XLSX file needs --output FILE.xlsx")
        if output and not Path(output).parent.is_dir():
            raise CommandError(
                f"--output {output}: the folder {Path(output).parent} does not exist"
            )
        vanpools = Vanpool.objects.all()
        if site:
            vanpools = vanpools.filter(work_site__iexact=site)
        rows = list(report_rows(vanpools, month))
        if not output:
            sys.stdout.write(spreadsheets.as_csv(COLUMNS, rows))
            return
        title = f"Vanpools {month:%Y-%m}"
        data = (
            spreadsheets.as_xlsx(COLUMNS, rows, title)
            if kind == "xlsx"
            else spreadsheets.as_csv(COLUMNS, rows).encode("utf-8-sig")
        )
        Path(output).write_bytes(data)
        self.stdout.write(f"{len(rows)} vanpool{'s' if len(rows) != 1 else ''} written to {output}")
