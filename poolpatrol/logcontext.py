"""Context that every log line carries: request id, case id, vanpool id.

A ContextVar holds the fields so they follow the code through a request, a
django-q2 task or an agent run without being threaded through every call.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

_fields: ContextVar[dict[str, str]] = ContextVar("log_fields", default={})  # noqa: B039


@contextmanager
def log_context(**fields: object) -> Iterator[None]:
    """Add fields (e.g. case_id="CASE-…") to every log line inside the block."""
    merged = {**_fields.get(), **{k: str(v) for k, v in fields.items() if v is not None}}
    token = _fields.set(merged)
    try:
        yield
    finally:
        _fields.reset(token)


def current_fields() -> dict[str, str]:
    return dict(_fields.get())


class ContextFilter(logging.Filter):
    """Copies the context onto the record: as attributes (JSON) and as text."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = _fields.get()
        for key, value in fields.items():
            setattr(record, key, value)
        record.context = "".join(f"[{k}={v}] " for k, v in fields.items())
        return True


def json_formatter(**kwargs: Any) -> JsonFormatter:
    # `context` is the text rendering of fields the JSON already has.
    return JsonFormatter(reserved_attrs=[*RESERVED_ATTRS, "context"], **kwargs)
