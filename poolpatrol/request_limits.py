"""How large a request body may be: mail-sized on the email webhooks, form-sized elsewhere.

Django has one global limit, ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2.5 MB by
default), and it applies to the inbound webhook too: a 3 MB email with a
photo was refused with a 400, and the provider retried for hours and then
dropped it. Providers deliver much more (Postmark up to 35 MB of mail, sent
as JSON with base64 attachments; SendGrid 30 MB; Mailgun 25 MB; SES 40 MB).

So the global limit is raised to the webhook's (``INBOUND_MAX_BYTES``) and
this middleware, placed first, puts every other path back under
``REQUEST_MAX_BYTES`` before a byte of the body is read. The declared
Content-Length is what counts: under WSGI a body without one is not read.
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

WEBHOOK_PREFIX = "/anymail/"


def body_limit(path: str) -> int:
    """The largest body, in bytes, a request to ``path`` may declare."""
    if path.startswith(WEBHOOK_PREFIX):
        return int(settings.INBOUND_MAX_BYTES)
    return int(settings.REQUEST_MAX_BYTES)


def declared_length(request: HttpRequest) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0  # Django reads no body it cannot size


def too_large(request: HttpRequest, limit: int, length: int) -> HttpResponse:
    message = (
        f"The request body is {length:,} bytes; at most {limit:,} bytes are accepted "
        f"on {request.path}."
    )
    if request.path.startswith("/api/"):
        return JsonResponse({"error": {"code": "too_large", "message": message}}, status=413)
    return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


class RequestSizeLimit:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = body_limit(request.path)
        length = declared_length(request)
        if length > limit:
            return too_large(request, limit, length)
        return self.get_response(request)
