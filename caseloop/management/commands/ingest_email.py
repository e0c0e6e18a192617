"""manage.py ingest_email FILE.eml [--thread THREAD-…] [--queue]"""

from argparse import ArgumentParser
from contextlib import nullcontext
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from outreach.inbound import receive_raw
from outreach.models import EmailThread, Message
from poolpatrol.queue import run_inline


class Command(BaseCommand):
    help = (
        "Receive one raw email (.eml) as if the provider's webhook had posted it: "
        "stored once, matched to its thread, auto-replies and bounces set aside, "
        "a rider's reply classified and acted on now (or by a worker with --queue). "
        "--thread files it on a thread whatever its headers say (an email that "
        "could not be matched)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "file", type=Path, help="the raw message, e.g. saved from a mail client"
        )
        parser.add_argument("--thread", help="file it on this thread (THREAD-…)")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="leave the reply to the django-q2 workers instead of acting on it now",
        )

    def handle(
        self, *args: object, file: Path, thread: str | None, queue: bool, **options: object
    ) -> None:
        # Everything is checked before anything is stored.
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        force_thread = None
        if thread:
            force_thread = EmailThread.objects.filter(thread_id=thread.strip().upper()).first()
            if force_thread is None:
                raise CommandError(
                    f"{thread}: no such thread (thread IDs look like THREAD-1A2B3C4D)"
                )
        # An operator at a terminal wants to see what the reply did, without a
        # worker running; the work is the same task a worker would run.
        with nullcontext() if queue else run_inline():
            message, created = receive_raw(
                file.read_bytes(), provider="file", force_thread=force_thread
            )
        message.refresh_from_db()
        self.stdout.write(describe(message, created))
        if message.flags:
            self.stdout.write(f"flags: {', '.join(message.flags)}")
        case = message.thread.case if message.thread else None
        if created and case is not None:
            case.refresh_from_db()
            self.stdout.write(f"case {case.case_id}: {case.status}")


def describe(message: Message, created: bool) -> str:
    state = "stored" if created else "already stored, nothing changed"
    bucket = message.bucket
    return (
        f"{message.message_id} {state}: kind {message.kind or '-'}, status {message.status}"
        + (f" ({bucket})" if bucket else "")
        + f", thread {message.thread.thread_id if message.thread else '-'}"
    )
