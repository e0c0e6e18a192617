"""An email's bodies as text: MIME parts decoded, HTML read as text, hidden words noticed.

An unknown or lying charset decodes with replacement characters (and a flag),
never an exception; attachments and attached messages are not what the sender
wrote and are skipped.
"""

import email.message
import re
from collections.abc import Iterator
from html import unescape
from html.parser import HTMLParser
from typing import cast

from outreach.mail_headers import storable


def bodies(msg: email.message.Message, flags: list[str]) -> tuple[str, str]:
    """The text/plain body (else the HTML as text) and the HTML body."""
    plain = _first_part(msg, "text/plain")
    html_part = _first_part(msg, "text/html")
    text = decode_part(plain, flags) if plain is not None else ""
    html = decode_part(html_part, flags) if html_part is not None else ""
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
    for part in sub_messages(payload):
        if _is_attachment(part) or part.get_content_maintype() == "message":
            continue
        yield from _body_parts(part)


def sub_messages(payload: object) -> list[email.message.Message]:
    """A multipart payload's sub-messages; the stdlib types a payload as any of its forms."""
    return cast(list[email.message.Message], payload) if isinstance(payload, list) else []


def _is_attachment(part: email.message.Message) -> bool:
    try:
        return part.get_content_disposition() == "attachment"
    except Exception:
        return False


def decode_part(part: email.message.Message, flags: list[str]) -> str:
    """A text part's content; an unknown or lying charset is decoded with replacement."""
    payload: bytes | str | None
    try:
        payload = cast(bytes | str | None, part.get_payload(decode=True))  # a leaf: bytes
    except Exception:
        payload = None
    if payload is None:
        payload = b""
    if isinstance(payload, str):  # a constructed message may hold text already
        return storable(unix_newlines(payload))
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
    return storable(unix_newlines(text))


def _charset(part: email.message.Message) -> str:
    try:
        return part.get_content_charset() or "us-ascii"
    except Exception:
        return "us-ascii"


def unix_newlines(text: str) -> str:
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
