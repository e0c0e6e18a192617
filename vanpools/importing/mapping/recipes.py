"""One source row into roster cells: where each recipe reads and how it transforms."""

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from vanpools.hr_text import read_schedule_text
from vanpools.importing.mapping.spec import RIDERS, SCHEDULE_KEYS, KindMapping, Recipe
from vanpools.schedules import ScheduleError

MISSING = object()


def lookup(row: object, path: str) -> object:
    """The value at a dotted path, matching keys ignoring case and outer spaces.

    A key that itself holds dots (``"Addr.Zip"``) is tried whole first.
    """
    if isinstance(row, dict):
        exact = _key(row, path)
        if exact is not MISSING:
            return exact
    head, dot, rest = path.partition(".")
    if not dot:
        return MISSING
    if isinstance(row, dict):
        child = _key(row, head)
    elif isinstance(row, list) and head.strip().isdigit() and int(head) < len(row):
        child = row[int(head)]
    else:
        return MISSING
    return MISSING if child is MISSING else lookup(child, rest)


def _key(row: Mapping[str, object], name: str) -> object:
    wanted = name.strip().lower()
    for key, value in row.items():
        if str(key).strip().lower() == wanted:
            return value
    return MISSING


def is_blank(value: object) -> bool:
    return value is MISSING or value is None or (isinstance(value, str) and not value.strip())


@dataclass
class Mapped:
    """One source row as roster cells, with where each came from and what went wrong."""

    cells: dict[str, object]
    sources: dict[str, str]
    problems: list[tuple[str, str]]  # (roster column, message)


def map_row(
    spec: KindMapping, kind: str, row: Mapping[str, object], columns: Iterable[str]
) -> Mapped:
    """Roster cells from one source row: mapped columns, and columns already named as ours."""
    mapped = Mapped({}, {}, [])
    for name in columns:
        if name in spec.columns:
            continue
        value = _key(row, name)
        if not is_blank(value) and not _used_by_recipe(spec, name):
            mapped.cells[name] = value
    for name, recipe in spec.columns.items():
        mapped.sources[name] = " + ".join(recipe.paths()) if recipe.value is None else ""
        try:
            # A rider list's format applies to each rider's ID (seats_from_riders), not the list.
            value = _joined(recipe, row) if name == RIDERS else apply(recipe, row)
        except RecipeError as exc:
            mapped.problems.append((name, str(exc)))
            continue
        if not is_blank(value):
            mapped.cells[name] = value
    return mapped


def _used_by_recipe(spec: KindMapping, column: str) -> bool:
    """A source column named like a roster column but mapped to another is not both."""
    return any(
        path.split(".")[0].strip().lower() == column
        for recipe in spec.columns.values()
        for path in recipe.paths()
    )


def used_keys(spec: KindMapping, columns: Iterable[str]) -> set[str]:
    """Top-level source keys (lower case) the mapping reads, so the rest can be reported."""
    used = {name.lower() for name in columns}
    for recipe in spec.columns.values():
        for path in recipe.paths():
            used.add(path.strip().lower())
            used.add(path.split(".")[0].strip().lower())
    return used


class RecipeError(ValueError):
    """A source value the recipe cannot turn into the roster's form."""


def apply(recipe: Recipe, row: Mapping[str, object]) -> object:
    if recipe.value is not None:
        return recipe.value
    if any(getattr(recipe, key) is not None for key in SCHEDULE_KEYS):
        return _schedule(recipe, row)
    value = _joined(recipe, row)
    if is_blank(value):
        return None
    if recipe.take is not None:
        value = _name_part(value, recipe.take)
    if recipe.values is not None:
        value = _translated(value, recipe.values)
    if recipe.format is not None:
        value = formatted(value, recipe.format)
    if recipe.date_format is not None:
        value = dates(value, recipe.date_format)
    return value


def _joined(recipe: Recipe, row: Mapping[str, object]) -> object:
    if not isinstance(recipe.source, list):
        assert recipe.source is not None  # _one_origin: no value, no schedule, so a source
        return lookup(row, recipe.source)
    parts = [lookup(row, path) for path in recipe.source]
    return recipe.sep.join(str(part).strip() for part in parts if not is_blank(part))


def _name_part(value: object, part: str) -> str:
    """``Reyes, Ana`` or ``Ana Reyes``: the last name is before a comma, else the last word."""
    text = " ".join(str(value).split())
    if "," in text:
        last, _, first = (piece.strip() for piece in text.partition(","))
    else:
        first, _, last = text.rpartition(" ")
    if not first or not last:
        raise RecipeError(
            f"cannot split '{text}' into first and last name "
            "(expected 'First Last' or 'Last, First')"
        )
    return first if part == "first_name" else last


def formatted(value: object, template: str) -> str:
    """``VP-{}`` or ``E{:05d}`` filled with the value (text of digits counts as a number)."""
    text = str(value).strip()
    try:
        return template.format(value if not isinstance(value, str) else text)
    except ValueError:
        if text.isdigit():
            return template.format(int(text))
        raise RecipeError(f"'{text}' does not fit the format {template}") from None


def _translated(value: object, table: dict[str, str | int | bool]) -> object:
    wanted = str(value).strip().lower()
    for key, translated in table.items():
        if key.strip().lower() == wanted:
            return translated
    return value  # the column's own check says what it accepts


DATE_RANGE = re.compile(r"\s*\.\.\s*")


def dates(value: object, date_format: str) -> object:
    """Dates in the export's format, as ISO; a list or ``a..b; c`` text date by date."""
    if isinstance(value, list):
        return [dates(item, date_format) for item in value]
    text = str(value).strip()
    parts = []
    for item in (piece.strip() for piece in text.split(";")):
        if not item:
            continue
        try:
            parts.append("..".join(_one_date(end, date_format) for end in DATE_RANGE.split(item)))
        except RecipeError as exc:
            raise RecipeError(str(exc) + _separator_hint(item, date_format)) from None
    return "; ".join(parts)


def _separator_hint(item: str, date_format: str) -> str:
    """Dates listed with commas: say that the list's separator is ``;``."""
    pieces = [piece.strip() for piece in item.split(",")]
    if len(pieces) < 2 or "," in date_format:
        return ""
    try:
        for piece in pieces:
            for end in DATE_RANGE.split(piece):
                _one_date(end, date_format)
    except RecipeError:
        return ""
    return f"; dates are separated by ';', as in '{'; '.join(pieces)}'"


def _one_date(text: str, date_format: str) -> str:
    try:
        return dt.datetime.strptime(text.strip(), date_format).date().isoformat()
    except ValueError:
        raise RecipeError(
            f"'{text.strip()}' does not match the date format {date_format}"
        ) from None


def _schedule(recipe: Recipe, row: Mapping[str, object]) -> list[dict[str, str]] | None:
    """Weekly spans from a day list and hours (``Mon-Fri`` + ``07:00-15:30``), or text."""
    if recipe.text is not None:
        value = lookup(row, recipe.text)
        if is_blank(value):
            return None
        text = str(value)
    else:
        assert recipe.days is not None  # _one_origin
        days = lookup(row, recipe.days)
        if recipe.hours is not None:
            hours = lookup(row, recipe.hours)
        else:
            assert recipe.start is not None and recipe.end is not None
            start, end = _part(lookup(row, recipe.start)), _part(lookup(row, recipe.end))
            hours = f"{start}-{end}" if start and end else (start or end or None)
        if is_blank(days) and is_blank(hours):
            return None
        if is_blank(days):
            raise RecipeError(f"hours {shown(hours)} but no days in {recipe.days}")
        if is_blank(hours):
            raise RecipeError(f"days {shown(days)} but no hours")
        text = f"{_day_list(days)} {hours}"
    try:
        spans = read_schedule_text(text)
    except ScheduleError as exc:
        raise RecipeError(
            f"{exc} (expected days like Mon-Fri or Mon,Wed,Fri and hours like 07:00-15:30)"
        ) from None
    return [{"day": span.day, "start": span.start, "end": span.end} for span in spans]


def _part(value: object) -> str:
    return "" if is_blank(value) else str(value).strip()


def _day_list(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(day).strip() for day in value)
    return str(value).strip()


def shown(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)
