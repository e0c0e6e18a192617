"""The rider's own words in a reply: quoted history, signatures and legal footers removed.

Quoted history is our own email and is dropped; a forwarded message the rider
points at ("see below from HR") carries someone else's news and is kept.
"""

import re

from mailparser_reply import EmailReplyParser

# Every language mail-parser-reply knows the quote headers of ("Fra:/Sendt:/Til:/Emne:",
# "Von:/Gesendet:", "De :/Envoyé :"…): a rider's mail client may be set to any of them.
REPLY_LANGUAGES = ["en", "es", "de", "cs", "da", "fr", "it", "ja", "ko", "nl", "pl", "sv", "zh"]
_DASH_BULLET = re.compile(r"^([ \t]*)-([ \t]+)(?=\w)", re.MULTILINE)


def strip_quoted(text: str) -> str:
    """The rider's own words: quoted history, signatures and "> " lines removed."""
    text = text.replace("\r\n", "\n")
    # mail-parser-reply takes a line opening "- " for a signature: a bulleted
    # list of questions would be cut away. Bullets become "•" first.
    text = _DASH_BULLET.sub(r"\1•\2", text)
    replies = EmailReplyParser(languages=REPLY_LANGUAGES).read(text).replies
    body = replies[0].body if replies else text
    # mail-parser-reply 1.36's Spanish header pattern wants two spaces before
    # "escribió:", so Gmail's "El lun, … (<a@b>) escribió:" slips through: cut there.
    body = _SPANISH_HEADER.split(body, maxsplit=1)[0]
    # Any language's "On <date>, <name> <address> wrote:" line the parser does not
    # know (Dutch "schreef", Polish "napisał(a)"…): a year, an address in angle
    # brackets and a closing colon, alone on its line.
    body = _ATTRIBUTION.split(body, maxsplit=1)[0]
    # Quote marks without a header line (a forwarded or inline-quoted message).
    lines = [line for line in body.splitlines() if not line.lstrip().startswith(">")]
    return "\n".join(lines).strip()


_SPANISH_HEADER = re.compile(r"^El .{4,200}? escribió:\s*$", re.MULTILINE)
# A paragraph of its own, followed by a blank line or a quoted line: a rider's
# sentence that ends in a colon runs straight on into what it introduces.
_ATTRIBUTION = re.compile(
    r"(?:\A|\n[ \t]*\n)(?=[^\n]*\b(?:19|20)\d\d\b)(?=[^\n]*<[^<>\s]+@[^<>\s]+>)"
    r"[^\n]{10,300}:[ \t]*(?=\n[ \t]*(?:\n|>)|\Z)"
)
_FORWARD_MARKER = re.compile(
    r"^-{2,}\s*(?:forwarded message|original message|mensaje reenviado)\s*-{2,}\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_POINTS_BELOW = re.compile(
    r"\b(?:see|read|per|as|note) (?:\w+ ){0,3}below\b|\bbelow from\b|\bforward", re.I
)
_HEADER_LINE = re.compile(
    r"^(?:from|sent|date|to|cc|subject|de|para|enviado|asunto):.*$", re.I | re.M
)


_SIGN_OFF = re.compile(
    r"^\W*(?:thanks|thank you|thx|ty|regards|best|best regards|kind regards|warm regards|"
    r"sincerely|cheers|respectfully|take care|gracias|saludos|atentamente|mesi|obrigad[oa])"
    r"\b[^\n]{0,25}$",
    re.IGNORECASE | re.MULTILINE,
)
_NAME = r"(?:[A-Z][\w.'-]*|[A-Z]\.)(?: (?:[A-Z][\w.'-]*|[A-Z]\.|de|van|von|la|del|da|dos)){0,3}"
# A paragraph opening with a name, alone or beside a title ("Raymond Okafor | Clerk").
_NAME_LINE = re.compile(rf"^\W*{_NAME}\W*(?:\s[|,–-]\s.*)?$")


def without_signature(body: str) -> str:
    """The reply without its sign-off and signature block.

    Job titles and offices ("Official Court Reporter", "EEO Specialist",
    "Deputy District Attorney") are not what the rider says.
    """
    sign_off = _SIGN_OFF.search(body)
    if sign_off and body[: sign_off.start()].strip():
        body = body[: sign_off.end()]
    paragraphs = [p for p in re.split(r"\n\s*\n", body.strip()) if p.strip()]
    while len(paragraphs) > 1 and (_is_signature(paragraphs[-1]) or _is_footer(paragraphs[-1])):
        paragraphs.pop()
    return "\n\n".join(paragraphs)


# A confidentiality or legal footer an employer adds to every email ("…may contain
# information protected under HIPAA… If you are not the intended recipient…").
_FOOTER = re.compile(
    r"intended recipient|(?:confidential|privileged)\b.{0,200}\b(?:prohibited|unauthori[sz]ed|"
    r"disclos\w+|dissemination)|\b(?:prohibited|unauthori[sz]ed)\b.{0,200}\bconfidential",
    re.IGNORECASE | re.DOTALL,
)


def _is_footer(paragraph: str) -> bool:
    return bool(_FOOTER.search(paragraph)) and "?" not in paragraph


def _is_signature(paragraph: str) -> bool:
    lines = paragraph.strip().splitlines()
    return len(lines) <= 6 and bool(_NAME_LINE.match(lines[0].strip())) and "?" not in paragraph


def forwarded_news(text: str, body: str) -> str:
    """A forwarded message the rider points at ("see below from HR") is part of the reply.

    Quoted history is our own email and is dropped; a forward carries news
    from someone else (HR, a supervisor), which the rider is passing on.
    """
    marker = _FORWARD_MARKER.search(text.replace("\r\n", "\n"))
    if marker is None or not _POINTS_BELOW.search(body):
        return ""
    # Its own header lines go first: the reply parser would take them for a quote.
    forwarded = _HEADER_LINE.sub("", text.replace("\r\n", "\n")[marker.end() :])
    return "\n" + strip_quoted(forwarded.strip())
