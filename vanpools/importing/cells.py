"""Cell readers: one roster cell, as given in a CSV or JSON file, into the stored value.

Each reader takes the raw cell and returns the value the model stores, or
raises CellError with the reason; the check stage adds the row and column.
"""

import json
import re
from collections.abc import Callable
from datetime import date
from typing import Any

from django.db import models

from vanpools.geo import clean_zip, parse_coordinate
from vanpools.hr_text import read_day_blocks
from vanpools.schedules import (
    DaySpan,
    ScheduleError,
    parse_compact_weekly,
    parse_rotation,
    parse_weekly,
)


class CellError(ValueError):
    """One cell's value is wrong; the message is shown after its row and column."""


def shown(raw: object) -> str:
    return f"'{raw.strip()}'" if isinstance(raw, str) else json.dumps(raw)


def text(raw: object) -> str:
    if isinstance(raw, str):
        return raw.strip()
    if isinstance(raw, int) and not isinstance(raw, bool):
        return str(raw)  # a JSON number where text is expected, e.g. a ZIP
    raise CellError(f"expected text, got {shown(raw)}")


def zip_code(raw: object) -> str:
    value = clean_zip(text(raw))  # a spreadsheet read 01810 as the number 1810
    if value is None:
        raise CellError(f"{shown(raw)} is not a US ZIP code (5 digits, or ZIP+4 like 02139-4307)")
    return value


def coordinate(axis: str) -> Callable[[object], float]:
    def parse(raw: object) -> float:
        try:
            return parse_coordinate(raw, axis)
        except ValueError as error:
            raise CellError(str(error)) from None

    return parse


def whole_number(raw: object) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and re.fullmatch(r"[+-]?[0-9]+", raw.strip()):
        return int(raw)
    raise CellError(f"{shown(raw)} is not a whole number")


_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


def boolean(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    value = str(raw).strip().lower() if isinstance(raw, str | int) else ""
    if value in _TRUE | _FALSE:
        return value in _TRUE
    raise CellError(f"{shown(raw)} is not true or false")


def iso_date(raw: object) -> date:
    value = text(raw)
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise CellError(f"'{value}' is not a date (YYYY-MM-DD)")


def choice(choices: type[models.TextChoices]) -> Callable[[object], str]:
    def parse(raw: object) -> str:
        value = text(raw).lower().replace(" ", "_").replace("-", "_")
        if value not in choices.values:
            raise CellError(f"{shown(raw)} is not one of {', '.join(choices.values)}")
        return value

    return parse


def json_cell(raw: object) -> object:
    """A JSON value: as given in a JSON file, or written as JSON text in a CSV cell."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CellError(f"not valid JSON: {exc.msg} (character {exc.pos + 1})") from None


def stored_weekly(spans: list[DaySpan]) -> list[dict[str, str]]:
    return [{"day": span.day, "start": span.start, "end": span.end} for span in spans]


def weekly(raw: object) -> list[dict[str, str]]:
    try:
        if isinstance(raw, str) and not raw.lstrip().startswith(("[", "{")):
            spans = parse_compact_weekly(raw)
        else:
            spans = _weekly_data(json_cell(raw))
    except ScheduleError as exc:
        raise CellError(str(exc)) from None
    return stored_weekly(spans)


def _weekly_data(value: object) -> list[DaySpan]:
    """A row per day (the stored shape), or day blocks as scheduling tools keep them."""
    if isinstance(value, list) and all(
        isinstance(item, dict) and "day" in item and "days" not in item for item in value
    ):
        return parse_weekly(value)
    return read_day_blocks(value)


def rotation(raw: object) -> dict[str, Any]:
    try:
        return parse_rotation(json_cell(raw)).model_dump(mode="json")
    except ScheduleError as exc:
        raise CellError(str(exc)) from None


def leave_spans(raw: object) -> set[tuple[date, date]]:
    """``2026-12-01..2026-12-05; 2026-12-24`` (or a JSON list of such strings)."""
    items = raw.split(";") if isinstance(raw, str) else raw
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise CellError("expected dates or ranges like 2026-12-01..2026-12-05, separated by ;")
    spans = set()
    for item in (item.strip() for item in items):
        if not item:
            continue
        first, separator, last = item.partition("..")
        try:
            start = iso_date(first)
            end = iso_date(last) if separator else start
        except CellError as exc:
            raise CellError(str(exc) + _separator_hint(item)) from None
        if end < start:
            raise CellError(f"'{item}' ends before it starts")
        spans.add((start, end))
    return spans


ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _separator_hint(item: str) -> str:
    """Several dates in one item were listed with another separator than ``;``."""
    dates = ISO_DATE.findall(item)
    if len(dates) < 2 or ".." in item:
        return ""
    return (
        f"; dates are separated by ';', as in '{'; '.join(dates)}' "
        f"(a range is written {dates[0]}..{dates[1]})"
    )


def one_vanpool(raw: object) -> str:
    value = text(raw)
    if re.search(r"[,;\s]", value):
        raise CellError(f"an employee has one seat; got '{value}'")
    return value
