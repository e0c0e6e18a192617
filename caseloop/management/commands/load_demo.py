"""manage.py load_demo: the demo program and its staff logins, safe to run again."""

import datetime as dt
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from caseloop.demo_history import HistoryRefused, HistoryResult, build_history
from outreach.models import Message
from poolpatrol.queue import run_inline
from vanpools.demo import DemoLogin, DemoRefused, DemoResult, load_demo_program
from vanpools.importing import ImportFailed

SERVER = "http://127.0.0.1:8000"
# The demo logins' passwords, written when this command sets them, so a re-run
# that keeps them (and everyone's sessions) can say where they are. Demo only:
# never written when PRODUCTION is on.
LOGINS_FILE_NAME = "demo-logins.txt"


class Command(BaseCommand):
    help = (
        "Import the demo vanpool program (fixtures/demo/program.json) and create the demo "
        "logins: auditor (Auditors) and coordinator (Coordinators); then play a simulated "
        "past quarter (fixtures/demo/history.json: the eleven weeks before this one, with "
        "weekly audits, riders' replies, deadlines and the coordinator's decisions, all "
        "through the real workflow) and audit every vanpool today. Safe to run again: the "
        "history is built once, and nobody is written to twice."
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
            "--no-audit",
            action="store_true",
            help="load only; skip the simulated past weeks and today's full audit",
        )
        parser.add_argument(
            "--no-history",
            action="store_true",
            help="skip the simulated past weeks (the program page then starts empty)",
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
        if not settings.PRODUCTION:
            _keep_passwords(result.logins)
        self._report_import(result)
        if not (options["no_audit"] or options["no_history"]):
            self._build_history()
        if not options["no_audit"]:
            self.stdout.write("")
            self.stdout.write("Auditing every vanpool:")
            # Outreach runs here, not on a worker: the demo shows its emails at once.
            newest = _newest_outbound_pk()
            with run_inline():
                call_command("audit_vanpools", "--all", stdout=self.stdout, stderr=self.stderr)
            self._report_outreach(newest)
        self._report_logins(result)

    def _build_history(self) -> None:
        self.stdout.write("")
        self.stdout.write("Simulating the past weeks through the real workflow:")
        try:
            # Hundreds of workflow steps, each logged at its simulated moment: the
            # summary below says what they added up to.
            with _quiet_logs():
                history = build_history()
        except HistoryRefused as exc:
            self.stdout.write(self.style.WARNING(f"  skipped: {exc}."))
            return
        self.stdout.write(f"  {history_text(history)}")

    def _report_outreach(self, newest_before: int) -> None:
        # Only this run's messages: a re-run writes to nobody already written to.
        made_now = Message.objects.filter(direction="outbound", pk__gt=newest_before)
        if not made_now.exists():
            self.stdout.write("Outreach: no new emails to flagged riders.")
            return
        sent = made_now.filter(status="sent").count()
        where = (
            f" (written to {settings.EMAIL_FILE_PATH})"
            if sent and settings.EMAIL_BACKEND.endswith("filebased.EmailBackend")
            else ""
        )
        unsent = made_now.count() - sent
        not_yet = f"; {unsent} not sent yet" if unsent else ""
        self.stdout.write(f"Outreach: {sent} emails to flagged riders{where}{not_yet}.")

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


def history_text(history: HistoryResult) -> str:
    if not history.built:
        return "already there from an earlier run: nothing changed, nobody written to."
    assert history.first_day is not None and history.last_day is not None  # set when built
    span = f"{_short(history.first_day)} – {_short(history.last_day)}"
    return (
        f"Simulated {history.weeks} weeks of history ({span}): {history.opened} cases opened, "
        f"{history.resolved} resolved, {history.cancelled} cancelled, {history.dismissed} "
        f"dismissed; {history.emails} emails to riders, {history.replies} replies, "
        f"{history.decisions} decisions on the review queue."
    )


def _short(day: dt.date) -> str:
    return f"{day:%b} {day.day}"  # "Sep 7": strftime's unpadded day is not portable


@contextmanager
def _quiet_logs() -> Iterator[None]:
    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        root.setLevel(level)


def _newest_outbound_pk() -> int:
    newest = Message.objects.filter(direction="outbound").order_by("-pk").first()
    return newest.pk if newest else 0


def _logins_file() -> Path:
    return Path(settings.VAR_DIR) / LOGINS_FILE_NAME


def _shown(path: Path) -> str:
    base = Path(settings.BASE_DIR)
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)


def _kept_passwords() -> dict[str, str]:
    try:
        text = _logins_file().read_text(encoding="utf-8")
    except OSError:
        return {}
    pairs = (line.split(None, 1) for line in text.splitlines() if not line.startswith("#"))
    return {pair[0]: pair[1].strip() for pair in pairs if len(pair) == 2}


def _keep_passwords(logins: list[DemoLogin]) -> None:
    set_now = {login.username: login.password for login in logins if login.password}
    if not set_now:
        return
    kept = _kept_passwords() | set_now
    path = _logins_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "# The demo logins' passwords, as manage.py load_demo last set them.",
        *(f"{username} {password}" for username, password in sorted(kept.items())),
    ]
    # Created private: the file holds passwords.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")


def _password_text(login: DemoLogin) -> str:
    if login.password:
        return f"password: {login.password}"
    kept = _kept_passwords().get(login.username)
    user = get_user_model().objects.filter(username=login.username).first()
    # Pointed to only while it is still right (no rehash: a changed hash would log people out).
    if kept and user is not None and check_password(kept, user.password):
        where = _shown(_logins_file())
        return f"password: unchanged, kept in {where} (--reset-passwords sets a new one)"
    return "password: unchanged (--reset-passwords sets a new one)"
