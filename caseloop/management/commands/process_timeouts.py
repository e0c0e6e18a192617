"""manage.py process_timeouts [--now ISO-DATETIME] — the deadline sweep, once."""

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from caseloop.loop.deadlines import process_timeouts


def parse_now(value: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(
            f"--now {value!r} is not a date-time (YYYY-MM-DDTHH:MM[:SS][+HH:MM])"
        ) from None
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment)


class Command(BaseCommand):
    help = (
        "Send reminders, re-audit cases whose reply deadline passed (pass → resolved, "
        "fail → pre-cancel), retry failed sends. Safe to run twice."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--now", help="act as if it were this moment (program time unless an offset is given)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        now = parse_now(options["now"]) if options["now"] else timezone.now()
        counts = process_timeouts(now)
        self.stdout.write(
            f"reminders {counts['reminders']} · timed out {counts['timeouts']} "
            f"(resolved {counts['resolved']}, pre-cancel {counts['pre_cancel']}) · "
            f"sends retried {counts['sends_retried']} · stuck sends {counts['sends_stuck']}"
        )
