"""manage.py export_findings [--status open|closed|all] [--site S] [--format F] [--output FILE]"""

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from cases.export import FORMATS, as_csv, as_xlsx, findings
from cases.models import Case

STATUSES = ("open", "closed", "all")


class Command(BaseCommand):
    help = "Write the audit's findings, one row per case, as CSV or XLSX for auditors."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--status", default="open", help="open (default), closed or all")
        parser.add_argument("--site", help="only this work site's vanpools")
        parser.add_argument("--format", default="", help="csv or xlsx (default: from --output)")
        parser.add_argument("--output", help="the file to write (default: CSV to the terminal)")

    def handle(self, *args: Any, **options: Any) -> None:
        status, site, output = options["status"], options["site"], options["output"]
        if status not in STATUSES:
            raise CommandError(f"--status {status!r}: one of {', '.join(STATUSES)}")
        kind = options["format"] or (Path(output).suffix.lstrip(".").lower() if output else "csv")
        if kind not in FORMATS:
            raise CommandError(f"--format {kind!r}: one of {', '.join(FORMATS)}")
        if kind == "xlsx" and not output:
            raise CommandError("an XLSX file needs --output FILE.xlsx")
        if output and not Path(output).parent.is_dir():
            raise CommandError(
                f"--output {output}: the folder {Path(output).parent} does not exist"
            )
        cases = Case.objects.all()
        if status != "all":
            cases = (
                cases.filter(status=Case.Status.CLOSED)
                if status == "closed"
                else cases.exclude(status=Case.Status.CLOSED)
            )
        if site:
            cases = cases.filter(vanpool__work_site__iexact=site)
        rows = list(findings(cases))
        if not output:
            sys.stdout.write(as_csv(rows))
            return
        data = as_xlsx(rows) if kind == "xlsx" else as_csv(rows).encode("utf-8-sig")
        Path(output).write_bytes(data)
        self.stdout.write(f"{len(rows)} case{'s' if len(rows) != 1 else ''} written to {output}")
