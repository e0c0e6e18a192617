"""Roster fields as the labelled sets write them, read into what the rows store.

Audit items and lifecycle programs write points, ZIPs, leave and shifts the
same way; both kinds read them here, so a set means the same in either.
"""

import datetime as dt
from typing import Any

from vanpools.geo import clean_zip, parse_coordinate
from vanpools.schedules import ScheduleError, parse_compact_weekly, parse_weekly


def point(raw: object, where: str) -> tuple[float | None, float | None]:
    """``{"lat", "lng"}`` as numbers or as exports write them ("47.67° N"); absent → None."""
    if raw is None or raw == {}:
        return None, None
    if not isinstance(raw, dict) or set(raw) != {"lat", "lng"}:
        raise ValueError(f"{where} must be an object with lat and lng")
    try:
        return parse_coordinate(raw["lat"], "lat"), parse_coordinate(raw["lng"], "lng")
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def stored_zip(raw: object) -> str:
    """A ZIP as the roster import would store it (cleaned); anything else as given.

    The field holds 10 characters; text that is no ZIP is kept (cut to fit)
    so the location check meets it as the junk it is.
    """
    text = str(raw if raw is not None else "").strip()
    return clean_zip(text) or text[:10]


def check_pto(rider: dict[str, Any]) -> None:
    try:
        leave_spans(rider.get("pto", []))
    except ValueError as error:
        raise ValueError(f"{rider.get('employee_id', 'a rider')}: {error}") from None


def leave_spans(entries: object) -> list[tuple[dt.date, dt.date]]:
    """Leave as written in a set: one date or ``start..end`` range, or a list of them."""
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        raise ValueError("pto must be a date, a 'start..end' range, or a list of them")
    spans = []
    for entry in entries:
        start, _, end = (part.strip() for part in str(entry).partition(".."))
        try:
            span = (dt.date.fromisoformat(start), dt.date.fromisoformat(end or start))
        except ValueError:
            raise ValueError(
                f"pto entry {entry!r} is not a date (YYYY-MM-DD) or a range (date..date)"
            ) from None
        if span[1] < span[0]:
            raise ValueError(f"pto entry {entry!r} ends before it starts")
        spans.append(span)
    return spans


def weekly(value: Any, where: str) -> list[dict[str, str]]:
    try:
        spans = parse_compact_weekly(value) if isinstance(value, str) else parse_weekly(value)
    except ScheduleError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return [span.model_dump() for span in spans]


def shift_fields(shift_id: str, shift: Any) -> dict[str, Any]:
    """A shift written as "Mon-Fri 07:00-16:00" or {schedule|rotation|schedule_text, …}."""
    if isinstance(shift, str):
        shift = {"schedule": shift}
    if not isinstance(shift, dict):
        raise ValueError(f"shifts.{shift_id}: a compact schedule or an object")
    schedule = weekly(shift["schedule"], f"shifts.{shift_id}") if shift.get("schedule") else []
    if not (schedule or shift.get("rotation") or shift.get("schedule_text")):
        raise ValueError(f"shifts.{shift_id}: needs schedule, rotation or schedule_text")
    crosses = any(span["end"] < span["start"] for span in schedule)
    return {
        "shift_id": shift_id,
        "name": str(shift.get("name", shift_id))[:100],
        "schedule": schedule,
        "rotation": shift.get("rotation"),
        "schedule_text": str(shift.get("schedule_text", ""))[:500],
        "overnight": bool(shift.get("overnight", crosses)),
    }
