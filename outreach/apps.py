from django.apps import AppConfig
from django.core import checks
from django.core.management import call_command
from django.db import connections
from django.db.models.signals import post_migrate


class OutreachConfig(AppConfig):
    name = "outreach"
    verbose_name = "Outreach email"

    def ready(self) -> None:
        from anymail.signals import inbound, tracking

        from outreach import providers, webhooks

        # dispatch_uid: connected once however often ready() runs.
        inbound.connect(webhooks.handle_inbound, dispatch_uid="outreach.webhooks.inbound")
        tracking.connect(webhooks.handle_tracking, dispatch_uid="outreach.webhooks.tracking")
        # A configured provider whose key or extra is missing: refuse to start.
        checks.register(providers.check_email_providers, "email")
        from outreach.inbound import quarantined_waiting
        from poolpatrol.health import WAITING_FOR_A_PERSON

        WAITING_FOR_A_PERSON["quarantined_messages"] = quarantined_waiting
        post_migrate.connect(
            create_cache_tables, sender=self, dispatch_uid="outreach.create_cache_tables"
        )


def create_cache_tables(using: str = "default", **kwargs: object) -> None:
    """The database caches' tables (django-q2's cluster stats: settings.CACHES), on migrate.

    Safe to repeat: createcachetable skips a table that exists. Not for a test
    database: Django's create_test_db runs createcachetable itself right after,
    and says so on stdout when the table is there already.
    """
    connection = connections[using]
    # A private helper of Django's, absent from its stubs; it names the test database.
    test_name = connection.creation._get_test_db_name()  # type: ignore[attr-defined]
    if connection.settings_dict["NAME"] == test_name:
        return
    call_command("createcachetable", database=using, verbosity=0)
