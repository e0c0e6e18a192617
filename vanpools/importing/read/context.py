"""What reading a file finds besides rows: errors, and warnings about what it skipped."""

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from vanpools.importing.columns import COLUMNS
from vanpools.importing.mapping.load import typo_distance
from vanpools.importing.mapping.spec import KindMapping, RosterMapping
from vanpools.importing.result import RowError, plural


@dataclass
class Reading:
    """What reading the file found besides rows: errors, and warnings about what it skipped."""

    source: str
    mapping: RosterMapping | None
    errors: list[RowError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def spec(self, kind: str) -> KindMapping:
        found = self.mapping.for_kind(kind) if self.mapping else None
        return found or KindMapping()

    def error(self, where: str, column: str, message: str) -> None:
        self.errors.append(RowError(where, column, message))

    def unknown_columns(self, kind: str, unknown: dict[str, list[str]]) -> None:
        """Columns the roster has no place for: one line for all rows, not one per row.

        With a mapping they are ignored (HR exports carry level, manager, cost
        centre…); without one they are errors, as a typo would lose data.
        """
        if not unknown:
            return
        if self.mapping is not None:
            names = ", ".join(sorted(unknown, key=str.lower))
            self.warnings.append(
                f"{kind}: ignored {plural(len(unknown), 'column')} the mapping does not use: "
                f"{names}"
            )
            return
        for column, places in unknown.items():
            rows = f" (in {plural(len(places), 'row')})" if len(places) > 1 else ""
            hint = "" if suggest(column, COLUMNS[kind]) else MAPPING_HINT
            self.error(places[0], column, unknown_column(column, kind) + rows + hint)


MAPPING_HINT = "; a mapping file (--mapping) can map it to a roster column or ignore it"


def unknown_column(name: object, kind: str) -> str:
    return "unknown column" + suggest(str(name), COLUMNS[kind])


def suggest(name: object, known: Iterable[str]) -> str:
    """A "did you mean" only for what looks like a slip of the keys.

    difflib alone calls ``level`` (an HR export's grade column) close to
    ``leave``, which sent administrators renaming the wrong column. A hint is
    given for one typo (two in a long name: a letter dropped, added, changed
    or two swapped) or for the known name with a part added or cut
    (``home_zipcode`` → ``home_zip``).
    """
    given = str(name).strip().lower()
    for candidate in difflib.get_close_matches(given, list(known), n=3):
        if typo_distance(given, candidate) <= (1 if len(candidate) <= 6 else 2) or (
            min(len(given), len(candidate)) >= 5
            and (given.startswith(candidate) or candidate.startswith(given))
        ):
            return f"; did you mean {candidate}?"
    return ""
