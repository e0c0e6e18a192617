"""What every record kind shares: the roster's IDs, cells read, counts, the kind's contract.

A kind is one class (``RecordKind``): ``add`` reads one row's cells into a
record (or errors), ``plan`` compares the file with what is stored, and
``write`` makes only the differences. ``run`` drives them.
"""

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Model

from vanpools.importing.cells import CellError
from vanpools.importing.records.kinds import COLUMNS, DATE_COLUMNS, REQUIRED
from vanpools.importing.records.read import Cells, Source
from vanpools.models import DataCoverage, Employee, Rider, Vanpool

T = TypeVar("T")
BATCH = 5000


@dataclass
class Known:
    """The roster's IDs, read once: vanpools and employees by their public ID."""

    vanpools: dict[str, tuple[int, str]]  # vanpool_id → (pk, work site)
    employees: dict[str, tuple[int, str, int | None]]  # → (pk, work site, seat's vanpool pk)
    _employee_ids: dict[int, str] | None = None

    @classmethod
    def load(cls) -> "Known":
        vanpools = {
            vanpool_id: (pk, site)
            for pk, vanpool_id, site in Vanpool.objects.values_list("pk", "vanpool_id", "work_site")
        }
        seats = dict(
            Rider.objects.filter(status=Rider.Status.ACTIVE).values_list(
                "employee_id", "vanpool_id"
            )
        )
        employees = {
            employee_id: (pk, site, seats.get(pk))
            for pk, employee_id, site in Employee.objects.values_list(
                "pk", "employee_id", "work_site"
            )
        }
        return cls(vanpools, employees)

    @property
    def employee_ids(self) -> dict[int, str]:
        """Employee pk → public ID (built once, when a kind needs to name a row)."""
        if self._employee_ids is None:
            self._employee_ids = {pk: eid for eid, (pk, _, _) in self.employees.items()}
        return self._employee_ids


@dataclass
class Counts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    changes: list[str] = field(default_factory=list)  # the first few, for the preview

    def change(self, text: str) -> None:
        if len(self.changes) < 20:
            self.changes.append(text)


class RecordKind:
    """One kind of record file; subclasses read rows into records and write the differences."""

    kind = ""

    def __init__(
        self, source: Source, known: Known, period: tuple[dt.date, dt.date] | None
    ) -> None:
        self.source = source
        self.known = known
        self.period = period
        self.counts = Counts()
        self._dates: dict[str, Any] = {}

    def read(self, where: str, cells: Cells) -> tuple[dict[str, Any], bool]:
        """The row's cells read by their column's reader, and whether all were good.

        A bad cell is an error and is left out; the good ones still name the
        row's vanpool or employee, so a row with a bad date also says that its
        vanpool is unknown.
        """
        values: dict[str, Any] = {}
        bad = False
        readers = COLUMNS[self.kind]
        for name, raw in cells.items():
            reader = readers.get(name)
            if reader is None:
                continue  # an unknown column: the header's error (or warning) says so once
            if name in DATE_COLUMNS and isinstance(raw, str) and raw in self._dates:
                values[name] = self._dates[raw]  # a million rows, a few dozen dates
                continue
            try:
                values[name] = reader(raw)
                if name in DATE_COLUMNS and isinstance(raw, str):
                    self._dates[raw] = values[name]
            except CellError as error:
                self.source.error(where, name, str(error))
                bad = True
        for name in self.required(values):
            if name not in values and name not in cells:
                self.source.error(where, name, "a value is required")
                bad = True
        return values, not bad

    def required(self, values: dict[str, Any]) -> Iterable[str]:
        return REQUIRED[self.kind]

    def vanpool(self, where: str, vanpool_id: str) -> tuple[int, str] | None:
        found = self.known.vanpools.get(vanpool_id)
        if found is None:
            self.source.error(
                where, "vanpool_id", f"no vanpool {vanpool_id} (import the roster first)"
            )
        return found

    def employee(
        self, where: str, employee_id: str, column: str = "employee_id"
    ) -> tuple[int, str, int | None] | None:
        found = self.known.employees.get(employee_id)
        if found is None:
            self.source.error(where, column, f"no employee {employee_id} (import the roster first)")
        return found

    def open(self) -> AbstractContextManager[None]:
        """Whatever the kind holds while a file is read (a large one's scratch tables)."""
        return nullcontext()

    def add(self, where: str, cells: Cells) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Every row is added: what can only be checked across rows is checked here."""

    def plan(self) -> None:
        """Compare the file with what is stored (fills ``counts``); writes nothing."""
        raise NotImplementedError

    def write(self) -> None:
        """Make the planned differences (inside the import's transaction)."""
        raise NotImplementedError

    def warnings(self) -> list[str]:
        return []


def insert_rows(
    model: type[Model], columns: Sequence[str], rows: Iterable[Sequence[object]]
) -> int:
    """Insert plain rows in batches with the driver's executemany: no model object per row.

    A month's trip log is a million rows; building a model instance for each was
    most of an import's time. Dates go through the backend's own adapter.
    """
    table = connection.ops.quote_name(model._meta.db_table)
    fields = [model._meta.get_field(name) for name in columns]
    names = ", ".join(connection.ops.quote_name(str(getattr(f, "column", ""))) for f in fields)
    marks = ", ".join(["%s"] * len(columns))
    sql = f"INSERT INTO {table} ({names}) VALUES ({marks})"
    adapted: dict[dt.date, object] = {}  # a file holds few distinct dates: adapt each once

    def adapt(value: Any) -> Any:
        if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            if value not in adapted:
                adapted[value] = connection.ops.adapt_datefield_value(value)
            return adapted[value]
        if isinstance(value, dt.time):
            return connection.ops.adapt_timefield_value(value)
        return value

    made = 0
    with connection.cursor() as cursor:
        for batch in batches(rows):
            cursor.executemany(sql, [tuple(map(adapt, row)) for row in batch])
            made += len(batch)
    return made


def batches(items: Iterable[T], size: int = BATCH) -> Iterator[list[T]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def span_of(dates: Iterable[dt.date]) -> tuple[dt.date, dt.date]:
    listed = list(dates)
    return min(listed), max(listed)


def coverage_rows(
    kind: str,
    spans: Mapping[Any, tuple[dt.date | None, dt.date | None]],
    *,
    by_site: bool,
    name: str,
) -> list[DataCoverage]:
    """The coverage rows a file adds: one per vanpool (or site) and span not yet recorded."""
    if not spans:
        return []
    where = "work_site__in" if by_site else "vanpool_id__in"
    stored = set(
        DataCoverage.objects.filter(kind=kind, **{where: list(spans)}).values_list(
            "work_site" if by_site else "vanpool_id", "start", "end"
        )
    )
    rows = []
    for key, (start, end) in spans.items():
        if (key, start, end) in stored:
            continue
        place = {"work_site": key} if by_site else {"vanpool_id": key}
        rows.append(DataCoverage(kind=kind, start=start, end=end, source_name=name[:200], **place))
    return rows
