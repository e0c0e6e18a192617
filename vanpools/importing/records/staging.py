"""Scratch tables for a large record file: its rows wait in the database, not in memory.

A month's trip log for a large program is a million trips and three million
days aboard. Held as Python objects that was two gigabytes; staged in
temporary tables (private to this connection, dropped when the import ends,
never part of the stored data) it is a few megabytes of buffers, and the
comparison with the stored rows is a handful of set-based queries the
database runs in C.

Every scratch table's name starts with ``STAGE_PREFIX``: statements writing
them are the import's working space, not writes to stored data (the
"re-import writes nothing" checks and benchmarks leave them out).
"""

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import DatabaseError, connection
from django.db.models import Model

STAGE_PREFIX = "import_stage_"
BUFFER_ROWS = 5000


def stage_table(name: str) -> str:
    return f"{STAGE_PREFIX}{name}"


WRITTEN_TABLE = re.compile(
    r"\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|DELETE\s+FROM|UPDATE)\s+[\"`]?(\w+)",
    re.IGNORECASE,
)


def writes_stored_data(sql: str) -> bool:
    """Whether a statement writes a stored table (not only the import's scratch ones).

    True for any write whose target this cannot name, so a check built on it
    errs towards counting a write.
    """
    written = WRITTEN_TABLE.match(sql)
    return written is None or not written[1].lower().startswith(STAGE_PREFIX)


class Staging:
    """The scratch tables of one import, and buffered inserts into them."""

    def __init__(self, tables: dict[str, str]) -> None:
        self.tables = tables  # short name → column definitions
        self.made: list[str] = []
        self.buffers: dict[str, list[Sequence[Any]]] = {name: [] for name in tables}
        self.dates: dict[dt.date, object] = {}

    @contextmanager
    def open(self) -> Iterator["Staging"]:
        failed = False
        journal = self._unjournaled()
        try:
            for name, columns in self.tables.items():
                self.create(name, f"({columns})")
            yield self
        except BaseException:
            failed = True
            raise
        finally:
            self.drop(quietly=failed)
            if journal:
                self.execute(f"PRAGMA temp.journal_mode = {journal}")

    def _unjournaled(self) -> str:
        """SQLite: no rollback journal for the temporary schema; the mode it had.

        A scratch table reuses the pages an earlier import's freed, and SQLite
        copied each one to the journal file first: the second import of a
        million trips spent four times as long staging them. The scratch tables
        need no rollback (an import that fails drops them), and the journal of
        the stored tables is untouched.
        """
        if connection.vendor != "sqlite":
            return ""
        mode = str(self.rows("PRAGMA temp.journal_mode")[0][0])
        self.execute("PRAGMA temp.journal_mode = OFF")
        return mode

    def create(self, name: str, definition: str, params: Sequence[Any] = ()) -> None:
        """A scratch table: ``(columns)``, or ``AS SELECT …`` with its parameters."""
        table = stage_table(name)
        self.execute(f"DROP TABLE IF EXISTS {table}")  # left by an earlier import that died
        self.execute(f"CREATE TEMPORARY TABLE {table} {definition}", params)
        self.made.append(table)

    def create_as(self, name: str, select: str, params: Sequence[Any] = ()) -> int:
        """A scratch table made from a query; how many rows it holds."""
        self.create(name, f"AS {select}", params)
        return self.count(name)

    def index(self, name: str, columns: str) -> None:
        table = stage_table(name)
        self.execute(f"CREATE INDEX {table}_{columns.replace(', ', '_')} ON {table} ({columns})")

    def drop(self, *, quietly: bool = False) -> None:
        for table in reversed(self.made):
            try:
                self.execute(f"DROP TABLE IF EXISTS {table}")
            except DatabaseError:
                if not quietly:
                    raise  # nothing else went wrong: a failed drop is the error to see
        self.made.clear()

    def add(self, name: str, row: Sequence[Any]) -> None:
        buffer = self.buffers[name]
        buffer.append(row)
        if len(buffer) >= BUFFER_ROWS:
            self.flush(name)

    def flush(self, name: str | None = None) -> None:
        for each in [name] if name else list(self.buffers):
            buffer = self.buffers[each]
            if buffer:
                marks = ", ".join(["%s"] * len(buffer[0]))
                with connection.cursor() as cursor:
                    cursor.executemany(f"INSERT INTO {stage_table(each)} VALUES ({marks})", buffer)
                buffer.clear()

    def date(self, day: dt.date) -> object:
        """A date as the database takes it, adapted once (a file holds a few dozen)."""
        if day not in self.dates:
            self.dates[day] = connection.ops.adapt_datefield_value(day)
        return self.dates[day]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return max(int(cursor.rowcount), 0)

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return list(cursor.fetchall())

    def count(self, name: str) -> int:
        found = self.rows(f"SELECT COUNT(*) FROM {stage_table(name)}")
        return int(found[0][0])


def id_list_rows(table: str, column: str) -> str:
    """``table``'s rows joined with each ID of its comma-separated ``column`` (as ``j.value``).

    The one place the dialects differ: SQLite reads the list as a JSON array,
    PostgreSQL splits the text.
    """
    if connection.vendor == "postgresql":
        return f"{table} t CROSS JOIN LATERAL unnest(string_to_array(t.{column}, ',')) AS j(value)"
    return f"{table} t, json_each('[' || t.{column} || ']') AS j"


def table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def column(model: type[Model], name: str) -> str:
    return connection.ops.quote_name(str(getattr(model._meta.get_field(name), "column", "")))


def same(a: str, b: str) -> str:
    """Equal, with two NULLs equal too (``IS NOT DISTINCT FROM`` in every dialect)."""
    return f"({a} = {b} OR ({a} IS NULL AND {b} IS NULL))"
