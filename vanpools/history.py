"""The history of every roster record: who or what changed which field, and when.

Shifts, vanpools, employees, leave and seats each keep a historical table
(django-simple-history): every save, delete and importer bulk write adds a
row with the record as it then was, the date, the user (from the request),
``history_source`` (the door or process: admin, dashboard, api, email
provider, roster import, system; poolpatrol/change_source.py) and, in the
change reason, what names it (the roster upload or file).

simple-history records ``save()`` and ``delete()`` through signals, which
``bulk_create``, ``bulk_update`` and ``QuerySet.update`` do not send: every
such write of a tracked model goes through the helpers here instead, so it
is recorded in the same transaction with the same source.

django-simple-history, not django-pghistory: pghistory's triggers are
PostgreSQL's only (on SQLite, the embedded default, it installs none and
records nothing). The import's cost with history on is timed by
``manage.py bench_import``.
"""

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from django.db import models, transaction
from django.dispatch import receiver
from django.utils import timezone
from simple_history.models import HistoricalRecords
from simple_history.signals import pre_create_historical_record
from simple_history.utils import bulk_create_with_history, get_history_manager_for_model

from poolpatrol.change_source import SOURCES, SYSTEM, current_source

_M = TypeVar("_M", bound=models.Model)
# Rows per UPDATE: within SQLite's 999 query parameters for a few fields' CASE branches.
UPDATE_BATCH = 200


class ChangeRecord(models.Model):
    """What every historical row adds to simple-history's own fields."""

    history_source = models.CharField(
        "source",
        max_length=20,
        default=SYSTEM,
        choices=[(source, source) for source in SOURCES],
        help_text="Where the change came from: the admin, the dashboard, the API, the email "
        "provider, the roster import or the system.",
    )

    class Meta:
        abstract = True


def tracked(*, excluded: Sequence[str] = ()) -> HistoricalRecords:
    """The history a roster model keeps (``excluded``: fields whose changes are noise)."""
    return HistoricalRecords(
        bases=[ChangeRecord],
        excluded_fields=list(excluded),
        # The roster upload or file that made the change, or a person's reason.
        history_change_reason_field=models.TextField(null=True, blank=True),
    )


@receiver(pre_create_historical_record, dispatch_uid="vanpools.history.source")
def _note_the_source(sender: Any, history_instance: Any, **kwargs: Any) -> None:
    """Each row saved one at a time is stamped with the source in force."""
    source = current_source()
    history_instance.history_source = source.source
    if not history_instance.history_change_reason and source.detail:
        history_instance.history_change_reason = source.detail


def bulk_create_recorded(model: type[_M], objects: Iterable[_M]) -> list[_M]:
    """``model.objects.bulk_create(objects)`` with a history row for each, one transaction."""
    rows = list(objects)
    if not rows:
        return []
    source = current_source()
    created: list[_M] = bulk_create_with_history(
        rows,
        model,
        default_change_reason=source.detail or None,
        custom_historical_attrs={"history_source": source.source},
    )
    return created


def bulk_update_recorded(model: type[_M], objects: Iterable[_M], fields: Sequence[str]) -> None:
    """``model.objects.bulk_update(objects, fields)`` with a history row for each.

    ``bulk_update`` applies no ``auto_now``: a model's ``updated_at`` is set here,
    in a plain UPDATE of its own (one CASE branch per row and field is what makes
    ``bulk_update`` slow, and the time is the same for every row).
    """
    rows = list(objects)
    if not rows:
        return
    manager = model._default_manager
    stamped = any(field.name == "updated_at" for field in model._meta.concrete_fields)
    now = timezone.now()
    with transaction.atomic(savepoint=False):
        if fields:
            manager.bulk_update(rows, list(fields), batch_size=UPDATE_BATCH)
        if stamped:
            for row in rows:
                row.updated_at = now  # type: ignore[attr-defined]
            pks = [row.pk for row in rows]
            for start in range(0, len(pks), UPDATE_BATCH):
                manager.filter(pk__in=pks[start : start + UPDATE_BATCH]).update(updated_at=now)
        record_updates(model, rows)


def record_updates(model: type[_M], objects: Iterable[_M]) -> None:
    """A history row for each of ``objects`` changed by ``QuerySet.update`` (read back first)."""
    rows = list(objects)
    if not rows:
        return
    source = current_source()
    history = get_history_manager_for_model(model)
    history.bulk_history_create(
        rows,
        update=True,
        default_change_reason=source.detail or None,
        custom_historical_attrs={"history_source": source.source},
    )
