"""A mapping checked against the rows it reads: paths that match nothing.

A mistyped path for an optional column (``pto``, ``title``, a point, the
rider list) gives no value on any row, which is also what a column left blank
gives: the import went through and the data was lost. A CSV header shows a
missing column at once (the importer refuses it); a JSON export has no
header, so the rows themselves are the evidence: a path that matches nothing
in any row of its kind is the mapping's mistake, named with what the rows do
hold.

Pure: no database, no importer state.
"""

import difflib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from vanpools.importing.mapping.recipes import MISSING, lookup
from vanpools.importing.mapping.spec import KindMapping, Recipe

# How far into a row the "did you mean" looks, and how many rows it reads.
SUGGEST_DEPTH = 4
SUGGEST_ROWS = 200


@dataclass(frozen=True)
class Unmatched:
    """A path of the mapping that no row holds."""

    column: str  # the roster column (or ``riders.id``) it was meant to feed
    path: str
    hint: str  # "; did you mean 'job.title'?" or ""


def unmatched_paths(spec: KindMapping, rows: Sequence[object]) -> list[Unmatched]:
    """Each path of the kind's recipes that is in none of the rows (none with no rows)."""
    objects = [row for row in rows if isinstance(row, dict)]
    if not objects:
        return []
    return [
        Unmatched(column, path, did_you_mean(path, objects))
        for column, recipe in spec.columns.items()
        for path in recipe.paths()
        if all(lookup(row, path) is MISSING for row in objects)
    ]


def unmatched_rider_keys(recipe: Recipe | None, riders: Iterable[object]) -> list[Unmatched]:
    """The rider recipe's ``id`` and ``joined`` keys, when no rider object holds them."""
    objects = [rider for rider in riders if isinstance(rider, dict)]
    if recipe is None or not objects:
        return []
    found = []
    for key in ("id", "joined"):
        path = getattr(recipe, key)
        if path and all(lookup(rider, path) is MISSING for rider in objects):
            found.append(Unmatched(f"riders.{key}", path, did_you_mean(path, objects)))
    return found


def did_you_mean(path: str, rows: Sequence[Mapping[str, object]]) -> str:
    """The closest path the rows do hold, as the rows write it."""
    written: dict[str, str] = {}
    for row in rows[:SUGGEST_ROWS]:
        for found in _paths(row, ""):
            written.setdefault(found.lower(), found)
    close = difflib.get_close_matches(path.strip().lower(), list(written), n=1, cutoff=0.6)
    return f"; did you mean '{written[close[0]]}'?" if close else ""


def _paths(value: object, prefix: str, depth: int = 0) -> Iterator[str]:
    """Every dotted path into a JSON value, lists by their first item (``stops.0.zip``)."""
    if depth >= SUGGEST_DEPTH:
        return
    if isinstance(value, dict):
        for key, child in value.items():
            path = f"{prefix}{str(key).strip()}"
            yield path
            yield from _paths(child, path + ".", depth + 1)
    elif isinstance(value, list) and value:
        yield from _paths(value[0], f"{prefix}0.", depth + 1)
