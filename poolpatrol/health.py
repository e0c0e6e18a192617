"""/health: is the database answering, and what does the task queue look like."""

import logging
from collections.abc import Callable

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)


def database_status() -> dict[str, object]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        logger.error("health: database unreachable: %s", exc)
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
    body: dict[str, object] = {"status": status, "database": database, "queue": queue}
    if database["ok"]:
        body["waiting_for_a_person"] = waiting_for_a_person()
    return JsonResponse(
        body,
        status=503 if status == "down" else 200,
    )
