"""Auditors may clear a login lockout (Axes → Access attempts), as docs/dashboard.md says.

django-axes locks an account after repeated failed logins; until now only a
superuser could lift it. Auditors see and delete access attempts (deleting
one is what unlocks); coordinators do not.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

CODENAMES = ("view_accessattempt", "delete_accessattempt", "view_accessfailurelog")


def grant_to_auditors(apps, schema_editor):
    app_config = apps.get_app_config("axes")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    permissions = apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label="axes", codename__in=CODENAMES
    )
    for group in apps.get_model("auth", "Group").objects.filter(name="Auditors"):
        group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    permissions = apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label="axes", codename__in=CODENAMES
    )
    for group in apps.get_model("auth", "Group").objects.filter(name="Auditors"):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("vanpools", "0005_employee_home_zip_as_given"),
        ("axes", "0010_accessattemptexpiration"),
    ]

    operations = [migrations.RunPython(grant_to_auditors, revoke)]
