"""manage.py export_vanpool_report --month YYYY-MM [--site S] [--format F] [--output FILE]"""

from typing import Any

from django.core.management.base import CommandError, CommandParser

from poolpatrol.spreadsheet_command import SpreadsheetCommand
from vanpools.models import Vanpool
from vanpools.monthly_report import COLUMNS, parse_month, report_rows


class Command(SpreadsheetCommand):
    help = "Write the monthly vanpool report (NTD vanpool fields), one row per van."
    noun = "vanpool"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--month", required=True, help="the month, YYYY-MM")
        self.add_output_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            month = parse_month(options["month"])
        except ValueError as error:
            raise CommandError(f"--month {error}") from None
        kind = self.output_format(options)
        vanpools = Vanpool.objects.all()
        if site := options["site"]:
            vanpools = vanpools.filter(work_site__iexact=site)
        rows = list(report_rows(vanpools, month))
        title = f"Vanpools {month:%Y-%m}"
        self.write_table(COLUMNS, rows, kind=kind, output=options["output"], title=title)
