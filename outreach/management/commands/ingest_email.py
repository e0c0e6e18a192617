"""manage.py ingest_email FILE.eml [--thread THREAD-…]"""

from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from outreach.inbound import receive_raw
from outreach.models import EmailThread


class Command(BaseCommand):
    help = (
        "Receive one raw email (.eml) as if the provider's webhook had posted it: "
        "stored once, matched to its thread, auto-replies and bounces set aside, "
        "replies from riders queued for processing. --thread files it on a thread "
        "whatever its headers say (an email that could not be matched)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "file", type=Path, help="the raw message, e.g. saved from a mail client"
        )
        parser.add_argument("--thread", help="file it on this thread (THREAD-…)")

    def handle(self, *args: object, file: Path, thread: str | None, **options: object) -> None:
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
        message, created = receive_raw(
            file.read_bytes(), provider="file", force_thread=force_thread
        )
        state = "stored" if created else "already stored, nothing changed"
        self.stdout.write(
            f"{message.message_id} {state}: kind {message.kind or '-'}, status {message.status}, "
            f"thread {message.thread.thread_id if message.thread else '-'}"
        )
        if message.flags:
            self.stdout.write(f"flags: {', '.join(message.flags)}")
