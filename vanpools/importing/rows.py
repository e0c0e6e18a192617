"""Rows as the read stage hands them on: roster cells, with where each came from.

Every source (a CSV, a JSON section, a vanpool's rider list) becomes Tables of
Rows in the roster's own column names; checking never sees a source's shape.
"""

from dataclasses import dataclass, field


@dataclass
class Row:
    where: str
    cells: dict[str, object]  # only the given cells: blank means "not given"
    # Mapped files: the source column or path each cell came from, for messages.
    sources: dict[str, str] = field(default_factory=dict)
    # A seat from a vanpool's rider list: only employee_id and the seat are given,
    # so the employee must exist and nothing else of them changes.
    partial: bool = False
    riders: object = None  # vanpools: the rider list as given, if any
    # Columns a mapping could not make (its error is already listed): not "missing" too.
    failed: set[str] = field(default_factory=set)

    def column(self, name: str) -> str:
        """How messages name a column: with its source when a mapping renamed it."""
        source = self.sources.get(name)
        return f"{name} (from {source})" if source and source.lower() != name else name


@dataclass
class Table:
    kind: str
    rows: list[Row]
    # Columns whose absence the header check already reported, so rows don't repeat it.
    missing_columns: set[str] = field(default_factory=set)
    # JSON: where the rows are, and the rows as given, to check the mapping's paths against.
    where: str = ""
    sources: list[object] | None = None


def is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def cell_text(row: Row, column: str) -> str:
    """A cell that names a record (an ID) as text; anything else is no name."""
    value = row.cells.get(column)
    return (
        str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    )
