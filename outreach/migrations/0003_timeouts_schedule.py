"""The deadline sweep (reminders, timeouts, send retries) every 15 minutes.

Idempotent: each case's expired deadline is claimed with a conditional
update, each email has an idempotency key, so an overlapping run is harmless.
"""

from django.db import migrations
from django.utils import timezone

NAME = "Outreach deadline sweep"


def create_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.get_or_create(
        name=NAME,
        defaults={
            "func": "outreach.tasks.process_timeouts_task",
            "schedule_type": "I",
            "minutes": 15,
            "repeats": -1,
            "next_run": timezone.now(),
        },
    )


def remove_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("outreach", "0002_message_attempts_message_cc_message_classification_and_more"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]
    operations = [migrations.RunPython(create_schedule, remove_schedule)]
