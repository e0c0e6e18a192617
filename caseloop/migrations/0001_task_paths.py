"""The task bodies live in caseloop.tasks: point the stored schedules there.

Schedules store the task as a dotted path; databases created before the task
bodies moved keep the old paths until this runs. Reversible.
"""

from django.db import migrations

MOVED = {
    "agents.tasks.audit_all_vanpools_task": "caseloop.tasks.audit_all_vanpools_task",
    "outreach.tasks.process_timeouts_task": "caseloop.tasks.process_timeouts_task",
}


def _rename(apps, mapping: dict[str, str]) -> None:
    Schedule = apps.get_model("django_q", "Schedule")
    for old, new in mapping.items():
        Schedule.objects.filter(func=old).update(func=new)


def forwards(apps, schema_editor):
    _rename(apps, MOVED)


def backwards(apps, schema_editor):
    _rename(apps, {new: old for old, new in MOVED.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0003_full_audit_schedule"),
        ("outreach", "0003_timeouts_schedule"),
    ]
    operations = [migrations.RunPython(forwards, backwards)]
