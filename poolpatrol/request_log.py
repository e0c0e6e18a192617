"""One log line per request, tagged with a request id echoed in X-Request-ID."""

import logging
import re
import time
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from poolpatrol.logcontext import log_context

logger = logging.getLogger("poolpatrol.request")

# An id from a trusted proxy is kept so logs join up across services; anything
# that does not look like an id is replaced rather than logged verbatim.
_VALID_ID = re.compile(r"^[A-Za-z0-9._-]{8,100}$")


def request_id_for(request: HttpRequest) -> str:
    incoming = request.headers.get("X-Request-ID", "")
    return incoming if _VALID_ID.match(incoming) else uuid.uuid4().hex


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_for(request)
        request.request_id = request_id  # type: ignore[attr-defined]  # ours, for views and logs
        started = time.perf_counter()
        with log_context(request_id=request_id):
            response = self.get_response(request)
            duration_ms = round((time.perf_counter() - started) * 1000, 1)
            user = getattr(request, "user", None)
            logger.info(
                "%s %s %s %.1fms",
                request.method,
                request.get_full_path(),
                response.status_code,
                duration_ms,
                extra={
                    "method": request.method,
                    "path": request.path,
                    "status": response.status_code,
                    "duration_ms": duration_ms,
                    "user_id": user.pk if user is not None and user.is_authenticated else None,
                },
            )
        response["X-Request-ID"] = request_id
        return response
