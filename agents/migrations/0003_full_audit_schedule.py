"""The periodic full audit: every night at 02:30, program time.

catch_up is off in Q_CLUSTER, so a cluster that was down does not replay
missed nights in a burst.
"""

import datetime as dt

from django.db import migrations
from django.utils import timezone

NAME = "Full audit of every active vanpool"


def create_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    today = timezone.localdate()
    next_run = timezone.make_aware(dt.datetime.combine(today + dt.timedelta(days=1), dt.time(2, 30)))
    Schedule.objects.get_or_create(
        name=NAME,
        defaults={
            "func": "agents.tasks.audit_all_vanpools_task",
            "schedule_type": "D",
            "repeats": -1,
            "next_run": next_run,
        },
    )


def remove_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0002_agentrun_verification"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]
    operations = [migrations.RunPython(create_schedule, remove_schedule)]
