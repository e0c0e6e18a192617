"""Trip logs (one row per trip, with its passengers) and ride-day rows (one per rider per day).

A file is the whole truth for the dates it covers on each vanpool it names
(its first to its last date there, or ``--period``): rows stored for those
vans and dates that the file no longer holds are removed, and what it covers
is recorded (``DataCoverage``), so a rider missing from a covered day was not
aboard. Each passenger's day aboard is a ``RideDay``; only differences are
written, so re-sending the same file writes nothing. A month of a large
program is a million trips: rows are read and checked one at a time into the
import's scratch tables (``staging``), and the file is compared with what is
stored there, in the database.
"""

import datetime as dt
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from vanpools.importing.records.base import Known, RecordKind, coverage_rows
from vanpools.importing.records.read import Cells, Source
from vanpools.importing.records.staging import (
    Staging,
    column,
    id_list_rows,
    same,
    stage_table,
    table,
)
from vanpools.models import DataCoverage, RideDay, Trip

DAY, TRIP, SCOPE = stage_table("day"), stage_table("trip"), stage_table("scope")
FILE_DAYS, STORED_DAYS = stage_table("day_file"), stage_table("day_stored")
NEW_DAYS, GONE_DAYS = stage_table("day_new"), stage_table("day_gone")
STORED_TRIPS, TRIP_PLAN = stage_table("trip_stored"), stage_table("trip_plan")
GONE_TRIPS = stage_table("trip_gone")
SCOPE_COLUMNS = "van BIGINT PRIMARY KEY, start_date DATE NOT NULL, end_date DATE NOT NULL"
DAY_COLUMNS = (
    "line INTEGER NOT NULL, van BIGINT NOT NULL, date DATE NOT NULL, employee BIGINT NOT NULL, "
    "ref TEXT NOT NULL"
)
DAY_FILE_COLUMNS = (
    "van BIGINT NOT NULL, date DATE NOT NULL, employee BIGINT NOT NULL, ref TEXT NOT NULL, "
    "UNIQUE (van, date, employee)"
)
TRIP_COLUMNS = (
    "line INTEGER PRIMARY KEY, place TEXT NOT NULL, van BIGINT NOT NULL, ref TEXT NOT NULL, "
    "date DATE NOT NULL, direction TEXT NOT NULL, driver BIGINT, passengers INTEGER NOT NULL, "
    "miles DOUBLE PRECISION, aboard TEXT NOT NULL"
)
DIRECTIONS = {"": 0, "to_work": 1, "from_work": 2}


class Scoped(RecordKind):
    """Rows of vanpools over dates: the file replaces what is stored for them."""

    source_kind = ""  # RideDay.Source of the days aboard this kind makes
    staged: dict[str, str] = {}

    def __init__(
        self, source: Source, known: Known, period: tuple[dt.date, dt.date] | None
    ) -> None:
        super().__init__(source, known, period)
        self.dates: dict[int, list[dt.date]] = defaultdict(list)  # van pk → first and last date
        self.unknown_people: set[str] = set()
        self.stage = Staging({"scope": SCOPE_COLUMNS, **self.staged})
        self.line = 0  # the rows staged so far: the file's order, which decides ties
        self.new_days = 0
        self.gone_days = 0
        self.file_days = 0
        self.coverage: list[DataCoverage] = []

    @contextmanager
    def open(self) -> Iterator[None]:
        with self.stage.open():
            yield

    def finish(self) -> None:
        self.stage.flush()

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

    def days_staged(self) -> str:
        """A query of the file's days aboard: line, van, date, employee, ref."""
        return DAY

    def plan_days(self) -> None:
        scope = self.scope()
        stage = self.stage
        for van, (start, end) in scope.items():
            stage.add("scope", (van, stage.date(start), stage.date(end)))
        stage.flush("scope")
        # A rider on two trips of a day is aboard once: the file's first trip names the
        # day. Rows go in in the file's order and a later one for the same day is skipped.
        stage.create("day_file", f"({DAY_FILE_COLUMNS})")
        stage.execute(
            f"INSERT INTO {FILE_DAYS} SELECT van, date, employee, ref FROM {self.days_staged()} "
            "x ORDER BY line ON CONFLICT DO NOTHING"
        )
        self.file_days = stage.count("day_file")
        r = RideDay
        stage.create_as(
            "day_stored",
            f"SELECT r.id, r.{column(r, 'vanpool')} AS van, r.{column(r, 'date')} AS date, "
            f"r.{column(r, 'employee')} AS employee, r.{column(r, 'ref')} AS ref "
            f"FROM {SCOPE} s JOIN {table(r)} r ON r.{column(r, 'vanpool')} = s.van "
            f"AND r.{column(r, 'date')} BETWEEN s.start_date AND s.end_date "
            f"WHERE r.{column(r, 'source')} = %s",
            [self.source_kind],
        )
        stage.index("day_stored", "van, date, employee")
        key = "a.van = b.van AND a.date = b.date AND a.employee = b.employee"
        if self.refs_chosen:
            key += " AND a.ref = b.ref"  # a day read from another trip is a changed day
        self.new_days = stage.create_as(
            "day_new",
            f"SELECT van, date, employee, ref FROM {FILE_DAYS} a "
            f"WHERE NOT EXISTS (SELECT 1 FROM {STORED_DAYS} b WHERE {key})",
        )
        self.gone_days = stage.create_as(
            "day_gone",
            f"SELECT id, van, ref FROM {STORED_DAYS} a "
            f"WHERE NOT EXISTS (SELECT 1 FROM {FILE_DAYS} b WHERE {key})",
        )
        kind = DataCoverage.Kind.TRIPS if self.kind == "trips" else DataCoverage.Kind.RIDE_DAYS
        self.coverage = coverage_rows(kind, scope, by_site=False, name=self.source.path.name)

    refs_chosen = True  # False: a day's ref follows from its key (employee and date)

    def write_days(self) -> None:
        # A changed row is removed and made again: ride records are never edited
        # in place, which keeps the audit's fingerprint of them sound.
        r = RideDay
        stage = self.stage
        stage.execute(f"DELETE FROM {table(r)} WHERE id IN (SELECT id FROM {GONE_DAYS})")
        names = ", ".join(
            column(r, name) for name in ("vanpool", "date", "employee", "source", "ref")
        )
        stage.execute(
            f"INSERT INTO {table(r)} ({names}) SELECT van, date, employee, %s, ref "
            f"FROM {NEW_DAYS} ORDER BY van, date, employee",
            [self.source_kind],
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
    staged = {"day": DAY_COLUMNS}

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
        self.line += 1
        ref = f"{values['employee_id']} {day.isoformat()}"
        self.stage.add("day", (self.line, van, self.stage.date(day), person[0], ref))

    def plan(self) -> None:
        self.plan_days()
        self.counts.created = self.new_days
        self.counts.removed = self.gone_days
        self.counts.unchanged = self.file_days - self.new_days

    def write(self) -> None:
        self.write_days()


class Trips(Scoped):
    kind = "trips"
    source_kind = RideDay.Source.TRIP
    staged = {"trip": TRIP_COLUMNS}

    def __init__(
        self, source: Source, known: Known, period: tuple[dt.date, dt.date] | None
    ) -> None:
        super().__init__(source, known, period)
        # Trips numbered for a file without trip IDs, by (van, day, direction) packed in an int.
        self.numbered: dict[int, int] = defaultdict(int)

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
        driver = self._driver(values)
        named = values.get("passengers", [])
        aboard = {driver} if driver else set()
        for person in named:
            seat = self.known.employees.get(person)
            if seat is None:
                self.unknown_people.add(person)
            else:
                aboard.add(seat[0])
        riders = len({p for p in named if p != values.get("driver_id")})
        count = riders if named else values.get("passenger_count", 0)
        self.see(van, day)
        self.line += 1
        self.stage.add(
            "trip",
            (
                self.line, where, van, ref, self.stage.date(day), direction, driver, count,
                values.get("miles"), ",".join(map(str, sorted(aboard))),
            ),
        )  # fmt: skip

    def _ref(self, vanpool_id: str, van: int, day: dt.date, direction: str) -> str:
        # No trip ID in the export: one made from the van, date, direction and order,
        # the same every time the same file is sent.
        key = (van << 24) | (day.toordinal() << 2) | DIRECTIONS[direction]
        self.numbered[key] += 1
        return f"{vanpool_id}/{day.isoformat()}/{direction or 'trip'}/{self.numbered[key]}"

    def _driver(self, values: dict[str, Any]) -> int | None:
        driver_id = values.get("driver_id")
        if not driver_id:
            return None
        found = self.known.employees.get(driver_id)
        if found is None:
            self.unknown_people.add(driver_id)
            return None
        return found[0]

    def finish(self) -> None:
        super().finish()
        self.stage.index("trip", "van, ref")
        twice = self.stage.rows(
            f"SELECT a.place, a.ref FROM {TRIP} a WHERE EXISTS (SELECT 1 FROM {TRIP} b "
            "WHERE b.van = a.van AND b.ref = a.ref AND b.line < a.line) ORDER BY a.line"
        )
        for where, ref in twice:
            self.source.error(where, "trip_id", f"trip {ref} appears twice in the file")

    def days_staged(self) -> str:
        return (
            "(SELECT t.line, t.van, t.date, CAST(j.value AS BIGINT) AS employee, t.ref "
            f"FROM {id_list_rows(TRIP, 'aboard')})"
        )

    def plan(self) -> None:
        self.plan_days()
        stage, t = self.stage, Trip
        fields = {
            "van": "vanpool", "ref": "trip_ref", "date": "date", "direction": "direction",
            "driver": "driver", "passengers": "passengers", "miles": "miles",
        }  # fmt: skip
        picked = "t.id, " + ", ".join(f"t.{column(t, f)} AS {name}" for name, f in fields.items())
        van, ref, day = (f"t.{column(t, f)}" for f in ("vanpool", "trip_ref", "date"))
        # The stored trips this file may replace: its vans' dates, and its trips by ID
        # (a trip the file moved to another date).
        stage.create_as(
            "trip_stored",
            f"SELECT {picked} FROM {SCOPE} s JOIN {table(t)} t ON {van} = s.van "
            f"AND {day} BETWEEN s.start_date AND s.end_date UNION "
            f"SELECT {picked} FROM {TRIP} f JOIN {table(t)} t ON {van} = f.van AND {ref} = f.ref",
        )
        stage.index("trip_stored", "van, ref")
        unchanged = " AND ".join(
            [f"s.{name} = f.{name}" for name in ("date", "direction", "passengers")]
            + [same(f"s.{name}", f"f.{name}") for name in ("driver", "miles")]
        )
        stage.create_as(
            "trip_plan",
            f"SELECT f.line, s.id AS stored_id, CASE WHEN s.id IS NULL THEN 'create' "
            f"WHEN {unchanged} THEN 'same' ELSE 'update' END AS act "
            f"FROM {TRIP} f LEFT JOIN {STORED_TRIPS} s ON s.van = f.van AND s.ref = f.ref",
        )
        acts = dict(stage.rows(f"SELECT act, COUNT(*) FROM {TRIP_PLAN} GROUP BY act"))
        self.counts.removed = stage.create_as(
            "trip_gone",
            f"SELECT s.id FROM {STORED_TRIPS} s WHERE NOT EXISTS "
            f"(SELECT 1 FROM {TRIP} f WHERE f.van = s.van AND f.ref = s.ref)",
        )
        for ref, *fields_then in stage.rows(
            "SELECT f.ref, s.date, s.direction, s.passengers, f.date, f.direction, f.passengers "
            f"FROM {TRIP_PLAN} p JOIN {TRIP} f ON f.line = p.line "
            f"JOIN {STORED_TRIPS} s ON s.id = p.stored_id WHERE p.act = 'update' "
            "ORDER BY p.line LIMIT 20"
        ):
            self.counts.change(
                f"trip {ref}: {_describe(*fields_then[:3])} → {_describe(*fields_then[3:])}"
            )
        riders_changed = self._riders_changed(acts.get("same", 0))
        self.counts.created = acts.get("create", 0)
        self.counts.updated = acts.get("update", 0) + riders_changed
        self.counts.unchanged = acts.get("same", 0) - riders_changed

    def _riders_changed(self, unchanged: int) -> int:
        """Trips whose own row is unchanged but who was aboard is not: updated trips too."""
        if not unchanged or not (self.new_days or self.gone_days):
            return 0
        stage = self.stage
        stage.index("day_new", "van, ref")
        stage.index("day_gone", "van, ref")
        touched = (
            f"FROM {TRIP_PLAN} p JOIN {TRIP} f ON f.line = p.line WHERE p.act = 'same' AND "
            f"(EXISTS (SELECT 1 FROM {NEW_DAYS} d WHERE d.van = f.van AND d.ref = f.ref) OR "
            f"EXISTS (SELECT 1 FROM {GONE_DAYS} d WHERE d.van = f.van AND d.ref = f.ref))"
        )
        for (ref,) in stage.rows(f"SELECT f.ref {touched} ORDER BY p.line LIMIT 20"):
            self.counts.change(f"trip {ref}: who was aboard changed")
        return int(stage.rows(f"SELECT COUNT(*) {touched}")[0][0])

    def write(self) -> None:
        stage, t = self.stage, Trip
        stage.execute(
            f"DELETE FROM {table(t)} WHERE id IN (SELECT id FROM {GONE_TRIPS} "
            f"UNION SELECT stored_id FROM {TRIP_PLAN} WHERE act = 'update')"
        )
        names = ", ".join(
            column(t, name)
            for name in (
                "vanpool",
                "trip_ref",
                "date",
                "direction",
                "driver",
                "passengers",
                "miles",
            )
        )
        stage.execute(
            f"INSERT INTO {table(t)} ({names}) SELECT f.van, f.ref, f.date, f.direction, "
            f"f.driver, f.passengers, f.miles FROM {TRIP_PLAN} p JOIN {TRIP} f ON f.line = p.line "
            "WHERE p.act IN ('create', 'update') ORDER BY p.line"
        )
        self.write_days()


def _describe(day: object, direction: str, count: int) -> str:
    return f"{day} {direction or 'trip'} with {count}"
