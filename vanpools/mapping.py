"""Mapping files: how another system's export feeds the roster's columns.

An HR system or a vanpool vendor exports its own column names, nests values
in objects and writes names, dates and schedules its own way. A mapping file
(TOML or YAML, see docs/roster-format.md) says, per kind of row, where each
roster column comes from and how to turn it into the roster's form. This
module reads the file and turns one source row into roster cells; checking
those cells is the importer's job, as for an unmapped file.

It knows nothing of the database: every function here is pure.
"""

import datetime as dt
import difflib
import json
import re
import string
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vanpools.hr_text import read_schedule_text
from vanpools.schedules import ScheduleError

KINDS: tuple[str, ...] = ("shifts", "vanpools", "employees")
# The rider list a vanpool may carry; the importer turns it into employees' seats.
RIDERS = "riders"
SCHEDULE_KEYS = ("days", "hours", "start", "end", "text")


class MappingError(ValueError):
    """The mapping file itself is wrong; ``where`` names the key."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        super().__init__(message)


class Recipe(BaseModel):
    """How one roster column is made from a source row.

    ``from`` is a column name, or a dotted path into a JSON row
    (``home.zip``, ``stops.0.zip``); a list of them is joined with ``sep``.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    source: str | list[str] | None = Field(default=None, alias="from")
    value: str | int | float | bool | None = None  # the same value on every row
    sep: str = ", "
    take: Literal["first_name", "last_name"] | None = None
    values: dict[str, str | int | bool] | None = None
    format: str | None = None  # e.g. "VP-{}": IDs another system keeps as bare numbers
    date_format: str | None = None
    # A schedule from parts: day list and hours, or text with both.
    days: str | None = None
    hours: str | None = None
    start: str | None = None
    end: str | None = None
    text: str | None = None
    # A vanpool's rider list: keys in each rider object.
    id: str | None = None
    joined: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _column_name_alone(cls, data: object) -> object:
        """``email = "Work Email"`` is short for ``email = { from = "Work Email" }``."""
        return {"from": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _one_origin(self) -> "Recipe":
        schedule = [key for key in SCHEDULE_KEYS if getattr(self, key) is not None]
        origins = [self.source is not None, self.value is not None, bool(schedule)]
        if sum(origins) != 1:
            raise ValueError(
                "give exactly one of from = COLUMN, value = CONSTANT, "
                "or a schedule's days/hours (or days/start/end, or text)"
            )
        if self.format is not None:
            _check_format(self.format)
        if schedule and not (
            self.text is not None
            or (self.days and self.hours and not (self.start or self.end))
            or (self.days and self.start and self.end and not self.hours)
        ):
            raise ValueError("a schedule needs days and hours, days with start and end, or text")
        return self

    def paths(self) -> list[str]:
        """Every source path the recipe reads."""
        if isinstance(self.source, list):
            return list(self.source)
        if self.source is not None:
            return [self.source]
        return [getattr(self, key) for key in SCHEDULE_KEYS if getattr(self, key) is not None]


class KindMapping(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rows: str | None = None  # JSON: where the list of rows is (a dotted path)
    columns: dict[str, Recipe] = Field(default_factory=dict)


class RosterMapping(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    shifts: KindMapping | None = None
    vanpools: KindMapping | None = None
    employees: KindMapping | None = None
    source: str = ""  # the mapping file, for messages

    def for_kind(self, kind: str) -> KindMapping | None:
        found: KindMapping | None = getattr(self, kind)
        return found


def load_mapping(path: Path | str, columns: Mapping[str, Iterable[str]]) -> RosterMapping:
    """Read and check a .toml, .yaml or .yml mapping; ``columns`` are the roster's, per kind."""
    path = Path(path)
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise MappingError(where, f"cannot read the mapping: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise MappingError(where, "the mapping is not UTF-8 text") from None
    return parse_mapping(text, path.suffix.lower(), columns, where=where)


def parse_mapping(
    text: str, suffix: str, columns: Mapping[str, Iterable[str]], *, where: str = "mapping"
) -> RosterMapping:
    data = _decode(text, suffix, where)
    try:
        mapping = RosterMapping.model_validate(data | {"source": where})
    except ValidationError as exc:
        error = exc.errors()[0]
        place = ".".join(str(part) for part in error["loc"] if part not in ("str", "list[str]"))
        raise MappingError(where, f"{place}: {_pydantic_message(error)}") from None
    for kind in KINDS:
        spec = mapping.for_kind(kind)
        known = set(columns[kind]) | ({RIDERS} if kind == "vanpools" else set())
        for name in spec.columns if spec else {}:
            if name not in known:
                raise MappingError(
                    where,
                    f"{kind}.columns.{name}: not a roster column of {kind} "
                    f"(one of {', '.join(sorted(known))})",
                )
    if not any(mapping.for_kind(kind) for kind in KINDS):
        raise MappingError(where, "the mapping names none of shifts, vanpools, employees")
    for kind in KINDS:
        spec = mapping.for_kind(kind)
        for name, recipe in spec.columns.items() if spec else ():
            problem = _recipe_problem(name, recipe)
            if problem is not None:
                key, message = problem
                raise MappingError(where, f"{kind}.columns.{name}.{key}: {message}")
    return mapping


# Where each recipe key means something. A key given where it means nothing was
# ignored, and the data it was meant to read was lost without a word: refused.
TRANSFORM_KEYS = ("take", "values", "format", "date_format")
RIDER_KEYS = ("from", "id", "joined", "format", "date_format")
DATE_COLUMNS = ("joined", "pto", "leave")


def _recipe_problem(name: str, recipe: Recipe) -> tuple[str, str] | None:
    """(key, why) for the first key of a recipe that would be ignored for this column."""
    given = [
        "from" if key == "source" else key
        for key in Recipe.model_fields  # in the class's order: the same key named every run
        if key in recipe.model_fields_set
    ]
    if name == RIDERS:
        for key in given:
            if key not in RIDER_KEYS:
                return key, (
                    "not a key of a rider list's recipe (it takes from, id, joined, format "
                    "for the IDs and date_format for the joined dates)"
                )
        if isinstance(recipe.source, list):
            return "from", "a rider list is read from one path, not a list of them"
        return None
    for key in ("id", "joined"):
        if key in given:
            return key, (
                "only a rider list (vanpools.columns.riders) has id and joined, naming keys in "
                f"its objects; {name} is read with from"
            )
    if recipe.source is None:
        for key in TRANSFORM_KEYS:
            if key in given:
                origin = "value" if recipe.value is not None else "a schedule's parts"
                return key, f"transforms a value read with from, not {origin}"
    if "sep" in given and not isinstance(recipe.source, list):
        return "sep", 'joins a list of columns, from = ["A", "B"]; this from is one column'
    if recipe.date_format is not None and name not in DATE_COLUMNS:
        return "date_format", f"{name} holds no dates (date_format reads joined, pto and leave)"
    schedule = [key for key in SCHEDULE_KEYS if key in given]
    if schedule and name != "schedule":
        return schedule[0], f"builds a schedule, and {name} is not the schedule column"
    return None


def _decode(text: str, suffix: str, where: str) -> dict[str, Any]:
    try:
        if suffix == ".toml":
            data: object = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            raise MappingError(where, "a mapping is a .toml, .yaml or .yml file")
    except tomllib.TOMLDecodeError as exc:
        raise MappingError(where, f"not valid TOML: {exc}") from None
    except yaml.YAMLError as exc:
        raise MappingError(where, f"not valid YAML: {exc}".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise MappingError(where, "expected a table per kind: [employees], [vanpools], [shifts]")
    return data


def _pydantic_message(error: Any) -> str:
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        return "not a mapping key" + _closest(str(error["loc"][-1]), _keys_at(error["loc"]))
    return message


RECIPE_KEYS = ("from", "value", "sep", *TRANSFORM_KEYS, *SCHEDULE_KEYS, "id", "joined")


def _keys_at(loc: tuple[object, ...]) -> tuple[str, ...]:
    """The keys the mapping accepts where an unknown one was found."""
    if len(loc) == 1:
        return KINDS
    if len(loc) == 2:
        return ("rows", "columns")
    return RECIPE_KEYS


def _closest(given: str, known: Iterable[str]) -> str:
    """The known key a slip of the fingers would make ``given`` (``form`` → ``from``)."""
    wanted = given.strip().lower()
    found = difflib.get_close_matches(wanted, list(known), n=3, cutoff=0.6)
    if not found:
        return ""
    return f"; did you mean {min(found, key=lambda key: typo_distance(wanted, key))}?"


def typo_distance(a: str, b: str) -> int:
    """Edits between two names, a swap of neighbours counting as one (Damerau, OSA)."""
    rows = [list(range(len(b) + 1))]
    for i, ca in enumerate(a, start=1):
        row = [i]
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            best = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, rows[-2][j - 2] + 1)
            row.append(best)
        rows.append(row)
    return rows[-1][-1]


# Reading a source row ------------------------------------------------------------------


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


def _key(row: dict, name: str) -> object:
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


def map_row(spec: KindMapping, kind: str, row: dict, columns: Iterable[str]) -> Mapped:
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


def apply(recipe: Recipe, row: dict) -> object:
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
        value = _dates(value, recipe.date_format)
    return value


def _joined(recipe: Recipe, row: dict) -> object:
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


def _check_format(template: str) -> None:
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise ValueError(f"format '{template}': {exc}") from None
    if fields != [""]:
        raise ValueError(f"format '{template}' needs exactly one {{}} where the value goes")


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


def _dates(value: object, date_format: str) -> object:
    """Dates in the export's format, as ISO; a list or ``a..b; c`` text date by date."""
    if isinstance(value, list):
        return [_dates(item, date_format) for item in value]
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


def _schedule(recipe: Recipe, row: dict) -> list[dict[str, str]] | None:
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
            raise RecipeError(f"hours {_shown(hours)} but no days in {recipe.days}")
        if is_blank(hours):
            raise RecipeError(f"days {_shown(days)} but no hours")
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


def _shown(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)


# A vanpool's rider list ----------------------------------------------------------------


@dataclass
class Seat:
    employee_id: str
    joined: object = None
    where: str = ""
    # The rider's whole record when the list holds employees, not just references.
    record: dict | None = None
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
        return [], [(RIDERS, f"found {_shown(value)[:60]}; expected {_riders_shape(id_key)}")]
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
            problems.append((where, f"found {_shown(item)[:60]}; expected {_riders_shape(id_key)}"))
            continue
        joined = lookup(item, joined_key) if isinstance(item, dict) else MISSING
        if date_format is not None and not is_blank(joined):
            try:
                joined = _dates(joined, date_format)
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


def _other_keys(item: dict, reference_keys: set[str]) -> list[str]:
    """A rider object's keys besides its ID and start date, compared at the top level
    (an ID at ``person.number`` is a reference)."""
    wanted = {key.split(".")[0].strip().lower() for key in reference_keys}
    return [str(key) for key in item if str(key).strip().lower() not in wanted]


def _riders_shape(id_key: str | None) -> str:
    key = id_key or "employee_id"
    return f'["EMP-1003", …] or [{{"{key}": "EMP-1003", "joined": "2026-09-01"}}, …]'


RIDERS_SHAPE = _riders_shape(None)
