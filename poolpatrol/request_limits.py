"""How large a request body may be: mail-sized on the email webhooks, form-sized elsewhere.

Django has one global limit, ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2.5 MB by
default), and it applies to the inbound webhook too: a 3 MB email with a
photo was refused with a 400, and the provider retried for hours and then
dropped it. Providers deliver much more (Postmark up to 35 MB of mail, sent
as JSON with base64 attachments; SendGrid 30 MB; Mailgun 25 MB; SES 40 MB).

So the global limit is raised to the webhook's (``INBOUND_MAX_BYTES``) and
this middleware, placed first, puts every other path back under
``REQUEST_MAX_BYTES`` before a byte of the body is read. The declared
Content-Length is what counts.

A body sent chunked (``Transfer-Encoding: chunked``, no Content-Length) is
another matter: Django reads a body without a length as empty, and a webhook
once acknowledged three chunked replies as one empty row. Where the server
de-chunks the stream and says so (``wsgi.input_terminated``: gunicorn does),
the body is read here, up to the path's limit, and handed on with its length;
where it cannot (``runserver``), the request is refused with 411 Length
Required, which a provider retries, rather than read as nothing.
"""

import io
from collections.abc import Callable

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream, WSGIRequest
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


def sent_chunked(request: HttpRequest) -> bool:
    """A body that comes in chunks and without a length: Django alone would read it as empty.

    Only under WSGI: an ASGI request's body is whatever the server received.
    """
    if not isinstance(request, WSGIRequest):
        return False
    encoding = request.META.get("HTTP_TRANSFER_ENCODING", "")
    return "chunked" in encoding.lower() and not request.META.get("CONTENT_LENGTH")


def read_chunked(request: HttpRequest, limit: int) -> HttpResponse | None:
    """Read a de-chunked body into the request, with its length; or the answer refusing it."""
    if not request.META.get("wsgi.input_terminated"):
        message = (
            "This server cannot read a body sent with Transfer-Encoding: chunked; "
            "send it with a Content-Length."
        )
        return HttpResponse(message, status=411, content_type="text/plain; charset=utf-8")
    body = request.META["wsgi.input"].read(limit + 1)
    if len(body) > limit:
        return too_large(request, limit, len(body))
    # WSGIRequest reads its body from _stream, bounded by CONTENT_LENGTH (see its __init__).
    request._stream = LimitedStream(io.BytesIO(body), len(body))  # type: ignore[assignment]
    request.META["CONTENT_LENGTH"] = str(len(body))
    return None


class RequestSizeLimit:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = body_limit(request.path)
        if sent_chunked(request):
            refused = read_chunked(request, limit)
            if refused is not None:
                return refused
        length = declared_length(request)
        if length > limit:
            return too_large(request, limit, length)
        return self.get_response(request)
