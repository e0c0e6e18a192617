"""Stored case records keep a rider's home source and distance, not the point.

Evidence, rider flags, case meta, events, actions, reviews and lessons written
before the location check stopped quoting junk home coordinates ("the stored
home coordinates (-74.0, 40.7) …", often a real home with its latitude and
longitude swapped) are rewritten through ``poolpatrol.privacy.withhold_home_points``.
"""

from django.db import migrations

BATCH = 500

FIELDS = {
    "Case": ["meta"],
    "Verification": ["reasoning", "evidence", "rider_flags"],
    "CaseEvent": ["note", "data"],
    "PendingAction": ["payload", "note", "result"],
    "CaseReview": ["issues", "feedback"],
    "CaseLesson": ["key_signals", "sentence"],
}


def withhold(apps, schema_editor):
    from poolpatrol.privacy import withhold_home_points

    for model_name, fields in FIELDS.items():
        model = apps.get_model("cases", model_name)
        changed = []
        for row in model.objects.only("pk", *fields).iterator(BATCH):
            new = {name: withhold_home_points(getattr(row, name)) for name in fields}
            if any(new[name] != getattr(row, name) for name in fields):
                for name, value in new.items():
                    setattr(row, name, value)
                changed.append(row)
            if len(changed) >= BATCH:
                model.objects.bulk_update(changed, fields)
                changed = []
        model.objects.bulk_update(changed, fields)


class Migration(migrations.Migration):
    dependencies = [
        ("cases", "0006_pending_action_collapse_key"),
    ]

    operations = [migrations.RunPython(withhold, migrations.RunPython.noop, elidable=True)]
