"""Who or what is changing records right now: the door a person came through, or a process.

The history of every roster record (vanpools/history.py) says, beside the
user, where a change came from: the admin, the dashboard, the API, the email
provider's webhooks, the roster import (naming the upload or file), or the
system (a worker, a shell). A request gets its door from its path
(``ChangeSourceMiddleware``); the importer and other processes say theirs
with ``changes_by``. A context variable, so threads and async tasks each keep
their own.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse


@dataclass(frozen=True)
class ChangeSource:
    source: str  # one of SOURCES
    detail: str = ""  # e.g. the roster upload's name


ADMIN, DASHBOARD, API, EMAIL_PROVIDER = "admin", "dashboard", "api", "email provider"
ROSTER_IMPORT, SYSTEM = "roster import", "system"
SOURCES = (ADMIN, DASHBOARD, API, EMAIL_PROVIDER, ROSTER_IMPORT, SYSTEM)

# URL prefixes and the door they are; any other path is a dashboard page.
DOORS: tuple[tuple[str, str], ...] = (
    ("/admin/", ADMIN),
    ("/api/", API),
    ("/anymail/", EMAIL_PROVIDER),
)

_current: ContextVar[ChangeSource | None] = ContextVar("change_source", default=None)


def current_source() -> ChangeSource:
    return _current.get() or ChangeSource(SYSTEM)


@contextmanager
def changes_by(source: str, detail: str = "") -> Iterator[ChangeSource]:
    """Record changes made inside the block as coming from ``source`` (``detail`` names it)."""
    if source not in SOURCES:
        raise ValueError(f"unknown change source {source!r}; one of {', '.join(SOURCES)}")
    given = ChangeSource(source, detail)
    token = _current.set(given)
    try:
        yield given
    finally:
        _current.reset(token)


def door_of(path: str) -> str:
    return next((door for prefix, door in DOORS if path.startswith(prefix)), DASHBOARD)


class ChangeSourceMiddleware:
    """Every request's changes are recorded as coming through its door."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with changes_by(door_of(request.path_info)):
            return self.get_response(request)
