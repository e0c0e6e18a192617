"""/health: is the database answering, and what does the task queue look like."""

import logging

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
    return JsonResponse(
        {"status": status, "database": database, "queue": queue},
        status=503 if status == "down" else 200,
    )
