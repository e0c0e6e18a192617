"""History starts with the records as they are, and both staff groups may read it.

Each existing shift, vanpool, employee, leave and seat gets a first history
row (its values now, source "system"), so the first change after this
release shows what it was before.

SIMPLE_HISTORY_ENFORCE_HISTORY_MODEL_PERMISSIONS makes the history pages ask
for the historical model's own view permission. Coordinators read everything
in the admin, history included; the home fields in it are still for
view_home_address only (vanpools/admin_history.py).
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations
from django.utils import timezone

HISTORIES = (
    "historicalshift",
    "historicalvanpool",
    "historicalemployee",
    "historicalleave",
    "historicalrider",
)
CODENAMES = [f"view_{model}" for model in HISTORIES]


MODELS = ("Shift", "Vanpool", "Employee", "Leave", "Rider")
BATCH = 2000


def baseline(apps, schema_editor):
    now = timezone.now()
    for name in MODELS:
        model = apps.get_model("vanpools", name)
        history = apps.get_model("vanpools", f"Historical{name}")
        copied = [
            field.attname
            for field in history._meta.concrete_fields
            if not field.name.startswith("history_")
        ]
        rows = []
        for record in model.objects.order_by("pk").iterator(chunk_size=BATCH):
            values = {attname: getattr(record, attname) for attname in copied}
            rows.append(
                history(
                    **values,
                    history_date=now,
                    history_type="+",
                    history_source="system",
                    history_change_reason="history starts: the record as it was",
                )
            )
            if len(rows) >= BATCH:
                history.objects.bulk_create(rows)
                rows = []
        history.objects.bulk_create(rows)


def forget(apps, schema_editor):
    for name in MODELS:
        apps.get_model("vanpools", f"Historical{name}").objects.all().delete()


def grant(apps, schema_editor):
    app_config = apps.get_app_config("vanpools")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    permissions = apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label="vanpools", codename__in=CODENAMES
    )
    for group in apps.get_model("auth", "Group").objects.filter(
        name__in=["Auditors", "Coordinators"]
    ):
        group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    permissions = apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label="vanpools", codename__in=CODENAMES
    )
    for group in apps.get_model("auth", "Group").objects.filter(
        name__in=["Auditors", "Coordinators"]
    ):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [("vanpools", "0012_roster_history")]

    operations = [
        migrations.RunPython(baseline, forget),
        migrations.RunPython(grant, revoke),
    ]
