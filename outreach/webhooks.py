"""The email provider's webhooks: inbound mail and delivery events, through anymail.

anymail's views authenticate the call (``WEBHOOK_SECRET`` basic auth; a
wrong secret is its own HTTP 400) and turn each ESP's payload into signals;
the receivers here store what arrived. Two rules on top of anymail's:

- Outside DEBUG with no secret configured every call is refused (403):
  anymail would only warn and accept mail from anyone on the web.
- Nothing a provider delivers with the right secret ends as a 5xx: anymail
  would turn it into one and the provider retries the same poison for hours,
  then drops it. A delivery anymail cannot parse (malformed JSON, ``[]``,
  ``null``, bytes that are not UTF-8, fields of the wrong shape) is kept as
  raw bytes in a quarantined row and acknowledged; so is a message a receiver
  fails on. Only when even the quarantine cannot be written (the database is
  down) does the error go back to the provider, whose retry is then the only
  copy left. A wrong secret is still refused before anything is kept.
"""

import json
import logging
from collections.abc import Callable
from functools import wraps
from typing import Any, cast

from anymail.signals import AnymailInboundEvent, AnymailTrackingEvent, EventType
from anymail.utils import get_anymail_setting
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.http.request import RawPostDataException
from django.urls import URLPattern
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from outreach.bounces import record_bounce
from outreach.header_fields import clean_request
from outreach.inbound import quarantine, receive_message
from outreach.models import Message
from outreach.parsing import message_bytes

logger = logging.getLogger(__name__)

BOUNCE_EVENTS = frozenset({EventType.BOUNCED, EventType.REJECTED})
REFUSED = (
    "Email webhooks are disabled: WEBHOOK_SECRET is not set. Set WEBHOOK_SECRET "
    '("user:password", comma-separated to rotate) and give the provider '
    "https://user:password@<host>/anymail/<esp>/inbound/."
)


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
    """anymail's URL patterns, each view behind ``require_webhook_secret``, for include()."""
    from anymail import urls as anymail_urls

    patterns = [
        URLPattern(
            p.pattern, require_webhook_secret(keeping_poison(p.callback)), p.default_args, p.name
        )
        for p in anymail_urls.urlpatterns
    ]
    return patterns, anymail_urls.app_name


def keeping_poison(callback: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The same anymail view, except that a payload it cannot parse is kept, not raised.

    anymail's ``post`` checks the secret (``run_validators``), then calls
    ``parse_events``: overriding only the latter keeps the check first, so a
    caller without the secret gets anymail's 400 and stores nothing.
    """
    view_class = getattr(callback, "view_class", None)
    if view_class is None:
        return callback

    def parse_events(self: Any, request: HttpRequest) -> list[object]:
        try:
            # Header fields without CR/LF before anymail builds the message (issue 34).
            clean_request(request, self.esp_name)
            return list(view_class.parse_events(self, request))
        except Exception as exc:
            keep_undecodable_delivery(request, self.esp_name, exc)
            return []

    keeping: type[View] = type(view_class.__name__, (view_class,), {"parse_events": parse_events})
    return cast(
        "Callable[..., HttpResponse]",
        keeping.as_view(**getattr(callback, "view_initkwargs", {})),
    )


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


def handle_inbound(sender: object, event: AnymailInboundEvent, esp_name: str, **_: object) -> None:
    """Store one inbound email; quarantine it if anything goes wrong."""
    provider = esp_name.lower()
    provider_message_id = str(event.event_id or "")
    raw = None
    try:
        raw = raw_from_event(event)
        receive_message(
            event.message, provider=provider, provider_message_id=provider_message_id, raw=raw
        )
    except Exception as exc:
        logger.exception("inbound %s %s failed; quarantining it", provider, provider_message_id)
        if raw is None:
            raw = message_bytes(event.message) if event.message is not None else b""
        quarantine(
            raw, provider=provider, provider_message_id=provider_message_id, why=exc, flag="error"
        )


def raw_from_event(event: AnymailInboundEvent) -> bytes | None:
    """The message exactly as the provider sent it, when its payload carries it.

    Postmark's RawEmail (if enabled on the server), Mailgun's body-mime
    (the ``inbound_mime`` URL) and SendGrid's "Send Raw" email field. Other
    payloads (parsed fields, SES) are serialised again by the caller.
    """
    esp_event = event.esp_event
    raw: object = None
    if isinstance(esp_event, dict):
        raw = esp_event.get("RawEmail")
    elif hasattr(esp_event, "POST"):
        raw = esp_event.POST.get("body-mime") or esp_event.POST.get("email")
    if not isinstance(raw, str) or not raw:
        return None
    try:
        # anymail parsed the same text encoded this way (AnymailInboundMessage.parse_raw_mime).
        return raw.encode("utf-8")
    except UnicodeEncodeError:
        return None


def handle_tracking(
    sender: object, event: AnymailTrackingEvent, esp_name: str, **_: object
) -> None:
    """A provider says one of our emails bounced or was rejected: record it."""
    if event.event_type not in BOUNCE_EVENTS:
        return
    try:
        record_tracked_bounce(event, esp_name)
    except Exception:
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
