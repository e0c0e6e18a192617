"""What kind of rows a bare JSON list or a CSV holds, from its keys or header."""

from typing import NoReturn

from vanpools.importing.columns import COLUMNS, ID_COLUMNS, KINDS
from vanpools.importing.read.context import Reading
from vanpools.importing.result import fail


def kind_from_rows(rows: list[object], read: Reading) -> str:
    """What a bare JSON list holds, from its rows' keys, as a CSV's kind from its header.

    A list of vanpools or of shifts used to be read as employees (and every
    row refused) unless ``--kind`` was given.
    """
    keys = {str(key).strip().lower() for row in rows[:50] if isinstance(row, dict) for key in row}
    if not keys:
        fail(read.source, "expected a list of rows, each an object of column: value")
    kind = kind_of_names(sorted(keys), read)
    if kind is None:
        fail(
            read.source,
            "no employee_id, vanpool_id or shift_id key in the rows: cannot tell whether they "
            "are employees, vanpools or shifts (give --kind)",
        )
    return kind


def kind_of_names(names: list[str], read: Reading) -> str | None:
    """The kind whose ID column (or the mapping's source for it) is among the names."""
    mapped = [kind for kind in KINDS if read.mapping and read.mapping.for_kind(kind)]
    if len(mapped) == 1:
        return mapped[0]
    for kind in ("employees", "vanpools", "shifts"):
        recipe = read.spec(kind).columns.get(ID_COLUMNS[kind])
        sources = [path.split(".")[0].lower() for path in recipe.paths()] if recipe else []
        if ID_COLUMNS[kind] in names or any(source in names for source in sources):
            return kind
    return None


def kind_from_header(header: list[str]) -> NoReturn:
    """Fail with the reason no kind could be told from a header."""
    names = [name.lower() for name in header]
    if not any(name in COLUMNS[kind] for name in names for kind in KINDS):
        message = "the first line must be the header row naming the columns"
        shown = ", ".join(name for name in header[:5] if name)
        if shown:
            more = ", …" if len(header) > 5 else ""
            message += (
                f"; none of {shown}{more} is a roster column: another system's export needs "
                "a mapping file (--mapping) naming which of its columns feeds which"
            )
        fail("line 1", message)
    fail("line 1", "no employee_id, vanpool_id or shift_id column: cannot tell what the rows are")
