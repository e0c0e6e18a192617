"""Day blocks: other tools' schedule objects ({"days": "Mon-Fri", "start", "end"})."""

from vanpools.hr_text.reading import read_schedule_text
from vanpools.schedules import DaySpan, ScheduleError

BLOCK_SHAPE = (
    '{"days": "Mon-Fri", "start": "07:00", "end": "15:30"} '
    "(days as text or a list; start_time/end_time also read), or a list of them"
)


_BLOCK_KEYS = {
    "days": ("days", "day"),
    "start": ("start", "start_time"),
    "end": ("end", "end_time"),
}


def read_day_blocks(value: object) -> list[DaySpan]:
    """Weekly spans from ``{"days": "Mon-Fri", "start": "7:00 AM", "end": "3:30 PM"}`` blocks.

    Scheduling tools keep a shift as a day list with one pair of times, not a
    row per day. Each block is read as the text "days start-end", so its days
    and times are read as HR's text is, and refused when ambiguous.
    """
    items = value if isinstance(value, list) else [value]
    blocks = [item for item in items if isinstance(item, dict)]
    if not blocks or len(blocks) != len(items):
        raise ScheduleError(f"expected {BLOCK_SHAPE}")
    texts = [_block_text(block) for block in blocks]
    return read_schedule_text("; ".join(texts))


def _block_text(block: dict[object, object]) -> str:
    given = {str(key).strip().lower(): item for key, item in block.items()}
    found = {
        name: next((given[key] for key in keys if given.get(key) not in (None, "")), None)
        for name, keys in _BLOCK_KEYS.items()
    }
    if None in found.values() or set(given) - {
        key for keys in _BLOCK_KEYS.values() for key in keys
    }:
        raise ScheduleError(f"found {block}; expected {BLOCK_SHAPE}")
    days = found["days"]
    day_text = ", ".join(str(day).strip() for day in days) if isinstance(days, list) else str(days)
    return f"{day_text.strip()} {str(found['start']).strip()}-{str(found['end']).strip()}"
