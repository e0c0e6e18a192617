"""What kind of message arrived: a reply, an auto-reply, or a bounce, and what a bounce names.

Only explicit machine markers and unmistakable subjects set a message aside;
a bounce is a delivery-status report (RFC 3464) or a mailer-daemon's failure
notice, and names the failed recipients and the returned original's Message-ID.
"""

import email.message
import re
from dataclasses import dataclass
from email import policy
from email.parser import HeaderParser
from typing import Literal, cast

from outreach.mail_bodies import decode_part, sub_messages, unix_newlines
from outreach.mail_headers import (
    failed_recipients_header,
    header_value,
    message_ids,
    normalise_id,
)

Kind = Literal["reply", "auto_reply", "bounce"]


@dataclass(frozen=True)
class DeliveryReport:
    actions: tuple[str, ...]
    failed_recipients: list[str]
    # Status and Diagnostic-Code of the first failure, for people reading the record.
    diagnostic: str = ""


def delivery_report(msg: email.message.Message) -> DeliveryReport | None:
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
    return DeliveryReport(tuple(actions), failed, diagnostic)


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
        return "\n\n".join(_headers_text(sub) for sub in sub_messages(payload))
    raw = cast(bytes | None, part.get_payload(decode=True)) or b""  # a leaf decodes to bytes
    return unix_newlines(raw.decode("utf-8", errors="replace"))


def _headers_text(msg: email.message.Message) -> str:
    body = msg.get_payload()
    headers = "\n".join(f"{name}: {value}" for name, value in msg.raw_items())
    return headers + ("\n\n" + body if isinstance(body, str) and body.strip() else "")


def attached_message_ids(msg: email.message.Message) -> list[str]:
    """Message-IDs of the original returned in a bounce (message/rfc822 or headers only)."""
    found: list[str] = []
    for part in msg.walk():
        content_type = part.get_content_type()
        if content_type in ("message/rfc822", "message/global"):
            payload = part.get_payload()
            for original in sub_messages(payload):
                found += message_ids(header_value(original, "Message-ID"))[:1]
        elif content_type in ("text/rfc822-headers", "message/global-headers"):
            text = (
                _part_text(part) if isinstance(part.get_payload(), list) else decode_part(part, [])
            )
            headers = HeaderParser(policy=policy.default).parsestr(text)
            found += message_ids(header_value(headers, "Message-ID"))[:1]
    return found


def quoted_message_ids(text: str) -> list[str]:
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


def kind_of(
    msg: email.message.Message,
    from_email: str,
    subject: str,
    report: DeliveryReport | None,
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
    if from_daemon and (_FAILURE_SUBJECT.search(subject) or failed_recipients_header(msg)):
        return "bounce", f"failure notice from {from_email}"
    if msg.get_content_type() == "multipart/report":
        # Read receipts (disposition-notification), abuse reports and the like.
        return "auto_reply", f"report: {(_param(msg, 'report-type') or 'unknown').lower()}"

    auto_submitted = header_value(msg, "Auto-Submitted").split(";", 1)[0].strip().lower()
    if auto_submitted and auto_submitted != "no":
        return "auto_reply", f"Auto-Submitted: {auto_submitted}"
    for name in ("X-Autoreply", "X-Autorespond"):
        if header_value(msg, name).strip():
            return "auto_reply", f"{name} header"
    suppress = header_value(msg, "X-Auto-Response-Suppress").lower()
    # Exchange marks its own out-of-office answers with these; a person's reply
    # does not carry them (AutoReply/DR alone also appear on ordinary mail).
    if re.search(r"\b(oof|all)\b", suppress):
        return "auto_reply", f"X-Auto-Response-Suppress: {suppress.strip()}"
    precedence = header_value(msg, "Precedence").strip().lower()
    if precedence in _AUTO_PRECEDENCE:
        return "auto_reply", f"Precedence: {precedence}"
    # Mail sent through a list (RFC 2919) is the list's, not a rider answering
    # us; it is kept on the thread for the record. List-Unsubscribe alone is
    # not enough: some corporate gateways add it to mail a person wrote.
    if list_id := header_value(msg, "List-Id").strip():
        return "auto_reply", f"List-Id: {list_id[:80]}"
    if from_daemon:
        return "auto_reply", f"from {from_email}"
    if _AUTO_SUBJECT.search(subject):
        return "auto_reply", f"out-of-office subject: {subject[:80]}"
    return "reply", ""
