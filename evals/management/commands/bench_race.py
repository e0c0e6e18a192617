"""Benchmark: an approval and the rider's "please don't cancel" reply, released together.

Against a server already running on this machine and using the same
database as this command (the same ``VAR_DIR`` or ``DATABASE_URL``): builds
``--tries`` cases in pre_cancel, then for each releases the approval
(``POST /queue/<pk>/decide/``) and the reply (the Postmark inbound webhook)
from two threads at once; every third reply is a delivery the product
cannot read, quarantined on the case's thread. Prints how many seats were
cancelled against a reply or quarantined message stored before the
approval committed (the goal is 0), and how the tries ended.

Loopback only, at most 500 tries. It writes cases, riders and a coordinator
into the server's database: point both at a scratch database.

    VAR_DIR=$(mktemp -d) && export VAR_DIR && manage.py migrate
    WEBHOOK_SECRET=bench:secret DEBUG=false SECURE_SSL_REDIRECT=false \\
        gunicorn -w 2 -b 127.0.0.1:8765 poolpatrol.wsgi &
    manage.py bench_race --url http://127.0.0.1:8765 --secret bench:secret --tries 100
"""

import logging
import secrets
import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evals import race
from evals.management.commands.bench_webhook import loopback_target

MAX_TRIES = 500
QUIET_LOGGERS = ("outreach", "agents", "cases", "caseloop", "django-q", "audit", "axes")


class Command(BaseCommand):
    help = "Race approvals against replies on a running server; count cancellations over a reply."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="the server's base URL")
        parser.add_argument("--secret", required=True, help='the webhook\'s "user:password"')
        parser.add_argument("--tries", type=int, default=100, help="races to run (100)")

    def handle(self, *args: object, **options: object) -> None:
        host, port, _ = loopback_target(str(options["url"]))
        tries = int(options["tries"])  # type: ignore[call-overload]
        if not 1 <= tries <= MAX_TRIES:
            raise CommandError(f"--tries {tries}: between 1 and {MAX_TRIES}")
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        run = secrets.token_hex(3)
        started = time.perf_counter()
        scenes = race.build_scenes(tries, run)
        cookies = race.coordinator_cookies(run)
        built = time.perf_counter()
        outcomes = race.race(f"http://{host}:{port}", str(options["secret"]), scenes, cookies)
        raced = time.perf_counter()
        broken = [o for o in outcomes if o.approve_status >= 500 or o.reply_status >= 500]
        against = race.count_against_replies(scenes)
        self.stdout.write(
            f"cancellations against a newer or quarantined reply: {against} of {tries}"
        )
        tallied = sorted(race.tally(scenes).items())
        ended = ", ".join(f"{status} {count}" for status, count in tallied)
        self.stdout.write(
            f"actions: {ended}; answers 5xx: {len(broken)} ({race.database_label()}; "
            f"scenes built in {built - started:.1f} s, raced in {raced - built:.1f} s)"
        )
