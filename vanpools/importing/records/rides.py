"""Trip logs (one row per trip, with its passengers) and ride-day rows (one per rider per day).

A file is the whole truth for the dates it covers on each vanpool it names
(its first to its last date there, or ``--period``): rows stored for those
vans and dates that the file no longer holds are removed, and what it covers
is recorded (``DataCoverage``), so a rider missing from a covered day was not
aboard. Each passenger's day aboard is a ``RideDay``; only differences are
written, so re-sending the same file writes nothing. Keys are packed into
single integers: a month of a large program is a million rows.
"""

import datetime as dt
import operator
from collections import defaultdict
from collections.abc import Iterator
from functools import reduce
from typing import Any

from django.db.models import Q

from vanpools.importing.records.base import (
    Known,
    RecordKind,
    batches,
    coverage_rows,
    insert_rows,
)
from vanpools.importing.records.read import Cells, Source
from vanpools.models import DataCoverage, RideDay, Trip

# van pk, day ordinal, employee pk → one int (employee pks below 2**21, days below 2**21).
SHIFT_VAN, SHIFT_DAY = 42, 21
# Conditions in one query of stored trips: each names a van and at most 500 trip IDs,
# so a query stays within SQLite's 32,766 parameters and its expression depth of 1,000.
TERMS_PER_QUERY = 50
MASK = (1 << 21) - 1


def pack(van: int, day: dt.date, employee: int) -> int:
    return (van << SHIFT_VAN) | (day.toordinal() << SHIFT_DAY) | employee


def unpack(key: int) -> tuple[int, dt.date, int]:
    return key >> SHIFT_VAN, dt.date.fromordinal((key >> SHIFT_DAY) & MASK), key & MASK


class Scoped(RecordKind):
    """Rows of vanpools over dates: the file replaces what is stored for them."""

    source_kind = ""  # RideDay.Source of the days aboard this kind makes

    def __init__(
        self, source: Source, known: Known, period: tuple[dt.date, dt.date] | None
    ) -> None:
        super().__init__(source, known, period)
        self.dates: dict[int, list[dt.date]] = defaultdict(list)  # van pk → first and last date
        self.aboard: dict[int, str | None] = {}  # packed (van, day, employee) → ref
        self.unknown_people: set[str] = set()
        self.existing: dict[int, int] = {}  # packed → the stored row's pk
        self.existing_refs: dict[int, str] = {}  # only where the ref is the file's to choose
        self.new_days: list[int] = []
        self.gone_days: list[int] = []
        self.coverage: list[DataCoverage] = []

    def see(self, van: int, day: dt.date) -> None:
        seen = self.dates[van]
        if not seen:
            seen += [day, day]
        elif day < seen[0]:
            seen[0] = day
        elif day > seen[1]:
            seen[1] = day

    def scope(self) -> dict[int, tuple[dt.date, dt.date]]:
        if self.period:
            return {van: self.period for van in self.dates}
        return {van: (first, last) for van, (first, last) in self.dates.items()}

    def outside_period(self, where: str, day: dt.date) -> bool:
        if self.period and not self.period[0] <= day <= self.period[1]:
            self.source.error(
                where, "date", f"{day} is outside --period {self.period[0]}..{self.period[1]}"
            )
            return True
        return False

    def plan_days(self) -> None:
        scope = self.scope()
        if not scope:
            return
        fields = ["pk", "date", "employee_id"] + (["ref"] if self.refs_chosen else [])
        for van, (start, end) in scope.items():
            stored = RideDay.objects.filter(
                vanpool_id=van, source=self.source_kind, date__range=(start, end)
            ).values_list(*fields)
            for pk, day, employee, *ref in stored.iterator(chunk_size=20_000):
                key = pack(van, day, employee)
                self.existing[key] = pk
                if ref:
                    self.existing_refs[key] = ref[0]
        self.new_days = [key for key in self.aboard if not self._same(key)]
        self.gone_days = [
            key for key in self.existing if key not in self.aboard or not self._same(key)
        ]
        kind = DataCoverage.Kind.TRIPS if self.kind == "trips" else DataCoverage.Kind.RIDE_DAYS
        self.coverage = coverage_rows(kind, scope, by_site=False, name=self.source.path.name)

    def _same(self, key: int) -> bool:
        if key not in self.existing:
            return False
        return not self.refs_chosen or self.existing_refs.get(key) == self.aboard.get(key)

    refs_chosen = True  # False: a day's ref follows from its key (employee and date)

    def ref_of(self, key: int) -> str:
        return self.aboard[key] or ""

    def write_days(self) -> None:
        # A changed row is removed and made again: ride records are never edited
        # in place, which keeps the audit's fingerprint of them sound.
        for batch in batches(self.gone_days):
            RideDay.objects.filter(pk__in=[self.existing[key] for key in batch]).delete()
        insert_rows(
            RideDay,
            ("vanpool", "date", "employee", "source", "ref"),
            (
                (van, day, employee, self.source_kind, self.ref_of(key))
                for key in self.new_days
                for van, day, employee in [unpack(key)]
            ),
        )
        DataCoverage.objects.bulk_create(self.coverage)

    def warnings(self) -> list[str]:
        if not self.unknown_people:
            return []
        shown = ", ".join(sorted(self.unknown_people)[:5])
        more = (
            f", … and {len(self.unknown_people) - 5} more" if len(self.unknown_people) > 5 else ""
        )
        return [
            f"{self.kind}: {len(self.unknown_people)} passenger IDs are not employees on the "
            f"roster (counted in the trip's passengers, not as anyone's ride): {shown}{more}"
        ]


class RideDays(Scoped):
    kind = "ride_days"
    source_kind = RideDay.Source.RIDE_DAY
    refs_chosen = False

    def ref_of(self, key: int) -> str:
        _, day, employee = unpack(key)
        return f"{self.known.employee_ids[employee]} {day.isoformat()}"

    def add(self, where: str, cells: Cells) -> None:
        values, ok = self.read(where, cells)
        person = self.employee(where, values["employee_id"]) if "employee_id" in values else None
        van: int | None = None
        if "vanpool_id" in values:
            found = self.vanpool(where, values["vanpool_id"])
            van = found[0] if found else None
        elif person is not None:
            van = person[2]
            if van is None:
                self.source.error(
                    where, "vanpool_id", f"{values['employee_id']} has no seat: name the vanpool"
                )
        if not ok or person is None:
            return
        day = values["date"]
        if van is None or self.outside_period(where, day):
            return
        self.see(van, day)
        self.aboard[pack(van, day, person[0])] = None

    def plan(self) -> None:
        self.plan_days()
        self.counts.created = len(self.new_days)
        self.counts.removed = len(self.gone_days)
        self.counts.unchanged = len(self.aboard) - len(self.new_days)

    def write(self) -> None:
        self.write_days()


class Trips(Scoped):
    kind = "trips"
    source_kind = RideDay.Source.TRIP

    def __init__(
        self, source: Source, known: Known, period: tuple[dt.date, dt.date] | None
    ) -> None:
        super().__init__(source, known, period)
        self.trips: dict[tuple[int, str], tuple[Any, ...]] = {}  # (van, ref) → fields
        self.numbered: dict[tuple[int, dt.date, str], int] = defaultdict(int)
        self.create: list[tuple[int, str]] = []
        self.update: list[tuple[int, str]] = []
        self.remove: list[int] = []
        self.stored: dict[tuple[int, str], tuple[int, tuple[Any, ...]]] = {}

    def add(self, where: str, cells: Cells) -> None:
        values, ok = self.read(where, cells)
        found = self.vanpool(where, values["vanpool_id"]) if "vanpool_id" in values else None
        if not ok or found is None:
            return
        day = values["date"]
        if self.outside_period(where, day):
            return
        van = found[0]
        direction = values.get("direction", "")
        ref = values.get("trip_id") or self._ref(values["vanpool_id"], van, day, direction)
        if (van, ref) in self.trips:
            self.source.error(where, "trip_id", f"trip {ref} appears twice in the file")
            return
        driver = self._driver(where, values)
        named = values.get("passengers", [])
        people = [self.known.employees.get(person) for person in named]
        self.unknown_people.update(
            p for p, found in zip(named, people, strict=True) if found is None
        )
        aboard = {found[0] for found in people if found is not None}
        riders = len({p for p in named if p != values.get("driver_id")})
        count = riders if named else values.get("passenger_count", 0)
        self.see(van, day)
        self.trips[(van, ref)] = (day, direction, driver, count, values.get("miles"))
        for employee in aboard | ({driver} if driver else set()):
            self.aboard.setdefault(pack(van, day, employee), ref)

    def _ref(self, vanpool_id: str, van: int, day: dt.date, direction: str) -> str:
        # No trip ID in the export: one made from the van, date, direction and order,
        # the same every time the same file is sent.
        self.numbered[(van, day, direction)] += 1
        number = self.numbered[(van, day, direction)]
        return f"{vanpool_id}/{day.isoformat()}/{direction or 'trip'}/{number}"

    def _driver(self, where: str, values: dict[str, Any]) -> int | None:
        driver_id = values.get("driver_id")
        if not driver_id:
            return None
        found = self.known.employees.get(driver_id)
        if found is None:
            self.unknown_people.add(driver_id)
            return None
        return found[0]

    def plan(self) -> None:
        scope = self.scope()
        # One query per TERMS_PER_QUERY conditions: SQLite refuses an expression
        # tree deeper than 1,000, and a file of many vans has two conditions a van.
        for terms in batches(self._stored_trip_terms(scope), TERMS_PER_QUERY):
            rows = Trip.objects.filter(reduce(operator.or_, terms)).values_list(
                "pk",
                "vanpool_id",
                "trip_ref",
                "date",
                "direction",
                "driver_id",
                "passengers",
                "miles",
            )
            for pk, van, ref, *stored_fields in rows.iterator(chunk_size=20_000):
                self.stored[(van, ref)] = (pk, tuple(stored_fields))
        for key, fields in self.trips.items():
            stored = self.stored.get(key)
            if stored is None:
                self.create.append(key)
            elif stored[1] != fields:
                self.update.append(key)
                self.counts.change(f"trip {key[1]}: {_describe(stored[1])} → {_describe(fields)}")
        self.remove = [pk for key, (pk, _) in self.stored.items() if key not in self.trips]
        self.plan_days()
        # A trip whose riders changed is an updated trip, though its own row is not.
        touched = {self.aboard[key] for key in self.new_days} | {
            self.existing_refs.get(key) for key in self.gone_days
        }
        written = set(self.create) | set(self.update)  # sets: a list's `in` made this quadratic
        riders_changed = [
            key for key in self.trips if key[1] in touched and key not in written
        ]  # fmt: skip
        for key in riders_changed[:20]:
            self.counts.change(f"trip {key[1]}: who was aboard changed")
        self.counts.created = len(self.create)
        self.counts.updated = len(self.update) + len(riders_changed)
        self.counts.unchanged = len(self.trips) - self.counts.created - self.counts.updated
        self.counts.removed = len(self.remove)

    def _stored_trip_terms(self, scope: dict[int, tuple[dt.date, dt.date]]) -> Iterator[Q]:
        """The stored trips this file may replace: its vans' dates, and its trips by ID."""
        if not scope:
            return
        for van, (start, end) in scope.items():
            yield Q(vanpool_id=van, date__range=(start, end))
        refs_by_van: dict[int, list[str]] = defaultdict(list)
        for van, ref in self.trips:
            refs_by_van[van].append(ref)
        for van, refs in refs_by_van.items():  # a trip the file moved to another date
            for batch in batches(refs, 500):
                yield Q(vanpool_id=van, trip_ref__in=batch)

    def write(self) -> None:
        for pks in batches(self.remove):
            Trip.objects.filter(pk__in=pks).delete()
        for changed in batches(self.update):
            Trip.objects.filter(pk__in=[self.stored[key][0] for key in changed]).delete()
        insert_rows(
            Trip,
            ("vanpool", "trip_ref", "date", "direction", "driver", "passengers", "miles"),
            ((key[0], key[1], *self.trips[key]) for key in self.create + self.update),
        )
        self.write_days()


def _describe(fields: tuple[Any, ...]) -> str:
    day, direction, _, count, _ = fields
    return f"{day} {direction or 'trip'} with {count}"
