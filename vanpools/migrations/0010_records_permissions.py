"""The staff groups' permissions on the ridership, parking and monthly records.

Auditors edit permits, monthly reports, holidays and coverage; trips, ride
days and badge swipes are logs they read (imports replace them; the admin
shows them read-only). Coordinators read all of them.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

EDITED = ("parkingpermit", "vanpoolmonth", "holiday", "datacoverage")
LOGS = ("trip", "rideday", "badgeswipe")


def grant(apps, schema_editor):
    app_config = apps.get_app_config("vanpools")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    ours = Permission.objects.filter(content_type__app_label="vanpools")
    views = ours.filter(codename__in=[f"view_{model}" for model in EDITED + LOGS])
    edits = ours.filter(
        codename__in=[f"{verb}_{model}" for model in EDITED for verb in ("add", "change", "delete")]
    )
    for group in Group.objects.filter(name="Auditors"):
        group.permissions.add(*views, *edits)
    for group in Group.objects.filter(name="Coordinators"):
        group.permissions.add(*views)


def revoke(apps, schema_editor):
    codenames = [f"{verb}_{m}" for m in EDITED + LOGS for verb in ("add", "change", "delete", "view")]
    permissions = apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label="vanpools", codename__in=codenames
    )
    for group in apps.get_model("auth", "Group").objects.filter(name__in=["Auditors", "Coordinators"]):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [("vanpools", "0009_ridership_parking_vanpool_facts")]

    operations = [migrations.RunPython(grant, revoke)]
