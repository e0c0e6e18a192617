import json
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand

from tests.oidc_provider.directory import set_user


class Command(BaseCommand):
    help = (
        "Migrate the provider's database, register the client, load the directory "
        "(a JSON object: username → user), and serve on 127.0.0.1:PORT."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("port", type=int)
        parser.add_argument("client_id")
        parser.add_argument("secret")
        parser.add_argument("redirect_uris", nargs="+")
        parser.add_argument("--directory", type=Path, required=True)

    def handle(self, port: int, client_id: str, secret: str, **options: Any) -> None:
        # One process for all of it: each Django start costs seconds on a busy machine.
        call_command("migrate", verbosity=0, interactive=False, run_syncdb=True)
        call_command("oidc_client", client_id, secret, *options["redirect_uris"])
        for username, person in json.loads(options["directory"].read_text()).items():
            set_user(username, person)
        call_command("runserver", f"127.0.0.1:{port}", use_reloader=False, skip_checks=True)
