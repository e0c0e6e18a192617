"""One import's check stage: the file's tables, what is stored, and every error so far."""

from dataclasses import dataclass, field
from datetime import date

from django.utils import timezone

from vanpools.importing.check.known import Known
from vanpools.importing.columns import KINDS
from vanpools.importing.result import RowError
from vanpools.importing.rows import Row, Table


def _nothing_seen() -> dict[str, dict[str, Row]]:
    return {kind: {} for kind in KINDS}


@dataclass
class Checking:
    tables: dict[str, Table]
    known: Known
    errors: list[RowError]  # the read stage's, then each row's
    seen: dict[str, dict[str, Row]] = field(default_factory=_nothing_seen)  # ID → first row
    today: date = field(default_factory=timezone.localdate)

    def error(self, row: Row, column: str, message: str) -> None:
        self.errors.append(RowError(row.where, row.column(column) if column else "", message))

    def reported_missing(self, kind: str) -> set[str]:
        """Columns the header or the mapping check already named, not to repeat per row."""
        return self.tables[kind].missing_columns
