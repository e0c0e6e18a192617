"""An email's header fields and addresses, read without ever raising.

A malformed header reads as its raw text, or as "": everything the sender
wrote is untrusted, so nothing here stops the message from being stored.
"""

import email.message
import re
from email.header import decode_header, make_header
from email.utils import getaddresses


def normalise_id(value: str) -> str:
    """A Message-ID as stored: no angle brackets, no whitespace, case kept."""
    return re.sub(r"\s+", "", value).strip("<>")


def header_names(msg: email.message.Message) -> list[str]:
    try:
        return [name for name, _ in msg.raw_items()]
    except Exception:
        return []


def _raw_header(msg: email.message.Message, name: str) -> str:
    for key, value in msg.raw_items():
        if key.lower() == name.lower():
            return value if isinstance(value, str) else str(value)
    return ""


def header_value(msg: email.message.Message, name: str) -> str:
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


def addresses(msg: email.message.Message, name: str) -> list[tuple[str, str]]:
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
        (display, storable(address).strip().lower())
        for display, address in pairs
        if address and address.strip() and address.strip() != "<>"
    ]


def envelope_recipients(msg: email.message.Message) -> list[str]:
    # anymail sets the SMTP RCPT TO of most providers on the message itself.
    recipient = getattr(msg, "envelope_recipient", None)
    return [recipient.strip().lower()] if isinstance(recipient, str) and recipient.strip() else []


def failed_recipients_header(msg: email.message.Message) -> list[str]:
    # Exim and others name the failed addresses in a header of the bounce.
    return [addr for _, addr in addresses(msg, "X-Failed-Recipients")]


_ID_IN_BRACKETS = re.compile(r"<([^<>\s]+)>")


def message_ids(value: str) -> list[str]:
    """Message-IDs in a header value, in order, normalised (``<a@b> <c@d>`` → [a@b, c@d])."""
    found = _ID_IN_BRACKETS.findall(value)
    if not found:
        found = value.split()
    return [normalise_id(item) for item in found if normalise_id(item)]


def first_message_id(value: str) -> str:
    found = message_ids(value)
    return found[0] if found else ""


def unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


def storable(value: str) -> str:
    """Text safe to store: no undecodable bytes (surrogates) and no NULs (PostgreSQL)."""
    if any("\ud800" <= char <= "\udfff" for char in value):
        value = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return value.replace("\x00", "\ufffd")
