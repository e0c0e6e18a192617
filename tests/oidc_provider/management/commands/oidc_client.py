from typing import Any

from django.core.management.base import BaseCommand
from oauth2_provider.models import Application


class Command(BaseCommand):
    help = "Register (or update) a confidential OIDC client with its redirect URIs."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("client_id")
        parser.add_argument("secret")
        parser.add_argument("redirect_uris", nargs="+")

    def handle(self, client_id: str, secret: str, redirect_uris: list[str], **options: Any) -> None:
        app = Application.objects.filter(client_id=client_id).first() or Application(
            client_id=client_id, name=client_id
        )
        app.client_secret = secret
        app.client_type = Application.CLIENT_CONFIDENTIAL
        app.authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
        app.algorithm = Application.RS256_ALGORITHM
        app.redirect_uris = " ".join(dict.fromkeys(app.redirect_uris.split() + redirect_uris))
        # A company's own app: no consent page, as an employer's IdP is set up.
        app.skip_authorization = True
        app.save()
