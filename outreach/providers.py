"""The email providers anymail receives from: which answer here, what each needs, what each sent.

- **Which.** ``EMAIL_PROVIDER`` names the providers whose webhooks answer on
  ``/anymail/<provider>/…``; unset, it is the one ``EMAIL_BACKEND`` sends
  through. With neither (the embedded default, the test suite) every provider
  whose settings are complete answers. Every other anymail URL answers 404
  before anymail builds its view: a view built without its settings or its
  package raises, and Django would answer anyone's ``POST {}`` with a 500.
- **What each needs.** anymail reads a provider's settings and imports its
  extra's packages when it builds the view; ``webhook_problem`` builds it to
  find out, and adds the needs anymail only discovers on the first delivery
  (Mandrill's key, Postal's ``cryptography``). ``check_email_providers`` (a
  system check: ``manage.py`` commands, the workers and ``poolpatrol.wsgi``
  run it) refuses to start while a configured provider has one.
- **What each sent.** ``raw_as_sent`` is the message as the provider delivered
  it, where the payload carries the raw MIME or anymail fetched it (S3 for
  Amazon SES, Mailtrap's raw URL); ``None`` where the provider sends parsed
  fields only (Brevo, Mailjet, Postmark without RawEmail, parsed Mailgun and
  SendGrid, Resend).
"""

import binascii
import logging
import warnings
from base64 import b64decode
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import wraps
from importlib import import_module
from typing import Any, cast

from anymail.utils import get_anymail_setting
from django.conf import settings
from django.core.checks import CheckMessage, Error
from django.http import HttpRequest, HttpResponse, HttpResponseNotFound
from django.urls import URLPattern

logger = logging.getLogger(__name__)

# Set on an inbound event whose message anymail fetched (S3, Mailtrap): those bytes.
FETCHED_RAW = "pool_patrol_fetched_raw"
NOT_HERE = "Not Found: this server does not receive email from {provider}.\n"


@dataclass(frozen=True)
class Webhook:
    """One of anymail's webhook URLs."""

    provider: str  # anymail's name for the ESP, as in its URLs and backends: "amazon_ses"
    route: str  # "/anymail/amazon_ses/inbound/" (Mailgun's raw MIME form: "inbound_mime")
    view_class: Any  # an anymail webhook view class (anymail ships no types)
    initkwargs: dict[str, object]


def webhook_of(pattern: URLPattern) -> Webhook:
    """The provider and URL of one of anymail's URL patterns."""
    path = str(pattern.pattern).lstrip("^").rstrip("$").replace("(_mime)?", "")
    callback = cast("Any", pattern.callback)
    return Webhook(
        provider=path.split("/", 1)[0],
        route=f"/anymail/{path}",
        view_class=callback.view_class,
        initkwargs=dict(getattr(callback, "view_initkwargs", {})),
    )


def all_webhooks() -> list[Webhook]:
    from anymail import urls as anymail_urls

    return [webhook_of(pattern) for pattern in anymail_urls.urlpatterns]


# --- Which providers answer ------------------------------------------------------------


def configured_providers() -> list[str]:
    """``EMAIL_PROVIDER``, else the anymail ESP ``EMAIL_BACKEND`` sends through, else none."""
    named = [name.strip().lower() for name in getattr(settings, "EMAIL_PROVIDER", []) if name]
    if named:
        return named
    parts = str(settings.EMAIL_BACKEND).split(".")
    # Only an ESP anymail can receive from (not its test or console backends).
    receiving = {hook.provider for hook in all_webhooks()}
    if len(parts) == 4 and parts[:2] == ["anymail", "backends"] and parts[2] in receiving:
        return [parts[2]]
    return []


def webhook_problem(hook: Webhook) -> str | None:
    """Why this webhook cannot run here (a setting or a package missing), or None."""
    with warnings.catch_warnings():
        # anymail's warnings (no secret, deprecated URL, SendGrid unsupported) belong
        # to a delivery, not to this look.
        warnings.simplefilter("ignore")
        try:
            hook.view_class(**hook.initkwargs)
        except Exception as exc:  # anymail raises its configuration errors in __init__
            return f"{exc}".strip() or type(exc).__name__
    return deferred_problem(hook.provider)


def deferred_problem(provider: str) -> str | None:
    """What anymail only finds out on the first delivery: one 500 per delivery after that."""
    if provider == "mandrill":
        # anymail defers the key so that Mandrill's HEAD check of the URL passes.
        try:
            get_anymail_setting("webhook_key", esp_name="Mandrill", allow_bare=True, kwargs={})
        except Exception as exc:
            return str(exc)
    if provider == "postal" and not _importable("cryptography.hazmat.primitives.serialization"):
        return (
            "The cryptography package isn't installed but is needed to check Postal's "
            'signatures (install "django-anymail[postal]").'
        )
    return None


def _importable(module: str) -> bool:
    try:
        import_module(module)
    except ImportError:
        return False
    return True


def refusal(hook: Webhook) -> str | None:
    """Why this URL answers 404 here, for the log; None when it is this server's provider's."""
    configured = configured_providers()
    if configured and hook.provider not in configured:
        return f"EMAIL_PROVIDER is {','.join(configured)}"
    return webhook_problem(hook)


def answering_if_configured(
    hook: Webhook, view: Callable[..., HttpResponse]
) -> Callable[..., HttpResponse]:
    """The view, for the configured provider's URLs; 404 on every other, before anymail runs."""

    @wraps(view)
    def gated(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        why = refusal(hook)
        if why is not None:
            logger.log(_level(hook), "%s %s answered 404: %s", request.method, request.path, why)
            return HttpResponseNotFound(
                NOT_HERE.format(provider=hook.provider), content_type="text/plain; charset=utf-8"
            )
        return view(request, *args, **kwargs)

    return gated


def _level(hook: Webhook) -> int:
    """ERROR: the configured provider cannot run (the system check refuses to start on
    it). WARNING: none is configured, so it may be the operator's. INFO: someone else's."""
    configured = configured_providers()
    if hook.provider in configured:
        return logging.ERROR
    return logging.INFO if configured else logging.WARNING


# --- Refusing to start -----------------------------------------------------------------


def check_email_providers(
    app_configs: Iterable[object] | None = None, **_: object
) -> list[CheckMessage]:
    """Error for each configured provider a webhook of which cannot run (outreach.E101–E102)."""
    messages: list[CheckMessage] = []
    hooks = all_webhooks()
    known = sorted({hook.provider for hook in hooks})
    for provider in configured_providers():
        if provider not in known:
            messages.append(
                Error(
                    f"EMAIL_PROVIDER names {provider!r}, which anymail cannot receive from.",
                    hint=f"One of: {', '.join(known)}.",
                    id="outreach.E101",
                )
            )
            continue
        problems: dict[str, list[str]] = {}
        for hook in hooks:
            if hook.provider == provider and (problem := webhook_problem(hook)):
                problems.setdefault(problem, []).append(hook.route)
        for problem, routes in problems.items():
            messages.append(
                Error(
                    f"The {provider} webhooks cannot run ({', '.join(routes)}): {problem}",
                    hint=(
                        "Set the setting named (as an ANYMAIL_… environment variable) or "
                        "install the extra named; docs/operating.md lists each provider's."
                    ),
                    id="outreach.E102",
                )
            )
    return messages


# --- What the provider sent ------------------------------------------------------------


def raw_as_sent(event: Any) -> bytes | None:
    """The message's bytes as the provider delivered them, when it delivered them."""
    fetched = getattr(event, FETCHED_RAW, None)
    if isinstance(fetched, bytes) and fetched:
        return fetched
    return payload_raw(event.esp_event)


def payload_raw(esp_event: object) -> bytes | None:
    """The raw MIME a provider's payload carries (anymail hands over its payload as esp_event)."""
    if hasattr(esp_event, "POST"):
        # Mailgun's raw MIME form (the inbound_mime URL) and SendGrid's "Send Raw" post
        # a form; anymail passes the request.
        post = esp_event.POST
        return _text_bytes(post.get("body-mime") or post.get("email"))
    if not isinstance(esp_event, dict):
        return None
    for extract in (_postmark, _amazon_ses, _postal, _sparkpost, _mandrill, _mailersend):
        raw = extract(esp_event)
        if raw:
            return raw
    return None


def _postmark(event: dict[str, Any]) -> bytes | None:
    return _text_bytes(event.get("RawEmail"))  # only with "include raw email content"


def _amazon_ses(event: dict[str, Any]) -> bytes | None:
    # A receipt rule's SNS action carries the message, UTF-8 or base64 as configured.
    if event.get("notificationType") != "Received":
        return None
    action = _dict(_dict(event.get("receipt")).get("action"))
    if action.get("type") != "SNS":
        return None
    return _maybe_base64(event.get("content"), action.get("encoding") == "BASE64")


def _postal(event: dict[str, Any]) -> bytes | None:
    if "rcpt_to" not in event:
        return None
    return _maybe_base64(event.get("message"), event.get("base64") is True)


def _sparkpost(event: dict[str, Any]) -> bytes | None:
    relay = _dict(_dict(event.get("msys")).get("relay_message"))
    content = _dict(relay.get("content"))
    return _maybe_base64(content.get("email_rfc822"), content.get("email_rfc822_is_base64") is True)


def _mandrill(event: dict[str, Any]) -> bytes | None:
    if event.get("event") != "inbound":
        return None
    return _text_bytes(_dict(event.get("msg")).get("raw_msg"))


def _mailersend(event: dict[str, Any]) -> bytes | None:
    if event.get("type") != "inbound.message":
        return None
    return _text_bytes(_dict(event.get("data")).get("raw"))


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _maybe_base64(value: object, is_base64: bool) -> bytes | None:
    if not is_base64:
        return _text_bytes(value)
    if not isinstance(value, str) or not value:
        return None
    try:
        return b64decode(value, validate=False)
    except (binascii.Error, ValueError):
        return None


def _text_bytes(value: object) -> bytes | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        # anymail parsed the same text encoded this way (AnymailInboundMessage.parse_raw_mime).
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return None


# --- Keeping what anymail fetched --------------------------------------------------------


def keeping_fetched_raw(callback: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The same view; for Amazon SES (S3) and Mailtrap, the fetched bytes kept on the event.

    anymail streams the message from S3 or Mailtrap's raw URL into its parser
    and keeps no copy; the subclass passes the chunks through and keeps them.
    """
    view_class = getattr(callback, "view_class", None)
    fetching = _FETCHING.get(getattr(view_class, "__name__", ""))
    if view_class is None or fetching is None:
        return callback
    fetch_method, key_of = fetching
    original_fetch = getattr(view_class, fetch_method)

    def fetch(self: Any, *args: str) -> Iterator[bytes]:
        kept = self._fetched.setdefault(key_of(*args), [])
        for chunk in original_fetch(self, *args):
            kept.append(chunk)
            yield chunk

    def parse_events(self: Any, request: HttpRequest) -> list[object]:
        self._fetched = {}
        events = list(view_class.parse_events(self, request))
        for event in events:
            key = _fetched_key(getattr(event, "esp_event", None))
            if key in self._fetched:
                setattr(event, FETCHED_RAW, b"".join(self._fetched[key]))
        return events

    keeping: Any = type(
        view_class.__name__, (view_class,), {fetch_method: fetch, "parse_events": parse_events}
    )
    return cast(
        "Callable[..., HttpResponse]",
        keeping.as_view(**getattr(callback, "view_initkwargs", {})),
    )


# anymail's view, the method that streams the message it fetches, and the key the
# event's esp_event gives back (_fetched_key).
_FETCHING: dict[str, tuple[str, Callable[..., str]]] = {
    "AmazonSESInboundWebhookView": ("fetch_s3_chunks", lambda bucket, key: f"{bucket}/{key}"),
    "MailtrapInboundWebhookView": ("fetch_raw_message_chunks", lambda url: url),
}


def _fetched_key(esp_event: object) -> str | None:
    event = _dict(esp_event)
    if url := event.get("raw_message_url"):  # Mailtrap: anymail's esp_event is the API's message
        return str(url)
    action = _dict(_dict(event.get("receipt")).get("action"))
    if action.get("type") == "S3":
        return f"{action.get('bucketName')}/{action.get('objectKey')}"
    return None
