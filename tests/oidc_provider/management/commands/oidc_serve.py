import json
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Migrate the provider's database, register the client, load the directory "
        "(a JSON list of users), and serve on 127.0.0.1:PORT."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("port", type=int)
        parser.add_argument("client_id")
        parser.add_argument("secret")
        parser.add_argument("redirect_uris", nargs="+")
        parser.add_argument("--directory", type=Path)

    def handle(self, port: int, client_id: str, secret: str, **options: Any) -> None:
        # One process for all of it: each Django start costs seconds on a busy machine.
        call_command("migrate", verbosity=0, interactive=False)
        call_command("oidc_client", client_id, secret, *options["redirect_uris"])
        if options["directory"]:
            for person in json.loads(options["directory"].read_text()):
                call_command("oidc_user", *person)
        call_command("runserver", f"127.0.0.1:{port}", use_reloader=False, skip_checks=True)
