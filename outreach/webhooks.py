"""The email provider's webhooks: inbound mail and delivery events, through anymail.

anymail's views authenticate the call (``WEBHOOK_SECRET`` basic auth; a
wrong secret is its own HTTP 400) and turn each ESP's payload into signals;
the receivers here store what arrived. Two rules on top of anymail's:

- Outside DEBUG with no secret configured every call is refused (403):
  anymail would only warn and accept mail from anyone on the web.
- Poison is kept, not retried: anymail would turn it into a 5xx and the
  provider retries the same poison for hours, then drops it. A delivery
  anymail cannot parse (malformed JSON, ``[]``, ``null``, bytes that are not
  UTF-8, fields of the wrong shape) is kept as raw bytes in a quarantined row
  and acknowledged; so is a message a receiver fails on. A wrong secret is
  still refused before anything is kept.
- What may pass is retried, not kept: quarantine is for content the product
  cannot read. The database locked or unreachable, or the provider's API
  failing while anymail fetches the message (Resend, Mailtrap, SES from S3),
  answers 503 with ``Retry-After``, and the provider's retry is the copy that
  gets stored. An empty body is refused (400): nothing arrived to keep, and a
  body the server could not read (chunked, see ``poolpatrol.request_limits``)
  must come again.
- An event anymail yields as nothing (Mailtrap's "test your integration"
  payload) is dropped with a log line.
"""

import json
import logging
from collections.abc import Callable
from functools import wraps
from typing import Any, cast

import requests
from anymail.signals import AnymailInboundEvent, AnymailTrackingEvent, EventType
from anymail.utils import get_anymail_setting
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseForbidden
from django.http.request import RawPostDataException
from django.urls import URLPattern
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from outreach import providers
from outreach.authentication import provider_fields
from outreach.bounces import record_bounce
from outreach.header_fields import clean_request
from outreach.inbound import quarantine, receive_message, serialised_sha256
from outreach.models import Message
from outreach.parsing import message_bytes
from poolpatrol.db_errors import database_unavailable
from poolpatrol.request_limits import declared_length

logger = logging.getLogger(__name__)

BOUNCE_EVENTS = frozenset({EventType.BOUNCED, EventType.REJECTED})
REFUSED = (
    "Email webhooks are disabled: WEBHOOK_SECRET is not set. Set WEBHOOK_SECRET "
    '("user:password", comma-separated to rotate) and give the provider '
    "https://user:password@<host>/anymail/<esp>/inbound/."
)
EMPTY = "The delivery has no body: nothing was kept. Send it again with its Content-Length."
RETRY_AFTER_SECONDS = 60
# Answers from a provider's API that a later try may not get: an outage, a rate
# limit, a timeout, or credentials and permissions an operator is fixing.
PASSING_STATUSES = frozenset({401, 403, 408, 425, 429})


# --- Refusing unauthenticated deployments --------------------------------------------


def webhook_secrets() -> list[str]:
    """The basic-auth secrets anymail checks (its own setting, so the two agree)."""
    secrets = get_anymail_setting("webhook_secret", default=[])
    if isinstance(secrets, str):
        secrets = [secrets]
    return [secret for secret in secrets if secret]


def require_webhook_secret(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Refuse every call outside DEBUG while no webhook secret is configured."""

    @wraps(view)
    def guarded(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not settings.DEBUG and not webhook_secrets():
            logger.error(
                "refused %s %s: no WEBHOOK_SECRET configured", request.method, request.path
            )
            return HttpResponseForbidden(REFUSED, content_type="text/plain; charset=utf-8")
        return view(request, *args, **kwargs)

    return csrf_exempt(guarded)  # the provider has no CSRF token; auth is the secret


def guarded_anymail_urls() -> tuple[list[URLPattern], str]:
    """anymail's URL patterns, for include(): each behind ``require_webhook_secret``, and
    answering only for the configured provider (``providers.answering_if_configured``)."""
    from anymail import urls as anymail_urls

    patterns = [
        URLPattern(
            p.pattern,
            require_webhook_secret(
                providers.answering_if_configured(
                    providers.webhook_of(p),
                    keeping_poison(providers.keeping_fetched_raw(p.callback)),
                )
            ),
            p.default_args,
            p.name,
        )
        for p in anymail_urls.urlpatterns
    ]
    return patterns, anymail_urls.app_name


def keeping_poison(callback: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The same anymail view, except that poison is kept and what may pass is retried.

    anymail's ``post`` checks the secret (``run_validators``), then calls
    ``parse_events``: overriding only the latter keeps the check first, so a
    caller without the secret gets anymail's 400 and stores nothing.
    """
    view_class = getattr(callback, "view_class", None)
    if view_class is None:
        return callback

    def post(self: Any, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if declared_length(request) == 0:
            logger.warning("%s delivery to %s has no body: refused", self.esp_name, request.path)
            return HttpResponseBadRequest(EMPTY, content_type="text/plain; charset=utf-8")
        try:
            return cast("HttpResponse", view_class.post(self, request, *args, **kwargs))
        except Exception as exc:
            if not may_pass(exc):
                raise
            return retry_later(request, self.esp_name, exc)

    def parse_events(self: Any, request: HttpRequest) -> list[object]:
        try:
            # Header fields without CR/LF before anymail builds the message (issue 34).
            clean_request(request, self.esp_name)
            events = list(view_class.parse_events(self, request))
        except Exception as exc:
            if may_pass(exc):
                raise  # post() answers 503: the provider sends it again
            keep_undecodable_delivery(request, self.esp_name, exc)
            return []
        if None in events:
            logger.info(
                "%s delivery to %s: %d event(s) anymail reads as none (a test payload); dropped",
                self.esp_name,
                request.path,
                events.count(None),
            )
        return [event for event in events if event is not None]

    keeping: type[View] = type(
        view_class.__name__, (view_class,), {"post": post, "parse_events": parse_events}
    )
    return cast(
        "Callable[..., HttpResponse]",
        keeping.as_view(**getattr(callback, "view_initkwargs", {})),
    )


def may_pass(exc: BaseException) -> bool:
    """Whether the same delivery may succeed later: the database or the provider's API."""
    return database_unavailable(exc) or provider_fetch_may_pass(exc)


def provider_fetch_may_pass(exc: BaseException) -> bool:
    """A failed fetch from the provider's API (requests, or boto3 for SES's S3) worth retrying.

    anymail raises the HTTP library's own error (``raise_for_status``), at
    times from inside its MIME parser, so the causes are followed too.
    """
    current: BaseException | None = exc
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (requests.ConnectionError, requests.Timeout)):
            return True
        status = _http_status(current)
        if status is not None and (status >= 500 or status in PASSING_STATUSES):
            return True
        current = current.__cause__ or current.__context__
    return False


def _http_status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    if isinstance(response, requests.Response):
        return response.status_code
    if isinstance(response, dict):  # botocore's ClientError (SES's S3 download)
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return status if isinstance(status, int) else None
    return None


def retry_later(request: HttpRequest, esp_name: str, why: BaseException) -> HttpResponse:
    """503 with Retry-After: nothing was kept, so the provider's retry is the copy."""
    logger.error(
        "%s delivery to %s not taken, the provider will retry: %s: %s",
        esp_name,
        request.path,
        type(why).__name__,
        why,
    )
    response = HttpResponse(
        f"Not stored ({type(why).__name__}); please retry.",
        status=503,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def keep_undecodable_delivery(request: HttpRequest, esp_name: str, why: Exception) -> None:
    """Quarantine a delivery's raw bytes for a person; the provider gets its 2xx."""
    logger.exception(
        "%s delivery to %s could not be parsed; quarantining it", esp_name, request.path
    )
    content_type = request.META.get("CONTENT_TYPE", "") or "untyped"
    quarantine(
        delivery_bytes(request),
        provider=esp_name.lower(),
        why=f"{type(why).__name__}: {why} (a {content_type} delivery to {request.path})",
        flag="undecodable_delivery",
    )


def delivery_bytes(request: HttpRequest) -> bytes:
    """The delivery as received; a form already parsed (multipart) is kept as its fields.

    Django keeps no copy of a multipart body it has streamed into fields, and
    reading the body up front for every delivery would hold large mail twice.
    """
    try:
        return request.body
    except RawPostDataException:
        fields = {name: request.POST.getlist(name) for name in request.POST}
        files = {name: [f.name for f in request.FILES.getlist(name)] for name in request.FILES}
        return json.dumps({"fields": fields, "files": files}, ensure_ascii=False).encode()


# --- Signal receivers ----------------------------------------------------------------


def handle_inbound(
    sender: object, event: AnymailInboundEvent | None, esp_name: str, **_: object
) -> None:
    """Store one inbound email; quarantine it if its content cannot be handled."""
    if event is None:  # keeping_poison drops these; a direct sender might not
        logger.info("%s inbound event that is none: dropped", esp_name)
        return
    provider = esp_name.lower()
    provider_message_id = str(event.event_id or "")
    raw = None
    try:
        raw = raw_from_event(event)
        if event.message is None:
            raise ValueError("the provider's event carries no message")
        receive_message(
            event.message,
            provider=provider,
            provider_message_id=provider_message_id,
            raw=raw,
            provider_verdicts=provider_fields(event.esp_event),
        )
    except Exception as exc:
        if database_unavailable(exc):
            raise  # answered 503: quarantine is for content, and it cannot be written either
        logger.exception("inbound %s %s failed; quarantining it", provider, provider_message_id)
        raw_sha256 = None
        if raw is None and event.message is not None:
            raw = message_bytes(event.message)
            raw_sha256 = serialised_sha256(event.message, raw)
        quarantine(
            raw or b"",
            provider=provider,
            provider_message_id=provider_message_id,
            why=exc,
            flag="error",
            raw_sha256=raw_sha256,
        )


def raw_from_event(event: AnymailInboundEvent) -> bytes | None:
    """The message exactly as the provider sent it, when its payload carries it.

    Postmark's RawEmail (if enabled on the server), Mailgun's body-mime (the
    ``inbound_mime`` URL), SendGrid's "Send Raw" email field, Amazon SES's
    content (SNS action) or S3 object, Postal's message, SparkPost's
    email_rfc822, Mandrill's raw_msg, MailerSend's raw and Mailtrap's raw
    message (``providers.raw_as_sent``). Parsed fields only (Brevo, Mailjet,
    Resend, parsed Mailgun and SendGrid) are serialised again by the caller.
    """
    return providers.raw_as_sent(event)


def handle_tracking(
    sender: object, event: AnymailTrackingEvent | None, esp_name: str, **_: object
) -> None:
    """A provider says one of our emails bounced or was rejected: record it."""
    if event is None or event.event_type not in BOUNCE_EVENTS:
        return
    try:
        record_tracked_bounce(event, esp_name)
    except Exception as exc:
        if database_unavailable(exc):
            raise  # answered 503: the provider sends the event again
        # The event is kept by the provider; a retry storm would not fix a bug here.
        logger.exception(
            "%s %s event for %s not recorded", esp_name, event.event_type, event.message_id
        )


def record_tracked_bounce(event: AnymailTrackingEvent, esp_name: str) -> bool:
    if not event.message_id:
        logger.warning("%s %s event without a message id: ignored", esp_name, event.event_type)
        return False
    outbound = (
        Message.objects.filter(
            direction=Message.Direction.OUTBOUND, provider_message_id=str(event.message_id)
        )
        .select_related("thread__case", "employee")
        .first()
    )
    if outbound is None:
        logger.info(
            "%s %s event for %s: not a message of ours",
            esp_name,
            event.event_type,
            event.message_id,
        )
        return False
    recipient = event.recipient or (outbound.to[0] if outbound.to else "")
    reason = event.description or event.mta_response or event.reject_reason or ""
    return record_bounce(outbound, recipient, f"{esp_name} {event.event_type}: {reason}".strip())
