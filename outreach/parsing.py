"""Read an inbound email into plain facts: who, to whom, what it says, what kind it is.

Pure functions, no database: ``parse_raw`` for the bytes an ESP (or a file)
hands over, ``parse_message`` for an already parsed message such as anymail's
``AnymailInboundMessage``. Everything the sender wrote is untrusted: headers
may be malformed, charsets invented and bodies huge, so every read here
degrades to "empty" or to text decoded with replacement characters instead of
raising. Only a message with nothing usable (no headers, no sender) is
refused, with ``UnparseableMessage``.

The kind decides what happens next (design, audit step 5): a ``reply`` is
classified and acted on; an ``auto_reply`` (out of office, list mail, read
receipts) and a ``bounce`` (a delivery-status report) are set aside.
"""

import email.message
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import policy
from email.header import decode_header, make_header
from email.parser import BytesParser, HeaderParser
from email.utils import getaddresses
from html import unescape
from html.parser import HTMLParser
from typing import Literal, cast

from django.conf import settings

from outreach.authentication import failed_checks, header_fields

Kind = Literal["reply", "auto_reply", "bounce"]

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


# --- Entry points ----------------------------------------------------------------------


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
    if not _header_names(msg):
        raise UnparseableMessage("no header fields")
    senders = _addresses(msg, "From")
    if not senders:
        raise UnparseableMessage("no sender address (From)")
    from_name, from_email = senders[0]
    flags: list[str] = []

    text, html = _bodies(msg, flags)
    if len(text) > settings.INBOUND_CLASSIFY_MAX_CHARS:
        flags.append("oversized")

    message_id = _first_id(_header(msg, "Message-ID"))
    if len(message_id) > MAX_MESSAGE_ID:
        flags.append("long_message_id")
        message_id = ""
    to = tuple(addr for _, addr in _addresses(msg, "To"))
    cc = tuple(addr for _, addr in _addresses(msg, "Cc"))
    recipients = _unique(
        [addr for name in RECIPIENT_HEADERS for _, addr in _addresses(msg, name)]
        + _envelope_recipients(msg)
    )
    subject = _clean(_header(msg, "Subject"))
    headers = {name: _clean(_header(msg, name))[:MAX_HEADER_VALUE] for name in KEPT_HEADERS}
    headers = {name: value for name, value in headers.items() if value}

    report = _delivery_report(msg)
    kind, reason = _kind(msg, from_email, subject, report)
    bounced_recipients: tuple[str, ...] = ()
    bounced_ids: tuple[str, ...] = ()
    if kind == "bounce":
        reported = report.failed_recipients if report else []
        bounced_recipients = _unique(reported + _failed_recipients_header(msg))
        bounced_ids = _unique(_attached_message_ids(msg) or _quoted_message_ids(text))

    return ParsedInbound(
        from_email=from_email,
        from_name=_clean(from_name),
        to=to,
        cc=cc,
        recipients=recipients,
        subject=subject,
        text=text,
        html=html,
        message_id=message_id,
        in_reply_to=_first_id(_header(msg, "In-Reply-To")),
        references=tuple(_ids(_header(msg, "References"))[:MAX_REFERENCES]),
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


def normalise_id(value: str) -> str:
    """A Message-ID as stored: no angle brackets, no whitespace, case kept."""
    return re.sub(r"\s+", "", value).strip("<>")


# --- Headers and addresses -----------------------------------------------------------


def _header_names(msg: email.message.Message) -> list[str]:
    try:
        return [name for name, _ in msg.raw_items()]
    except Exception:
        return []


def _raw_header(msg: email.message.Message, name: str) -> str:
    for key, value in msg.raw_items():
        if key.lower() == name.lower():
            return value if isinstance(value, str) else str(value)
    return ""


def _header(msg: email.message.Message, name: str) -> str:
    """A header's decoded value, or "" — never an exception for a malformed one."""
    try:
        value = msg.get(name)
        return "" if value is None else str(value)
    except Exception:
        pass
    raw = _raw_header(msg, name)
    try:
        return str(make_header(decode_header(raw)))
    except Exception:
        return raw


def _addresses(msg: email.message.Message, name: str) -> list[tuple[str, str]]:
    """(display name, lower-cased address) pairs from every ``name`` header."""
    pairs: list[tuple[str, str]] = []
    try:
        values = msg.get_all(name) or []
        for value in values:
            pairs += [(a.display_name, a.addr_spec) for a in getattr(value, "addresses", ())]
        if values and not pairs:
            # A legacy (compat32) message: headers are plain strings.
            pairs = getaddresses([str(value) for value in values])
    except Exception:
        pairs = getaddresses([_raw_header(msg, name)])
    return [
        (display, _clean(address).strip().lower())
        for display, address in pairs
        if address and address.strip() and address.strip() != "<>"
    ]


def _envelope_recipients(msg: email.message.Message) -> list[str]:
    # anymail sets the SMTP RCPT TO of most providers on the message itself.
    recipient = getattr(msg, "envelope_recipient", None)
    return [recipient.strip().lower()] if isinstance(recipient, str) and recipient.strip() else []


def _failed_recipients_header(msg: email.message.Message) -> list[str]:
    # Exim and others name the failed addresses in a header of the bounce.
    return [addr for _, addr in _addresses(msg, "X-Failed-Recipients")]


_ID_IN_BRACKETS = re.compile(r"<([^<>\s]+)>")


def _ids(value: str) -> list[str]:
    """Message-IDs in a header value, in order, normalised (``<a@b> <c@d>`` → [a@b, c@d])."""
    found = _ID_IN_BRACKETS.findall(value)
    if not found:
        found = value.split()
    return [normalise_id(item) for item in found if normalise_id(item)]


def _first_id(value: str) -> str:
    found = _ids(value)
    return found[0] if found else ""


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


def _clean(value: str) -> str:
    """Text safe to store: no undecodable bytes (surrogates) and no NULs (PostgreSQL)."""
    if any("\ud800" <= char <= "\udfff" for char in value):
        value = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return value.replace("\x00", "\ufffd")


# --- Bodies --------------------------------------------------------------------------


def _bodies(msg: email.message.Message, flags: list[str]) -> tuple[str, str]:
    """The text/plain body (else the HTML as text) and the HTML body."""
    plain = _first_part(msg, "text/plain")
    html_part = _first_part(msg, "text/html")
    text = _decode(plain, flags) if plain is not None else ""
    html = _decode(html_part, flags) if html_part is not None else ""
    if not text.strip() and html.strip():
        text = html_to_text(html)
        flags.append("text_from_html")
    if html and hidden_html_words(html):
        # Words styled out of sight: a person reads what the sender hid, and why.
        flags.append("hidden_text")
    return text, html


def _first_part(msg: email.message.Message, content_type: str) -> email.message.Message | None:
    for part in _body_parts(msg):
        if part.get_content_type() == content_type:
            return part
    return None


def _body_parts(msg: email.message.Message) -> Iterator[email.message.Message]:
    """The message's own parts, depth first; not attachments, not attached messages.

    An attached .txt file, a forwarded message or the original returned in a
    bounce is not what the sender wrote.
    """
    if not msg.is_multipart():
        yield msg
        return
    payload = msg.get_payload()
    for part in _parts(payload):
        if _is_attachment(part) or part.get_content_maintype() == "message":
            continue
        yield from _body_parts(part)


def _parts(payload: object) -> list[email.message.Message]:
    """A multipart payload's sub-messages; the stdlib types a payload as any of its forms."""
    return cast(list[email.message.Message], payload) if isinstance(payload, list) else []


def _is_attachment(part: email.message.Message) -> bool:
    try:
        return part.get_content_disposition() == "attachment"
    except Exception:
        return False


def _decode(part: email.message.Message, flags: list[str]) -> str:
    """A text part's content; an unknown or lying charset is decoded with replacement."""
    payload: bytes | str | None
    try:
        payload = cast(bytes | str | None, part.get_payload(decode=True))  # a leaf: bytes
    except Exception:
        payload = None
    if payload is None:
        payload = b""
    if isinstance(payload, str):  # a constructed message may hold text already
        return _clean(_newlines(payload))
    charset = _charset(part)
    try:
        text = payload.decode(charset)
    except (LookupError, UnicodeDecodeError, ValueError):
        try:
            text = payload.decode(charset, errors="replace")
        except LookupError:  # a charset Python does not know, e.g. x-unknown-charset
            text = payload.decode("utf-8", errors="replace")
        if "charset_replaced" not in flags:
            flags.append("charset_replaced")
    return _clean(_newlines(text))


def _charset(part: email.message.Message) -> str:
    try:
        return part.get_content_charset() or "us-ascii"
    except Exception:
        return "us-ascii"


def _newlines(text: str) -> str:
    return re.sub(r"\r\n?", "\n", text)


class _TextExtractor(HTMLParser):
    # Tags that start a new line in what a reader sees.
    BLOCK = frozenset(
        {"address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "footer"}
        | {"h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "ol", "p", "pre"}
        | {"section", "table", "td", "th", "tr", "ul"}
    )
    SKIP = frozenset({"script", "style", "head", "title", "template"})
    VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr", "col", "area", "source"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self.skipping = 0
        # Open elements, each marked hidden or not, and whether hidden ones held words.
        self.open: list[tuple[str, bool]] = []
        self.hidden_words: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BLOCK:
            self.chunks.append("\n")
        if tag not in self.VOID:
            self.open.append((tag, _hides(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self.BLOCK:
            self.chunks.append("\n")
        for depth in range(len(self.open) - 1, -1, -1):
            if self.open[depth][0] == tag:
                del self.open[depth:]
                break

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        self.chunks.append(data)
        if re.search(r"\w", data) and any(hidden for _, hidden in self.open):
            self.hidden_words.append(data.strip())


# Inline CSS (or the hidden attribute) that keeps an element's words off the screen.
_HIDING_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0*(?:\.0+)?\s*(?:px|pt|em|rem|%)?\s*(?:;|$)"
    r"|opacity\s*:\s*0*(?:\.0+)?\s*(?:;|$)|(?:max-)?(?:height|width)\s*:\s*0+(?:px)?\s*(?:;|$)",
    re.IGNORECASE,
)


def _hides(attrs: list[tuple[str, str | None]]) -> bool:
    for name, value in attrs:
        if name == "hidden":
            return True
        if name == "style" and value and _HIDING_STYLE.search(value):
            return True
    return False


def hidden_html_words(html: str) -> str:
    """The words an HTML body hides from its reader with CSS ("" when none)."""
    extractor = _TextExtractor()
    try:
        extractor.feed(html)
        extractor.close()
    except Exception:
        return ""
    return " ".join(extractor.hidden_words)


def html_to_text(html: str) -> str:
    """Readable text from an HTML body: blocks become lines, scripts and styles go.

    Text hidden with CSS is kept: the guardrails must see everything the
    sender wrote, not only what a mail client would show.
    """
    extractor = _TextExtractor()
    try:
        extractor.feed(html)
        extractor.close()
        text = "".join(extractor.chunks)
    except Exception:  # malformed beyond what HTMLParser tolerates: strip tags crudely
        text = unescape(re.sub(r"<[^>]*>", " ", html))
    lines = (re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# --- What kind of message ------------------------------------------------------------


@dataclass(frozen=True)
class _DeliveryReport:
    actions: tuple[str, ...]
    failed_recipients: list[str]
    # Status and Diagnostic-Code of the first failure, for people reading the record.
    diagnostic: str = ""


def _delivery_report(msg: email.message.Message) -> _DeliveryReport | None:
    """The delivery-status part of a multipart/report DSN (RFC 3464), if there is one."""
    if msg.get_content_type() != "multipart/report":
        return None
    if (_param(msg, "report-type") or "").lower() != "delivery-status":
        return None
    text = ""
    for part in msg.walk():
        if part.get_content_type() in ("message/delivery-status", "message/global-delivery-status"):
            text += _part_text(part) + "\n"
    actions: list[str] = []
    failed: list[str] = []
    diagnostic = ""
    # Per-recipient blocks are separated by blank lines; each names its action.
    for block in re.split(r"\n\s*\n", text):
        action = re.search(r"^Action:\s*(\S+)", block, re.IGNORECASE | re.MULTILINE)
        if not action:
            continue
        actions.append(action.group(1).lower())
        if action.group(1).lower() == "failed":
            diagnostic = diagnostic or _diagnostic(block)
            failed += [
                address.strip().strip("<>").lower()
                for address in re.findall(
                    r"^(?:Final|Original)-Recipient:\s*[\w-]+\s*;\s*(\S+)",
                    block,
                    re.IGNORECASE | re.MULTILINE,
                )
            ]
    return _DeliveryReport(tuple(actions), failed, diagnostic)


def _diagnostic(block: str) -> str:
    fields = []
    for name in ("Status", "Diagnostic-Code"):
        # A field may be folded over several lines (continuations start with space).
        found = re.search(rf"^{name}:\s*(.*(?:\n[ \t].*)*)", block, re.IGNORECASE | re.MULTILINE)
        if found:
            fields.append(" ".join(found.group(1).split()))
    return " ".join(fields)[:300]


def _param(msg: email.message.Message, name: str) -> str | None:
    try:
        value = msg.get_param(name)
    except Exception:
        return None
    return value if isinstance(value, str) else None


def _part_text(part: email.message.Message) -> str:
    """A message/* part as text (the stdlib parses its payload into sub-messages)."""
    payload = part.get_payload()
    if isinstance(payload, list):
        return "\n\n".join(_headers_text(sub) for sub in _parts(payload))
    raw = cast(bytes | None, part.get_payload(decode=True)) or b""  # a leaf decodes to bytes
    return _newlines(raw.decode("utf-8", errors="replace"))


def _headers_text(msg: email.message.Message) -> str:
    body = msg.get_payload()
    headers = "\n".join(f"{name}: {value}" for name, value in msg.raw_items())
    return headers + ("\n\n" + body if isinstance(body, str) and body.strip() else "")


def _attached_message_ids(msg: email.message.Message) -> list[str]:
    """Message-IDs of the original returned in a bounce (message/rfc822 or headers only)."""
    found: list[str] = []
    for part in msg.walk():
        content_type = part.get_content_type()
        if content_type in ("message/rfc822", "message/global"):
            payload = part.get_payload()
            for original in _parts(payload):
                found += _ids(_header(original, "Message-ID"))[:1]
        elif content_type in ("text/rfc822-headers", "message/global-headers"):
            text = _part_text(part) if isinstance(part.get_payload(), list) else _decode(part, [])
            headers = HeaderParser(policy=policy.default).parsestr(text)
            found += _ids(_header(headers, "Message-ID"))[:1]
    return found


def _quoted_message_ids(text: str) -> list[str]:
    # Bounces that quote the original as plain text (qmail's "failure notice").
    return [
        normalise_id(value)
        for value in re.findall(r"^\s*Message-ID:\s*<([^<>\s]+)>", text, re.I | re.M)
    ]


_DAEMONS = frozenset({"mailer-daemon", "postmaster", "mail-daemon", "mailerdaemon"})
_FAILURE_SUBJECT = re.compile(
    r"undeliver|undelivered|delivery (status notification \(failure|fail|has failed|failure)"
    r"|mail delivery failed|failure notice|returned mail|returned to sender|could not be delivered"
    r"|no se (puede|pudo) entregar|no entregad|error de entrega|entrega fallida",
    re.IGNORECASE,
)
_AUTO_SUBJECT = re.compile(
    r"^\s*\[?\s*(?:"
    r"out of (?:the )?office|automatic reply|auto[- ]?reply|auto[- ]?response|autorespon"
    r"|auto\s*:|away from (?:the )?office|on vacation|vacation reply"
    r"|respuesta autom[aá]tica|fuera de (?:la )?oficina|ausente|ausencia|estoy de vacaciones"
    r"|r[ée]ponse automatique|absence|automatische antwort|abwesenheit|resposta autom[aá]tica"
    # Outlook's and Gmail's localised prefixes: Danish and Norwegian, Swedish, Dutch,
    # Italian, Portuguese, Finnish, Polish, Czech, Russian, Chinese, Japanese.
    r"|frav[æa]r|automatisk svar|fr[åa]nvaro|automatiskt svar|afwezig|automatisch antwoord"
    r"|risposta automatica|fuori (?:sede|ufficio)|aus[êe]ncia|fora do escrit[óo]rio"
    r"|automaattinen vastaus|poissa|odpowied[źz] automatyczna|poza biurem"
    r"|automatick[áa] odpov[ěe]d|nep[řr][íi]tomnost|автоматический ответ|自动答复|自動応答"
    r")",
    re.IGNORECASE,
)
_AUTO_PRECEDENCE = frozenset({"bulk", "junk", "list", "auto_reply"})


def _kind(
    msg: email.message.Message,
    from_email: str,
    subject: str,
    report: _DeliveryReport | None,
) -> tuple[Kind, str]:
    """Bounce, auto-reply or reply, and the signal that decided it.

    Only explicit machine markers and unmistakable subjects count: a rider's
    real reply set aside by mistake would never be read by the loop.
    """
    from_daemon = from_email.split("@", 1)[0] in _DAEMONS
    if report is not None:
        if "failed" in report.actions:
            detail = f" ({report.diagnostic})" if report.diagnostic else ""
            return "bounce", f"delivery-status report: failed{detail}"
        return "auto_reply", f"delivery-status report: {', '.join(report.actions) or 'no action'}"
    if from_daemon and (_FAILURE_SUBJECT.search(subject) or _failed_recipients_header(msg)):
        return "bounce", f"failure notice from {from_email}"
    if msg.get_content_type() == "multipart/report":
        # Read receipts (disposition-notification), abuse reports and the like.
        return "auto_reply", f"report: {(_param(msg, 'report-type') or 'unknown').lower()}"

    auto_submitted = _header(msg, "Auto-Submitted").split(";", 1)[0].strip().lower()
    if auto_submitted and auto_submitted != "no":
        return "auto_reply", f"Auto-Submitted: {auto_submitted}"
    for name in ("X-Autoreply", "X-Autorespond"):
        if _header(msg, name).strip():
            return "auto_reply", f"{name} header"
    suppress = _header(msg, "X-Auto-Response-Suppress").lower()
    # Exchange marks its own out-of-office answers with these; a person's reply
    # does not carry them (AutoReply/DR alone also appear on ordinary mail).
    if re.search(r"\b(oof|all)\b", suppress):
        return "auto_reply", f"X-Auto-Response-Suppress: {suppress.strip()}"
    precedence = _header(msg, "Precedence").strip().lower()
    if precedence in _AUTO_PRECEDENCE:
        return "auto_reply", f"Precedence: {precedence}"
    # Mail sent through a list (RFC 2919) is the list's, not a rider answering
    # us; it is kept on the thread for the record. List-Unsubscribe alone is
    # not enough: some corporate gateways add it to mail a person wrote.
    if list_id := _header(msg, "List-Id").strip():
        return "auto_reply", f"List-Id: {list_id[:80]}"
    if from_daemon:
        return "auto_reply", f"from {from_email}"
    if _AUTO_SUBJECT.search(subject):
        return "auto_reply", f"out-of-office subject: {subject[:80]}"
    return "reply", ""
