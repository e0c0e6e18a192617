"""/health: is the database answering, and what does the task queue look like.

It answers within a second whatever the database is doing: every wait for a
lock is cut to ``LOCK_WAIT_MS`` while it checks, and on SQLite it also asks
for the write lock (and gives it back at once), since reads go on while a
writer holds it and a database nobody can write to is not "ok". A lock held
past that wait reports the database as failing (503), as an unreachable one
does.

Load balancers probe it by the instance's address, which is not in
``ALLOWED_HOSTS``; ``HealthProbe`` answers it before Django's Host check,
and to a Host it does not know says only ``status``.
"""

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.request import split_domain_port, validate_host
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)

PATH = "/health"
# Database lock waits while checking: the whole answer stays well under a second.
LOCK_WAIT_MS = 400
# Python's sqlite3 default when DATABASES OPTIONS set no "timeout" (seconds).
SQLITE_DEFAULT_TIMEOUT = 5.0


@contextmanager
def short_lock_waits() -> Iterator[None]:
    """Cut this connection's lock waits to LOCK_WAIT_MS, then put them back."""
    if connection.vendor == "sqlite":
        configured = connection.settings_dict["OPTIONS"].get("timeout", SQLITE_DEFAULT_TIMEOUT)
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {LOCK_WAIT_MS}")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute(f"PRAGMA busy_timeout = {int(float(configured) * 1000)}")
    elif connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('lock_timeout', %s, false), "
                "set_config('statement_timeout', %s, false)",
                [f"{LOCK_WAIT_MS}ms", f"{LOCK_WAIT_MS}ms"],
            )
        try:
            yield
        finally:
            if connection.is_usable():
                with connection.cursor() as cursor:
                    cursor.execute("RESET lock_timeout")
                    cursor.execute("RESET statement_timeout")
    else:
        yield


def database_status() -> dict[str, object]:
    try:
        with short_lock_waits(), connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
            # Inside a transaction (a test's) this connection already holds the write lock.
            if connection.vendor == "sqlite" and not connection.in_atomic_block:
                cursor.execute("BEGIN IMMEDIATE")
                cursor.execute("ROLLBACK")
    except DatabaseError as exc:
        logger.error("health: database unavailable: %s", exc)
        return {"ok": False, "vendor": connection.vendor, "error": exc.__class__.__name__}
    return {"ok": True, "vendor": connection.vendor}


# What waits for a person, counted by the app that owns it (registered in its
# AppConfig.ready: this floor imports none of them). Name → a count query.
WAITING_FOR_A_PERSON: dict[str, Callable[[], int]] = {}


def waiting_for_a_person() -> dict[str, int]:
    try:
        return {name: count() for name, count in sorted(WAITING_FOR_A_PERSON.items())}
    except DatabaseError as exc:  # the database went away after its check: no figures
        logger.error("health: counting what waits for a person failed: %s", exc)
        return {}


def queue_status() -> dict[str, object]:
    # Imported here: django_q.brokers touches settings and the app registry.
    from django_q.brokers import get_broker
    from django_q.status import Stat

    try:
        with short_lock_waits():  # the ORM broker and its stats cache live in the database
            broker = get_broker()
            reachable = bool(broker.ping())
            return {
                "ok": reachable,
                "broker": type(broker).__name__,
                "queued": broker.queue_size() or 0,
                "clusters": len(Stat.get_all(broker=broker)),
            }
    except Exception as exc:  # any broker (Redis, ORM) may fail its own way
        logger.error("health: task queue unreachable: %s", exc)
        return {"ok": False, "error": exc.__class__.__name__}


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    database = database_status()
    # Without a database nothing works; a queue problem degrades but still serves.
    queue = queue_status() if database["ok"] else {"ok": False, "error": "database unreachable"}
    if not database["ok"]:
        status = "down"
    elif not queue["ok"]:
        status = "degraded"
    else:
        status = "ok"
    body: dict[str, object] = {"status": status}
    if known_host(request):
        body |= {"database": database, "queue": queue}
    if known_host(request) and database["ok"]:
        body["waiting_for_a_person"] = waiting_for_a_person()
    return JsonResponse(body, status=503 if status == "down" else 200)


def known_host(request: HttpRequest) -> bool:
    """Whether the Host is one of ALLOWED_HOSTS, asked without raising DisallowedHost."""
    # The Host as get_host() reads it (X-Forwarded-Host, Host, SERVER_NAME), unchecked.
    domain, _ = split_domain_port(request._get_raw_host())  # type: ignore[attr-defined]
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]  # as HttpRequest.get_host does
    return bool(domain) and validate_host(domain, allowed)


class HealthProbe:
    """Answer /health before the Host check (CommonMiddleware), for load balancers.

    Placed after SecurityMiddleware (its headers, and its HTTPS redirect
    already exempts /health) and before anything that reads the Host.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info == PATH:
            return health(request)
        return self.get_response(request)
