"""Stored agent runs keep a rider's home source and distance, not the point.

Runs written before the audit withheld homes carry ``riders[].home = {lat,
lng}`` in their input (and the model's copy of the facts in ``user``), and a
junk point quoted in their output's sentences. This rewrites them through
``poolpatrol.privacy.withhold_home_points``: an append-only trail edited once,
on purpose, because it held what its readers may not see.
"""

from django.db import migrations

BATCH = 500


def withhold(apps, schema_editor):
    from poolpatrol.privacy import withhold_home_points

    AgentRun = apps.get_model("agents", "AgentRun")
    changed = []
    for run in AgentRun.objects.only("pk", "input", "output", "error").iterator(BATCH):
        new = {name: withhold_home_points(getattr(run, name)) for name in ("input", "output", "error")}
        if any(new[name] != getattr(run, name) for name in new):
            for name, value in new.items():
                setattr(run, name, value)
            changed.append(run)
        if len(changed) >= BATCH:
            AgentRun.objects.bulk_update(changed, ["input", "output", "error"])
            changed = []
    AgentRun.objects.bulk_update(changed, ["input", "output", "error"])


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0003_full_audit_schedule"),
    ]

    operations = [migrations.RunPython(withhold, migrations.RunPython.noop, elidable=True)]
