from typing import Any

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create or update a directory user and set their groups exactly."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("username")
        parser.add_argument("--password", required=True)
        parser.add_argument("--email", default="")
        parser.add_argument("--first-name", default="")
        parser.add_argument("--last-name", default="")
        parser.add_argument("--groups", nargs="*", default=[])

    def handle(self, username: str, **options: Any) -> None:
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(options["password"])
        user.email = options["email"]
        user.first_name = options["first_name"]
        user.last_name = options["last_name"]
        user.save()
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in options["groups"]])
