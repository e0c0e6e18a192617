"""Cell readers the ride, permit and monthly records need beyond the roster's own.

Each takes the raw cell (CSV text or a JSON value) and returns the stored
value, or raises ``CellError`` with the reason (``vanpools.importing.cells``).
"""

import datetime as dt
import re

from vanpools.importing.cells import CellError, number, shown, text

SEPARATORS = re.compile(r"[;,|\s]+")


def share(raw: object) -> float:
    """A share as operators write it: ``0.85``, ``85%`` or ``85`` (a percent above 1)."""
    given = text(raw) if isinstance(raw, str) else raw
    percent = isinstance(given, str) and given.endswith("%")
    value = number(given.rstrip("%").strip() if isinstance(given, str) else given)
    if percent or value > 1:
        value /= 100
    if value > 1:
        raise CellError(f"{shown(raw)} is not a share (0 to 1, or a percent up to 100 %)")
    return value


def id_list(raw: object) -> list[str]:
    """Employee IDs: a JSON list, or text separated by ``;``, ``,``, ``|`` or spaces."""
    if isinstance(raw, list):
        items = [text(item) for item in raw]
    else:
        items = [part.strip() for part in SEPARATORS.split(text(raw))]
    return [item for item in items if item]


def month(raw: object) -> dt.date:
    """``2026-10`` or any date in the month → the month's first day."""
    value = text(raw)
    match = re.fullmatch(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?", value)
    if match:
        try:
            dt.date(int(match[1]), int(match[2]), int(match[3] or 1))
            return dt.date(int(match[1]), int(match[2]), 1)
        except ValueError:
            pass
    raise CellError(f"'{value}' is not a month (YYYY-MM)")


def timestamp(raw: object) -> dt.datetime:
    """A swipe's date and time as the gate wrote it, in the site's wall-clock time.

    ``2026-10-26 06:52``, ``2026-10-26T06:52:10``; an offset (``-07:00``, ``Z``)
    is dropped, not converted: the gate's clock is the site's.
    """
    value = text(raw)
    cleaned = re.sub(r"(Z|[+-][0-9]{2}:?[0-9]{2})$", "", value.replace(" ", "T", 1))
    try:
        return dt.datetime.fromisoformat(cleaned).replace(tzinfo=None, microsecond=0)
    except ValueError:
        raise CellError(f"'{value}' is not a date and time (YYYY-MM-DD HH:MM)") from None


def clock(raw: object) -> dt.time:
    value = text(raw)
    try:
        return dt.time.fromisoformat(value if len(value) > 4 else value.zfill(5))
    except ValueError:
        raise CellError(f"'{value}' is not a time (HH:MM)") from None
