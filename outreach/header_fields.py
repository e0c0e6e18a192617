"""A provider's parsed header fields, cleaned of line breaks before anymail builds the message.

Providers that post a message as parsed fields (Postmark without RawEmail,
Mailjet, Brevo, Mailgun's non-MIME URL) decode encoded words themselves, and
a folded or encoded Subject can come out with a CR/LF inside. Python's email
package refuses such a header value ("Header values may not contain linefeed
or carriage return characters"), so anymail could not build the message and
the rider's reply was quarantined. A line break inside a header value is
never meaningful (folding is whitespace), so each run of them becomes one
space. Bodies and raw MIME are left exactly as sent.
"""

import json
import re
from typing import Any

from django.http import HttpRequest

# Keys, compared in lower case, whose values are header fields or lists of them.
HEADER_KEYS = frozenset(
    {
        "subject", "from", "fromname", "fromfull", "to", "tofull", "cc", "ccfull", "bcc",
        "bccfull", "replyto", "reply-to", "sender", "recipient", "recipients", "date",
        "messageid", "message-id", "inreplyto", "in-reply-to", "references",
        "originalrecipient", "headers", "message-headers", "name", "email", "address",
        "value", "contenttype", "content-type", "contentid", "content-id",
    }
)  # fmt: skip
_BREAKS = re.compile(r"[ \t]*[\r\n]+[ \t]*")


def unfolded(value: str) -> str:
    """A header value with each run of line breaks (and the space around it) as one space."""
    return _BREAKS.sub(" ", value)


def clean_json(value: Any, *, in_header: bool = False) -> Any:
    """``value`` with line breaks removed from every string under a header key."""
    if isinstance(value, dict):
        return {
            key: clean_json(item, in_header=in_header or str(key).lower() in HEADER_KEYS)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [clean_json(item, in_header=in_header) for item in value]
    if isinstance(value, str) and in_header:
        return unfolded(value)
    return value


def clean_request(request: HttpRequest, esp_name: str) -> None:
    """Clean the header fields of a parsed-fields delivery in place; anything else is untouched.

    A JSON body is replaced by its cleaned form only when something changed.
    Of the form posts, only Mailgun's builds headers from a field
    (``message-headers``, JSON); SendGrid's sends a raw header block, and
    reading its form here would lose the body anymail reads after.
    """
    content_type = request.META.get("CONTENT_TYPE", "")
    if content_type.startswith("application/json"):
        _clean_json_body(request)
    elif esp_name.lower() == "mailgun" and content_type.startswith(
        ("multipart/form-data", "application/x-www-form-urlencoded")
    ):
        _clean_mailgun_headers(request)


def _clean_json_body(request: HttpRequest) -> None:
    try:
        payload = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        return
    cleaned = clean_json(payload)
    if cleaned != payload:
        # HttpRequest.body reads this attribute; anymail parses what we set.
        request._body = json.dumps(cleaned).encode()


def _clean_mailgun_headers(request: HttpRequest) -> None:
    values = request.POST.getlist("message-headers")
    cleaned = [_clean_json_text(value) for value in values]
    if cleaned != values:
        fields = request.POST.copy()
        fields.setlist("message-headers", cleaned)
        fields._mutable = False
        request.POST = fields  # type: ignore[assignment]  # WSGIRequest.POST has a setter


def _clean_json_text(text: str) -> str:
    try:
        return json.dumps(clean_json(json.loads(text), in_header=True))
    except ValueError:
        return unfolded(text)


__all__ = ["HEADER_KEYS", "clean_json", "clean_request", "unfolded"]
