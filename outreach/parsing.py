"""Read an inbound email into plain facts: who, to whom, what it says, what kind it is.

Pure functions, no database: ``parse_raw`` for the bytes an ESP (or a file)
hands over, ``parse_message`` for an already parsed message such as anymail's
``AnymailInboundMessage``. Everything the sender wrote is untrusted: headers
may be malformed, charsets invented and bodies huge, so every read here
degrades to "empty" or to text decoded with replacement characters instead of
raising. Only a message with nothing usable (no headers, no sender) is
refused, with ``UnparseableMessage``.

Its parts: header fields and addresses (``outreach.mail_headers``), the
bodies as text (``outreach.mail_bodies``), and what kind of message it is
(``outreach.mail_kind``).

The kind decides what happens next (design, audit step 5): a ``reply`` is
classified and acted on; an ``auto_reply`` (out of office, list mail, read
receipts) and a ``bounce`` (a delivery-status report) are set aside.
"""

import email.message
import hashlib
import re
from dataclasses import dataclass, field
from email import policy
from email.parser import BytesParser

from django.conf import settings

from outreach.authentication import failed_checks, header_fields
from outreach.mail_bodies import bodies
from outreach.mail_headers import (
    addresses,
    envelope_recipients,
    failed_recipients_header,
    first_message_id,
    header_names,
    header_value,
    message_ids,
    storable,
    unique,
)
from outreach.mail_kind import (
    Kind,
    attached_message_ids,
    delivery_report,
    kind_of,
    quoted_message_ids,
)

MAX_REFERENCES = 5
# Longer Message-IDs cannot be stored (Message.rfc_message_id) and are not real ones.
MAX_MESSAGE_ID = 255
MAX_HEADER_VALUE = 1000
# Headers kept on the stored message: threading, the signals that made us set a
# message aside, and delivery hints. Received and the rest stay in ``raw``.
KEPT_HEADERS = (
    "Message-ID",
    "In-Reply-To",
    "References",
    "Date",
    "Reply-To",
    "Return-Path",
    "Delivered-To",
    "X-Original-To",
    "Envelope-To",
    "Content-Type",
    "Auto-Submitted",
    "X-Autoreply",
    "X-Autorespond",
    "X-Auto-Response-Suppress",
    "Precedence",
    "List-Id",
    "List-Unsubscribe",
    "X-Failed-Recipients",
)
RECIPIENT_HEADERS = ("To", "Cc", "Delivered-To", "X-Original-To", "Envelope-To")


class UnparseableMessage(ValueError):
    """Nothing usable could be read from the message (no headers, no sender)."""


@dataclass(frozen=True)
class ParsedInbound:
    from_email: str
    from_name: str
    to: tuple[str, ...]
    cc: tuple[str, ...]
    # Every address the message was delivered to, lower-cased: the reply token
    # may be in To, Cc or only in the envelope (Delivered-To, X-Original-To).
    recipients: tuple[str, ...]
    subject: str
    text: str
    html: str
    message_id: str
    in_reply_to: str
    references: tuple[str, ...]
    kind: Kind
    kind_reason: str
    bounced_recipients: tuple[str, ...] = ()
    bounced_message_ids: tuple[str, ...] = ()
    # The bounce is a multipart/report (RFC 3464) whose delivery-status part
    # names the failed recipients: the only kind of bounce email that may mark
    # an address undeliverable (a mailer-daemon From is easy to write).
    delivery_report: bool = False
    # Why the sender's mail failed SPF/DKIM/DMARC where the provider received
    # it, one line per failing verdict (outreach.authentication); () when none did.
    authentication_failures: tuple[str, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)
    raw_sha256: str = ""
    flags: tuple[str, ...] = ()


def parse_raw(raw: bytes) -> ParsedInbound:
    """Parse the raw RFC 5322 bytes of one message; UnparseableMessage if hopeless."""
    if not raw or not raw.strip():
        raise UnparseableMessage("empty message")
    try:
        msg = BytesParser(policy=policy.default).parsebytes(raw)
    except Exception as exc:  # the stdlib parser is lenient; anything it raises is garbage
        raise UnparseableMessage(f"the email parser failed: {exc}") from exc
    return parse_message(msg, raw)


def parse_message(msg: email.message.Message, raw: bytes | None = None) -> ParsedInbound:
    """Read a parsed message (stdlib or anymail's AnymailInboundMessage)."""
    if raw is None:
        raw = message_bytes(msg)
    if not header_names(msg):
        raise UnparseableMessage("no header fields")
    senders = addresses(msg, "From")
    if not senders:
        raise UnparseableMessage("no sender address (From)")
    from_name, from_email = senders[0]
    flags: list[str] = []

    text, html = bodies(msg, flags)
    if len(text) > settings.INBOUND_CLASSIFY_MAX_CHARS:
        flags.append("oversized")

    message_id = first_message_id(header_value(msg, "Message-ID"))
    if len(message_id) > MAX_MESSAGE_ID:
        flags.append("long_message_id")
        message_id = ""
    to = tuple(addr for _, addr in addresses(msg, "To"))
    cc = tuple(addr for _, addr in addresses(msg, "Cc"))
    recipients = unique(
        [addr for name in RECIPIENT_HEADERS for _, addr in addresses(msg, name)]
        + envelope_recipients(msg)
    )
    subject = storable(header_value(msg, "Subject"))
    headers = {name: storable(header_value(msg, name))[:MAX_HEADER_VALUE] for name in KEPT_HEADERS}
    headers = {name: value for name, value in headers.items() if value}

    report = delivery_report(msg)
    kind, reason = kind_of(msg, from_email, subject, report)
    bounced_recipients: tuple[str, ...] = ()
    bounced_ids: tuple[str, ...] = ()
    if kind == "bounce":
        reported = report.failed_recipients if report else []
        bounced_recipients = unique(reported + failed_recipients_header(msg))
        bounced_ids = unique(attached_message_ids(msg) or quoted_message_ids(text))

    return ParsedInbound(
        from_email=from_email,
        from_name=storable(from_name),
        to=to,
        cc=cc,
        recipients=recipients,
        subject=subject,
        text=text,
        html=html,
        message_id=message_id,
        in_reply_to=first_message_id(header_value(msg, "In-Reply-To")),
        references=tuple(message_ids(header_value(msg, "References"))[:MAX_REFERENCES]),
        kind=kind,
        kind_reason=reason,
        bounced_recipients=bounced_recipients,
        bounced_message_ids=bounced_ids,
        delivery_report=kind == "bounce" and report is not None,
        authentication_failures=failed_checks(header_fields(msg)),
        headers=headers,
        raw_sha256=hashlib.sha256(raw).hexdigest(),
        flags=tuple(flags),
    )


def message_bytes(msg: email.message.Message) -> bytes:
    """The message serialised again, for a record and a hash, when no raw bytes came."""
    try:
        return msg.as_bytes()
    except Exception:  # a header the generator refuses: keep what str() can give
        try:
            return msg.as_string().encode("utf-8", "surrogateescape")
        except Exception:
            return b""


def reply_token_from(addresses: list[str] | tuple[str, ...]) -> str | None:
    """The reply token (a rider's own, or the thread's) in the first of our reply addresses."""
    pattern = re.compile(
        rf"{re.escape(settings.INBOUND_LOCAL_PREFIX.lower())}\+([0-9a-f]{{40}})"
        rf"@{re.escape(settings.INBOUND_DOMAIN.lower())}"
    )
    for address in addresses:
        match = pattern.fullmatch(address.strip().strip("<>").lower())
        if match:
            return match.group(1)
    return None


def reply_addresses_in(text: str) -> list[str]:
    """Every ``<prefix>+<token>@<INBOUND_DOMAIN>`` address written anywhere in ``text``.

    For a message we could not parse (a provider's payload, broken MIME): the
    address it was sent to still says which thread it belongs to.
    """
    pattern = re.compile(
        rf"{re.escape(settings.INBOUND_LOCAL_PREFIX)}\+[0-9a-f]{{40}}"
        rf"@{re.escape(settings.INBOUND_DOMAIN)}",
        re.IGNORECASE,
    )
    return list(dict.fromkeys(found.lower() for found in pattern.findall(text)))


def text_for_classification(body: str) -> tuple[str, bool]:
    """The part of a reply the classifier reads, and whether it was cut."""
    limit = settings.INBOUND_CLASSIFY_MAX_CHARS
    return body[:limit], len(body) > limit
