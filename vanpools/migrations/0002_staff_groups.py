"""Create the Auditors and Coordinators groups with their permissions.

Auditors own the program in the admin: everything on Pool Patrol's models but
deleting what the audit trail depends on (cases, case events, agent
runs, riders, verifications, messages).
Coordinators read in the admin and work in the dashboard.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

APPS = ("vanpools", "cases", "outreach", "agents")
# The audit trail and the evidence it cites: kept for good.
NEVER_DELETED = {
    "delete_caseevent",
    "delete_agentrun",
    "delete_rider",
    "delete_verification",
    "delete_message",
    "delete_case",
}


def _ensure_permissions(apps):
    # Permissions are normally created after all migrations have run; make them now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None


def create_groups(apps, schema_editor):
    _ensure_permissions(apps)
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    ours = Permission.objects.filter(content_type__app_label__in=APPS)
    auditors, _ = Group.objects.get_or_create(name="Auditors")
    auditors.permissions.set(
        list(ours.exclude(codename__in=NEVER_DELETED))
        + list(
            Permission.objects.filter(
                content_type__app_label="django_q", codename__startswith="view_"
            )
        )
    )
    coordinators, _ = Group.objects.get_or_create(name="Coordinators")
    coordinators.permissions.set(ours.filter(codename__startswith="view_"))


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=["Auditors", "Coordinators"]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("vanpools", "0001_initial"),
        ("cases", "0001_initial"),
        ("outreach", "0001_initial"),
        ("agents", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]
    operations = [migrations.RunPython(create_groups, remove_groups)]
