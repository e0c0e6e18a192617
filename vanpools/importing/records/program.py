"""Parking permits, a van's monthly report and the holiday calendar: upserted by their keys.

These are the program's records, not logs: a row updates the record its key
names (a permit's ID; a vanpool and month; a date and site) and rows the
file does not hold are left as they are. A permit list also records that the
program's permits are known (``DataCoverage``), so a rider with no permit
passes the parking check instead of being unknown.
"""

import datetime as dt
from typing import Any

from django.db import models

from vanpools.importing.records.base import Known, RecordKind
from vanpools.importing.records.read import Cells, Source
from vanpools.models import DataCoverage, Holiday, ParkingPermit, VanpoolMonth


class Upserted(RecordKind):
    """Rows keyed by a natural key; only rows whose fields differ are written."""

    model: type[models.Model]
    fields: tuple[str, ...] = ()

    def __init__(
        self, source: Source, known: Known, period: tuple[dt.date, dt.date] | None
    ) -> None:
        super().__init__(source, known, period)
        self.rows: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.create: list[tuple[Any, ...]] = []
        self.update: dict[tuple[Any, ...], models.Model] = {}

    def key(self, values: dict[str, Any]) -> tuple[Any, ...]:
        raise NotImplementedError

    def stored(self) -> dict[tuple[Any, ...], models.Model]:
        raise NotImplementedError

    def keep(self, where: str, key: tuple[Any, ...], fields: dict[str, Any], name: str) -> None:
        if key in self.rows:
            self.source.error(where, "", f"{name} appears twice in the file")
            return
        self.rows[key] = fields

    def plan(self) -> None:
        stored = self.stored()
        for key, fields in self.rows.items():
            row = stored.get(key)
            if row is None:
                self.create.append(key)
                continue
            changed = {name: value for name, value in fields.items() if getattr(row, name) != value}
            if changed:
                for name, value in changed.items():
                    setattr(row, name, value)
                self.update[key] = row
                shown = "; ".join(f"{name} → {value}" for name, value in changed.items())
                self.counts.change(f"{' '.join(map(str, key))}: {shown}")
        self.counts.created, self.counts.updated = len(self.create), len(self.update)
        self.counts.unchanged = len(self.rows) - len(self.create) - len(self.update)

    def write(self) -> None:
        self.model._default_manager.bulk_create(self.new(key) for key in self.create)
        if self.update:
            self.model._default_manager.bulk_update(list(self.update.values()), list(self.fields))

    def new(self, key: tuple[Any, ...]) -> models.Model:
        raise NotImplementedError


class Permits(Upserted):
    kind = "permits"
    model = ParkingPermit
    fields = ("employee_id", "lot", "valid_from", "valid_to", "status", "kind")

    def __init__(
        self, source: Source, known: Known, period: tuple[dt.date, dt.date] | None, site: str = ""
    ) -> None:
        super().__init__(source, known, period)
        self.site = site
        self.covered = False

    def add(self, where: str, cells: Cells) -> None:
        values, ok = self.read(where, cells)
        person = self.employee(where, values["employee_id"]) if "employee_id" in values else None
        if not ok or person is None:
            return
        if values.get("valid_to") and values["valid_to"] < values["valid_from"]:
            self.source.error(
                where,
                "valid_to",
                f"{values['valid_to']} is before valid_from {values['valid_from']}",
            )
            return
        fields = {
            "employee_id": person[0],
            "lot": values["lot"],
            "valid_from": values["valid_from"],
            "valid_to": values.get("valid_to"),
            "status": values.get("status", ParkingPermit.Status.ACTIVE),
            "kind": values.get("kind", ParkingPermit.Kind.STANDARD),
        }
        self.keep(where, (values["permit_id"],), fields, f"permit {values['permit_id']}")

    def stored(self) -> dict[tuple[Any, ...], models.Model]:
        ids = [key[0] for key in self.rows]
        return {(p.permit_id,): p for p in ParkingPermit.objects.filter(permit_id__in=ids)}

    def new(self, key: tuple[Any, ...]) -> models.Model:
        return ParkingPermit(permit_id=key[0], **self.rows[key])

    def plan(self) -> None:
        super().plan()
        self.covered = DataCoverage.objects.filter(
            kind=DataCoverage.Kind.PERMITS, work_site=self.site, vanpool=None, start=None, end=None
        ).exists()

    def write(self) -> None:
        super().write()
        if not self.covered:
            DataCoverage.objects.create(
                kind=DataCoverage.Kind.PERMITS,
                work_site=self.site,
                source_name=self.source.path.name[:200],
            )


class VanpoolMonths(Upserted):
    kind = "vanpool_months"
    model = VanpoolMonth
    fields = ("seats", "vehicle_miles", "miles_per_trip", "commute_share")

    def add(self, where: str, cells: Cells) -> None:
        values, ok = self.read(where, cells)
        found = self.vanpool(where, values["vanpool_id"]) if "vanpool_id" in values else None
        if not ok or found is None:
            return
        miles = values.get("odometer_miles")
        if miles is None and {"odometer_start", "odometer_end"} <= set(values):
            miles = values["odometer_end"] - values["odometer_start"]
            if miles < 0:
                self.source.error(where, "odometer_end", "is below odometer_start")
                return
        seats = values.get("seats")
        if seats is not None and not 1 <= seats <= 60:
            self.source.error(where, "seats", f"{seats} is not a number of seats (1 to 60)")
            return
        fields = {
            "seats": seats,
            "vehicle_miles": miles,
            "miles_per_trip": values.get("miles_per_trip"),
            "commute_share": values.get("commute_share"),
        }
        month = values["month"]
        self.keep(where, (found[0], month), fields, f"{values['vanpool_id']} {month:%Y-%m}")

    def stored(self) -> dict[tuple[Any, ...], models.Model]:
        vans = {key[0] for key in self.rows}
        months = {key[1] for key in self.rows}
        rows = VanpoolMonth.objects.filter(vanpool_id__in=vans, month__in=months)
        return {(row.vanpool_id, row.month): row for row in rows}

    def new(self, key: tuple[Any, ...]) -> models.Model:
        return VanpoolMonth(vanpool_id=key[0], month=key[1], **self.rows[key])


class Holidays(Upserted):
    kind = "holidays"
    model = Holiday
    fields = ("name",)

    def add(self, where: str, cells: Cells) -> None:
        values, ok = self.read(where, cells)
        if not ok:
            return
        key = (values["date"], values.get("work_site", ""))
        self.keep(where, key, {"name": values["name"]}, f"{key[0]} {key[1] or 'every site'}")

    def stored(self) -> dict[tuple[Any, ...], models.Model]:
        days = {key[0] for key in self.rows}
        return {(row.date, row.work_site): row for row in Holiday.objects.filter(date__in=days)}

    def new(self, key: tuple[Any, ...]) -> models.Model:
        return Holiday(date=key[0], work_site=key[1], **self.rows[key])
