"""Reading a mapping file and refusing what it would silently ignore."""

import difflib
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from vanpools.importing.mapping.spec import (
    KINDS,
    RIDERS,
    SCHEDULE_KEYS,
    MappingError,
    Recipe,
    RosterMapping,
)


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
