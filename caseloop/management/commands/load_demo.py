"""manage.py load_demo: the demo program and its staff logins, safe to run again."""

import os
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from outreach.models import Message
from poolpatrol.queue import run_inline
from vanpools.demo import DemoLogin, DemoRefused, DemoResult, load_demo_program
from vanpools.importer import ImportFailed

SERVER = "http://127.0.0.1:8000"


class Command(BaseCommand):
    help = (
        "Import the demo vanpool program (fixtures/demo/program.json) and create the demo "
        "logins: auditor (Auditors) and coordinator (Coordinators). Safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--password",
            help="password for users created (or reset) now; default: $DEMO_PASSWORD, "
            "else a random one per user, printed once",
        )
        parser.add_argument(
            "--reset-passwords",
            action="store_true",
            help="set new passwords on existing demo users too",
        )
        parser.add_argument("--force", action="store_true", help="load even when PRODUCTION is on")
        parser.add_argument(
            "--no-audit", action="store_true", help="load only; skip the full audit that follows"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        password = options["password"] or os.environ.get("DEMO_PASSWORD") or None
        try:
            result = load_demo_program(
                password=password,
                reset_passwords=options["reset_passwords"],
                allow_production=options["force"],
            )
        except DemoRefused as exc:
            raise CommandError(f"{exc}. Pass --force to load it anyway.") from None
        except ImportFailed as exc:
            lines = [str(exc), *(f"  {error}" for error in exc.errors)]
            raise CommandError("\n".join(lines)) from None
        self._report_import(result)
        if not options["no_audit"]:
            self.stdout.write("")
            self.stdout.write("Auditing every vanpool:")
            # Outreach runs here, not on a worker: the demo shows its emails at once.
            with run_inline():
                call_command("audit_vanpools", "--all", stdout=self.stdout, stderr=self.stderr)
            self._report_outreach()
        self._report_logins(result)

    def _report_outreach(self) -> None:
        sent = Message.objects.filter(direction="outbound", status="sent").count()
        where = (
            f" (written to {settings.EMAIL_FILE_PATH})"
            if settings.EMAIL_BACKEND.endswith("filebased.EmailBackend")
            else ""
        )
        self.stdout.write(f"Outreach: {sent} emails to flagged riders{where}.")

    def _report_import(self, result: DemoResult) -> None:
        self.stdout.write(f"Imported {result.imported.source}:")
        for line in result.imported.summary_lines():
            self.stdout.write(f"  {line}")
        if result.vanpools_given_coordinator:
            self.stdout.write(
                f"coordinator now coordinates {result.vanpools_given_coordinator} vanpools "
                "that had no coordinator."
            )
        if result.changed_nothing:
            self.stdout.write("The demo was already loaded: everything unchanged.")

    def _report_logins(self, result: DemoResult) -> None:
        self.stdout.write("")
        self.stdout.write(
            self.style.SUCCESS(
                f"Log in at {SERVER}{reverse('review-queue')} (the coordinators' dashboard) "
                f"or {SERVER}{reverse('admin:index')} (the auditors' admin)"
            )
        )
        for login in result.logins:
            self.stdout.write(f"  {login.username:<12} {login.group:<13} {_password_text(login)}")


def _password_text(login: DemoLogin) -> str:
    if login.password:
        return f"password: {login.password}"
    return "password: unchanged (--reset-passwords sets a new one)"
