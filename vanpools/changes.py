"""The changes that matter to a case's evidence, read from the roster's history.

A case cites its riders' home ZIPs, shifts, leave and seats and its vanpool's
pickup and schedule; when one of them changed ("home ZIP 94536 → 95376 on
2026-11-20, roster import"), the case page shows it beside the evidence, with
who or what changed it. Read in a fixed number of queries (one per history
table and one for the names of shifts and vanpools), whatever the case holds.

Home street addresses and coordinates are the home-address permission's
(poolpatrol/privacy.py): without it their changes are left out altogether.
"""

import datetime as dt
import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Model, QuerySet
from django.utils import timezone

from poolpatrol.privacy import HOME_FIELDS
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool
from vanpools.schedules import ScheduleError, describe_weekly, parse_weekly

# The fields a finding rests on, by model, with the words a person reads.
EMPLOYEE_FIELDS = {
    "home_zip": "home ZIP",
    "home_address": "home street address",
    "home_lat": "home latitude",
    "home_lng": "home longitude",
    "shift_id": "shift",
    "status": "status",
    "time_type": "time type",
    "work_site": "work site",
    "email": "email",
    "email_undeliverable_at": "email marked undeliverable",
}
VANPOOL_FIELDS = {
    "pickup_zip": "pickup ZIP",
    "pickup_address": "pickup point",
    "pickup_lat": "pickup latitude",
    "pickup_lng": "pickup longitude",
    "schedule": "van schedule",
    "max_commute_miles": "commute limit",
    "status": "status",
    "work_site": "work site",
}
SHIFT_FIELDS = {
    "schedule": "schedule",
    "rotation": "rotation",
    "schedule_text": "schedule as HR wrote it",
    "overnight": "overnight",
}


ADDED, CHANGED, REMOVED = "+", "~", "-"


@dataclass(frozen=True)
class RecordChange:
    """One field of one record, from one value to another, at one moment, by someone."""

    when: dt.datetime
    subject: str  # what it is about: "EMP-1003", "VP-101", "shift DAY"
    field: str  # what a person calls the field, or what happened to the record
    old: str
    new: str
    source: str  # poolpatrol/change_source.py's SOURCES
    detail: str = ""  # the roster upload or file, or a person's reason
    user: str = ""

    @property
    def by(self) -> str:
        """'roster import (upload roster.csv, by alice)'."""
        who = f"by {self.user}" if self.user else ""
        named = ", ".join(part for part in (self.detail, who) if part)
        return f"{self.source} ({named})" if named else self.source

    @property
    def what(self) -> str:
        """'home ZIP 94536 → 95376', or 'PTO 2026-12-21 – 2026-12-23 added'."""
        if self.old and self.new:
            return f"{self.field} {self.old} → {self.new}"
        return " ".join(part for part in (self.field, self.new or self.old) if part)

    @property
    def text(self) -> str:
        """'home ZIP 94536 → 95376 on 2026-11-20, roster import (file roster.csv)'."""
        return f"{self.what} on {timezone.localtime(self.when).date().isoformat()}, {self.by}"


def changes_for_case(
    employee_ids: Collection[str],
    vanpool_id: str,
    *,
    since: dt.datetime,
    may_see_home: bool,
    vanpools: QuerySet[Vanpool] | None = None,
) -> list[RecordChange]:
    """Changes since ``since`` to the riders, their shifts, seats and leave, and the vanpool.

    Oldest first. ``vanpools``, when given, are the vanpools the reader may
    see: a seat on any other is left out (it would name a vanpool outside
    their scope, docs/design.md#coordinators-scoped-to-their-sites).
    """
    ids = sorted(employee_ids)
    employee_fields = {
        name: label
        for name, label in EMPLOYEE_FIELDS.items()
        if may_see_home or name not in HOME_FIELDS
    }
    employees = _history(Employee, employee_id__in=ids)
    shifts = _history(Shift, id__in={row.shift_id for row in employees if row.shift_id})
    seats = _history(Rider, employee__employee_id__in=ids)
    if vanpools is not None:
        visible = set(vanpools.values_list("pk", flat=True))
        seats = [row for row in seats if row.vanpool_id in visible]
    names = {
        "shift_id": _latest(shifts, "shift_id"),
        "vanpool_id": dict(
            Vanpool.objects.filter(pk__in={row.vanpool_id for row in seats}).values_list(
                "pk", "vanpool_id"
            )
        ),
        # Seats and leave name their employee by pk.
        "employee": dict(
            Employee.objects.filter(employee_id__in=ids).values_list("pk", "employee_id")
        ),
    }
    changes = _field_changes(employees, employee_fields, since, names, lambda row: row.employee_id)
    changes += _field_changes(
        shifts, SHIFT_FIELDS, since, names, lambda row: f"shift {row.shift_id}"
    )
    changes += _seat_changes(seats, since, names)
    changes += _leave_changes(
        _history(Leave, employee__employee_id__in=ids, history_date__gte=since), names
    )
    changes += _field_changes(
        _history(Vanpool, vanpool_id=vanpool_id), VANPOOL_FIELDS, since, names, _vanpool_id
    )
    return sorted(changes, key=lambda change: change.when)  # stable: a row's fields in order


Names = dict[str, dict[Any, str]]


def _history(model: type[Model], **lookups: Any) -> list[Any]:
    """Every history row of the matching records, record by record, oldest first."""
    rows = model.history.filter(**lookups)  # type: ignore[attr-defined]
    return list(rows.select_related("history_user").order_by("id", "history_date", "history_id"))


def _vanpool_id(row: Any) -> str:
    return str(row.vanpool_id)


def _latest(rows: Iterable[Any], attname: str) -> dict[Any, str]:
    """pk → the record's latest ``attname`` (rows oldest first)."""
    return {row.id: str(getattr(row, attname)) for row in rows}


def _field_changes(
    rows: list[Any],
    fields: dict[str, str],
    since: dt.datetime,
    names: Names,
    subject: Any,
) -> list[RecordChange]:
    """Each field that differs between a record's consecutive rows, for rows since ``since``."""
    changes = []
    previous: Any = None
    for row in rows:
        if previous is not None and previous.id != row.id:
            previous = None
        if row.history_date >= since:
            if row.history_type == CHANGED and previous is not None:
                for attname, label in fields.items():
                    old, new = getattr(previous, attname), getattr(row, attname)
                    if old != new:
                        changes.append(
                            _change(
                                row,
                                subject(row),
                                label,
                                _shown(attname, old, names),
                                _shown(attname, new, names),
                            )
                        )
            elif row.history_type in (ADDED, REMOVED):
                happened = "added to the roster" if row.history_type == ADDED else "removed"
                changes.append(_change(row, subject(row), happened, "", ""))
        previous = row
    return changes


def _seat_changes(rows: list[Any], since: dt.datetime, names: Names) -> list[RecordChange]:
    """Seats taken, cancelled and re-dated: 'seat on VP-102 from 2026-11-20'."""
    changes = []
    previous: Any = None
    for row in rows:
        if previous is not None and previous.id != row.id:
            previous = None
        if row.history_date >= since:
            who = names["employee"].get(row.employee_id, "")
            van = names["vanpool_id"].get(row.vanpool_id, "")
            if row.history_type == ADDED:
                changes.append(_change(row, who, f"seat on {van}", "", f"from {row.joined}"))
            elif row.history_type == CHANGED and previous is not None:
                if previous.status != row.status:
                    changes.append(_change(row, who, f"seat on {van}", previous.status, row.status))
                if previous.joined != row.joined:
                    changes.append(
                        _change(
                            row, who, f"seat on {van} joined", str(previous.joined), str(row.joined)
                        )
                    )
        previous = row
    return changes


def _leave_changes(rows: list[Any], names: Names) -> list[RecordChange]:
    """Leave and PTO added or removed: 'PTO 2026-12-21 – 2026-12-23 added'."""
    changes = []
    for row in rows:
        if row.history_type not in (ADDED, REMOVED):
            continue
        kind = dict(Leave.Kind.choices).get(row.kind, row.kind)
        span = (
            f"{row.start_date} – {row.end_date}"
            if row.end_date != row.start_date
            else str(row.start_date)
        )
        done = "added" if row.history_type == ADDED else "removed"
        who = names["employee"].get(row.employee_id, "")
        changes.append(_change(row, who, f"{kind} {span}", "", done))
    return changes


def _change(row: Any, subject: str, field: str, old: str, new: str) -> RecordChange:
    user = row.history_user.get_username() if row.history_user is not None else ""
    return RecordChange(
        when=row.history_date,
        subject=subject,
        field=field,
        old=old,
        new=new,
        source=row.history_source,
        detail=row.history_change_reason or "",
        user=user,
    )


def _shown(attname: str, value: object, names: Names) -> str:
    """A stored value as a person reads it: IDs for links, dates, schedules in words."""
    if value is None or value == "":
        return "(blank)"
    if attname in names:
        return names[attname].get(value, str(value))
    if isinstance(value, dt.datetime):
        return timezone.localtime(value).strftime("%Y-%m-%d %H:%M")
    if attname == "schedule" and isinstance(value, list):
        try:
            return describe_weekly(parse_weekly(value)) or "(none)"
        except ScheduleError:
            return json.dumps(value)
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)
