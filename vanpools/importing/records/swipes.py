"""Gate badge swipes: each employee's swipes at a work site, in the site's wall-clock time.

A file is the whole truth for the sites it names over the dates it covers (its
first to its last swipe at each site, or ``--period``): swipes stored there and
then that it no longer holds are removed, and what it covers is recorded. A
swipe with no site is at the employee's work site.
"""

import datetime as dt
from collections import defaultdict

from vanpools.importing.records.base import (
    Known,
    RecordKind,
    batches,
    coverage_rows,
    insert_rows,
)
from vanpools.importing.records.read import Cells, Source
from vanpools.models import BadgeSwipe, DataCoverage

Key = tuple[int, dt.date, dt.time, str]  # employee pk, date, time, gate


class BadgeSwipes(RecordKind):
    kind = "badge_swipes"

    def __init__(
        self, source: Source, known: Known, period: tuple[dt.date, dt.date] | None
    ) -> None:
        super().__init__(source, known, period)
        self.swipes: dict[Key, tuple[str, str]] = {}  # → (site, direction)
        self.dates: dict[str, list[dt.date]] = defaultdict(list)
        self.stored: dict[Key, tuple[int, tuple[str, str]]] = {}
        self.create: list[Key] = []
        self.remove: list[int] = []
        self.coverage: list[DataCoverage] = []

    def add(self, where: str, cells: Cells) -> None:
        values, ok = self.read(where, cells)
        person = self.employee(where, values["employee_id"]) if "employee_id" in values else None
        if not ok or person is None:
            return
        at = values.get("swiped_at")
        if at is None and not {"date", "time"} <= set(values):
            self.source.error(where, "swiped_at", "a value is required (or date and time)")
            return
        day, time = (at.date(), at.time()) if at else (values["date"], values["time"])
        if self.period and not self.period[0] <= day <= self.period[1]:
            self.source.error(where, "swiped_at", f"{day} is outside --period")
            return
        site = values.get("site") or person[1]
        key = (person[0], day, time, values.get("gate", ""))
        self.swipes[key] = (site, values.get("direction", ""))
        seen = self.dates[site]
        seen[:] = [min(seen[0], day), max(seen[1], day)] if seen else [day, day]

    def scope(self) -> dict[str, tuple[dt.date, dt.date]]:
        if self.period:
            return {site: self.period for site in self.dates}
        return {site: (first, last) for site, (first, last) in self.dates.items()}

    def plan(self) -> None:
        for site, (start, end) in self.scope().items():
            rows = BadgeSwipe.objects.filter(site=site, date__range=(start, end)).values_list(
                "pk", "employee_id", "date", "time", "gate", "site", "direction"
            )
            for pk, employee, day, time, gate, stored_site, direction in rows.iterator(
                chunk_size=20_000
            ):
                self.stored[(employee, day, time, gate)] = (pk, (stored_site, direction))
        self.create = [
            key
            for key, fields in self.swipes.items()
            if self.stored.get(key, (0, None))[1] != fields
        ]
        self.remove = [
            pk for key, (pk, fields) in self.stored.items() if self.swipes.get(key) != fields
        ]
        # Rows that only moved between sites or changed direction: removed and made again.
        changed = len([key for key in self.create if key in self.stored])
        self.counts.created = len(self.create) - changed
        self.counts.updated = changed
        self.counts.unchanged = len(self.swipes) - len(self.create)
        self.counts.removed = len(self.remove) - changed
        self.coverage = coverage_rows(
            DataCoverage.Kind.BADGE_SWIPES, self.scope(), by_site=True, name=self.source.path.name
        )

    def write(self) -> None:
        for pks in batches(self.remove):
            BadgeSwipe.objects.filter(pk__in=pks).delete()
        insert_rows(
            BadgeSwipe,
            ("employee", "date", "time", "gate", "site", "direction"),
            ((*key, *self.swipes[key]) for key in self.create),
        )
        DataCoverage.objects.bulk_create(self.coverage)
