"""A vanpool's rider list: the employees it seats, by reference or as whole records."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from vanpools.importing.mapping.recipes import (
    MISSING,
    RecipeError,
    dates,
    formatted,
    is_blank,
    lookup,
    shown,
)
from vanpools.importing.mapping.spec import RIDERS, KindMapping, Recipe


@dataclass
class Seat:
    employee_id: str
    joined: object = None
    where: str = ""
    # The rider's whole record when the list holds employees, not just references.
    record: dict[str, object] | None = None
    # A reference's keys that are neither its ID nor its start date: not read.
    ignored: tuple[str, ...] = ()


# Columns a rider object may give without being the employee's whole record.
REFERENCE_COLUMNS = ("employee_id", "vanpool_id", "joined")


def record_keys(spec: KindMapping, columns: Iterable[str]) -> set[str]:
    """Top-level keys (lower case) that make a rider object the employee's whole record.

    The keys the employees' rows are read from (through the mapping, else the
    roster's names), less those of an ID and a start date: a vendor's seat
    object may carry its own keys (``participant_id``) beside the ID.
    """
    keys = {
        name.lower()
        for name in columns
        if name not in spec.columns and name not in (*REFERENCE_COLUMNS, RIDERS)
    }
    for name, recipe in spec.columns.items():
        if name not in REFERENCE_COLUMNS:
            keys |= {path.split(".")[0].strip().lower() for path in recipe.paths()}
    return keys


def seats_from_riders(
    value: object, recipe: Recipe | None, records: Iterable[str] = ()
) -> tuple[list[Seat], list[tuple[str, str]]]:
    """The employees a vanpool's rider list seats, and what in it could not be read.

    A list of employee IDs, or of objects holding one (``employee_id``, or
    ``id``, or the key the mapping names) and optionally ``joined``; an object
    holding any of ``records`` (see record_keys) is the employee's whole record,
    and any other key of a reference is ignored (and named in ``Seat.ignored``).
    """
    id_key = recipe.id if recipe and recipe.id else None
    joined_key = recipe.joined if recipe and recipe.joined else "joined"
    date_format = recipe.date_format if recipe else None
    if not isinstance(value, list):
        return [], [(RIDERS, f"found {shown(value)[:60]}; expected {_riders_shape(id_key)}")]
    seats: list[Seat] = []
    problems: list[tuple[str, str]] = []
    for index, item in enumerate(value):
        where = f"{RIDERS}[{index}]"
        if isinstance(item, str | int) and not isinstance(item, bool) and str(item).strip():
            seats.append(Seat(_rider_id(item, recipe), None, where))
            continue
        employee_id: object = MISSING
        if isinstance(item, dict):
            keys = [id_key] if id_key else ["employee_id", "id"]
            employee_id = next(
                (found for key in keys if not is_blank(found := lookup(item, key))), MISSING
            )
        if not isinstance(employee_id, str | int) or isinstance(employee_id, bool):
            problems.append((where, f"found {shown(item)[:60]}; expected {_riders_shape(id_key)}"))
            continue
        joined = lookup(item, joined_key) if isinstance(item, dict) else MISSING
        if date_format is not None and not is_blank(joined):
            try:
                joined = dates(joined, date_format)
            except RecipeError as exc:
                problems.append((where, f"{joined_key}: {exc}"))
                continue
        seat = Seat(_rider_id(employee_id, recipe), None if is_blank(joined) else joined, where)
        if isinstance(item, dict):
            others = _other_keys(item, {*keys, joined_key})
            if any(key.strip().lower() in records for key in others):
                seat.record = item
            else:
                seat.ignored = tuple(others)
        seats.append(seat)
    return seats, problems


def _rider_id(value: object, recipe: Recipe | None) -> str:
    if recipe is not None and recipe.format is not None:
        try:
            return formatted(value, recipe.format)
        except RecipeError:
            pass  # left as given: the employee lookup then names it
    return str(value).strip()


def _other_keys(item: Mapping[str, object], reference_keys: set[str]) -> list[str]:
    """A rider object's keys besides its ID and start date, compared at the top level
    (an ID at ``person.number`` is a reference)."""
    wanted = {key.split(".")[0].strip().lower() for key in reference_keys}
    return [str(key) for key in item if str(key).strip().lower() not in wanted]


def _riders_shape(id_key: str | None) -> str:
    key = id_key or "employee_id"
    return f'["EMP-1003", …] or [{{"{key}": "EMP-1003", "joined": "2026-09-01"}}, …]'


RIDERS_SHAPE = _riders_shape(None)
