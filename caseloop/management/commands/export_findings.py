"""manage.py export_findings [--status open|closed|all] [--site S] [--format F] [--output FILE]"""

from typing import Any

from django.core.management.base import CommandError, CommandParser

from cases.export import COLUMNS, findings
from cases.models import Case
from poolpatrol.spreadsheet_command import SpreadsheetCommand

STATUSES = ("open", "closed", "all")


class Command(SpreadsheetCommand):
    help = "Write the audit's findings, one row per case, as CSV or XLSX for auditors."
    noun = "case"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--status", default="open", help="open (default), closed or all")
        self.add_output_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        status, site = options["status"], options["site"]
        if status not in STATUSES:
            raise CommandError(f"--status {status!r}: one of {', '.join(STATUSES)}")
        kind = self.output_format(options)
        cases = Case.objects.all()
        if status != "all":
            cases = (
                cases.filter(status=Case.Status.CLOSED)
                if status == "closed"
                else cases.exclude(status=Case.Status.CLOSED)
            )
        if site:
            cases = cases.filter(vanpool__work_site__iexact=site)
        rows = [row.values for row in findings(cases)]
        self.write_table(COLUMNS, rows, kind=kind, output=options["output"], title="Findings")
