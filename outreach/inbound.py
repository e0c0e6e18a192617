"""Store an inbound email once, put it on the right thread, and hand replies to the loop.

Design, audit step 5: webhook → stored once → auto-replies and bounces set
aside → (the loop: quoted text stripped → guardrails → classified).

``receive_raw`` (files, ``manage.py ingest_email``) and ``receive_message``
(the anymail webhook) share one path:

1. parse — a message with nothing usable is quarantined, never raised;
2. dedupe — a stored inbound row with the same provider id, Message-ID or raw
   hash *is* this message (providers redeliver), so it is returned as is. A
   message the provider sent as fields (SendGrid's and Mailjet's parsed
   payloads) is hashed without the MIME boundaries anymail draws at random
   each time it builds it; an empty body is a duplicate of nothing;
3. store, match and act in one transaction — a concurrent duplicate loses on
   the unique constraints and gets the winner's row;
4. match — forced thread, else the reply token in a recipient address, else
   In-Reply-To / References / the bounced Message-ID against what we sent
   (``outreach.matching``).
   Nothing else: an email is never guessed onto a case; a person matches it.

Only a reply from a known rider of the case is queued for processing.
"""

import datetime as dt
import email.message
import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from cases.kinds import LabelReply, MatchInbound
from cases.lifecycle import lock_case, record_event, request_review
from cases.models import Case
from outreach.authentication import failed_checks
from outreach.bounces import (
    NO_ADDRESS_WE_WROTE_TO,
    proven_bounces,
    record_bounce,
    unproven_why,
    unverified_bounce,
)
from outreach.matching import Match, match_thread, sender_of, token_owner
from outreach.models import EmailThread, Message
from outreach.parsing import (
    ParsedInbound,
    message_bytes,
    parse_message,
    parse_raw,
    reply_addresses_in,
    reply_token_from,
)
from poolpatrol.queue import enqueue_inbound_processing
from poolpatrol.write_lock import one_writer_at_a_time
from vanpools.models import Employee

logger = logging.getLogger(__name__)

REQUESTER = "inbound"
# Where the provider's name is kept on the row (Message has no field for it);
# the X- name never clashes with a kept header, which are a fixed list.
PROVIDER_HEADER = "X-Pool-Patrol-Received-Via"

Kind = Message.Kind
Status = Message.Status


def receive_raw(
    raw: bytes,
    *,
    provider: str = "",
    provider_message_id: str = "",
    force_thread: EmailThread | None = None,
) -> tuple[Message, bool]:
    """Store the raw bytes of one email; returns (message, created)."""
    try:
        parsed = parse_raw(raw)
    except Exception as exc:  # UnparseableMessage, or a parser bug on hostile input
        return quarantine(raw, provider=provider, provider_message_id=provider_message_id, why=exc)
    return _receive(parsed, raw, provider, provider_message_id, force_thread)


def receive_message(
    msg: email.message.Message,
    *,
    provider: str = "",
    provider_message_id: str = "",
    raw: bytes | None = None,
    force_thread: EmailThread | None = None,
    provider_verdicts: Mapping[str, str] | None = None,
) -> tuple[Message, bool]:
    """Store a parsed email (anymail's AnymailInboundMessage); returns (message, created).

    ``raw`` is the message as the provider sent it when it sent one; without
    it the message is serialised again for the record, and hashed without the
    random parts of that serialisation (``serialised_sha256``).
    ``provider_verdicts`` are the SPF/DKIM/DMARC fields of the provider's
    payload (``authentication.provider_fields``), read beside the headers.
    """
    raw_sha256 = None
    if raw is None:
        raw = message_bytes(msg)
        raw_sha256 = serialised_sha256(msg, raw)
    try:
        parsed = parse_message(msg, raw)
    except Exception as exc:
        return quarantine(
            raw,
            provider=provider,
            provider_message_id=provider_message_id,
            why=exc,
            raw_sha256=raw_sha256,
        )
    if provider_verdicts:
        failures = parsed.authentication_failures + failed_checks(provider_verdicts)
        parsed = replace(parsed, authentication_failures=tuple(dict.fromkeys(failures)))
    if raw_sha256 is not None:
        parsed = replace(parsed, raw_sha256=raw_sha256)
    return _receive(parsed, raw, provider, provider_message_id, force_thread)


def serialised_sha256(msg: email.message.Message, raw: bytes) -> str:
    """The hash of a message we serialised ourselves, the same on every redelivery.

    anymail builds a message from a provider's fields (SendGrid's parsed
    payload, Mailjet) with a new random MIME boundary each time, so the bytes
    of two deliveries of one email differ only there; serialising set each
    part's boundary, and each is replaced by one fixed string before hashing.
    """
    if not raw:
        return ""  # nothing to identify it by: a duplicate of nothing
    for part in msg.walk():
        boundary = part.get_boundary()
        if boundary:
            raw = raw.replace(boundary.encode("ascii", "replace"), b"=_pool-patrol-boundary_=")
    return hashlib.sha256(raw).hexdigest()


def quarantine(
    raw: bytes,
    *,
    provider: str = "",
    provider_message_id: str = "",
    why: Exception | str,
    flag: str = "unparseable",
    raw_sha256: str | None = None,
) -> tuple[Message, bool]:
    """Keep a message we could not read (or handle) for a person; returns (message, created).

    ``raw_sha256`` replaces the hash of ``raw`` when ``raw`` is our own
    serialisation (``serialised_sha256``). Empty bytes get no hash: nothing
    that arrived empty is the same message as anything else.
    """
    if raw_sha256 is None:
        raw_sha256 = hashlib.sha256(raw).hexdigest() if raw else ""
    provider_message_id = provider_message_id[:255]
    reason = f"{type(why).__name__}: {why}" if isinstance(why, Exception) else why
    kept_raw, cut = kept_text(raw)

    def store() -> Message:
        thread = _thread_named_in(kept_raw)
        if thread is not None:
            lock_case(thread.case_id)  # as for a reply: an approval sees it or went first
        message = Message.objects.create(
            direction=Message.Direction.INBOUND,
            status=Status.QUARANTINED,
            thread=thread,
            from_email="",
            raw=kept_raw,
            raw_sha256=raw_sha256,
            provider_message_id=_unused_provider_id(provider_message_id),
            headers={PROVIDER_HEADER: provider} if provider else {},
            flags=[flag, *cut],
            last_error=reason[:2000],
            received_at=timezone.now(),
        )
        _ask_a_person_to_read(message, thread, reason)
        return message

    message, created = _store_once(store, provider_message_id, "", raw_sha256)
    if created:
        logger.warning(
            "inbound %s quarantined (%s, provider %s %s): %s",
            message.message_id,
            flag,
            provider or "-",
            provider_message_id or "-",
            reason[:200],
        )
    return message, created


def quarantined_waiting() -> int:
    """Quarantined messages no person has decided yet (each is on a card)."""
    return Message.objects.filter(
        direction=Message.Direction.INBOUND, status=Status.QUARANTINED
    ).count()


def _thread_named_in(raw_text: str) -> EmailThread | None:
    """The thread whose reply address the unreadable message was sent to, if any."""
    token = reply_token_from(reply_addresses_in(raw_text))
    if token is None:
        return None
    thread, _rider = token_owner(token)  # a rider's own address, or the thread's shared one
    return thread


def _ask_a_person_to_read(message: Message, thread: EmailThread | None, reason: str) -> None:
    """A quarantined message gets a card; on a thread, the case says so and waits for it.

    Until a person decides the card, the message holds any cancellation on
    the case like an unread reply (``caseloop.decisions``). Quarantined
    messages on one case (or on none) are counted on one card, so a burst of
    garbage is one card, not hundreds.
    """
    why = f"a message could not be read and was quarantined ({reason[:300]})"
    case = None
    if thread is not None:
        # Read after lock_case: the trail entry records the case's current status.
        case = Case.objects.get(pk=thread.case_id)
        record_event(
            case,
            actor=REQUESTER,
            note=f"{message.message_id} came on {thread.thread_id} but {why}; "
            "a person must read it before anything is cancelled",
            data={"message_id": message.message_id, "quarantined": True},
        )
    request_review(
        case,
        MatchInbound(reason=why, quarantined=True, sender="", subject=""),
        message=message,
        actor=REQUESTER,
        note=why,
        hold_in=None,
        collapse_key=f"quarantine:{case.pk if case is not None else '-'}",
    )


# --- The shared path -----------------------------------------------------------------


def _receive(
    parsed: ParsedInbound,
    raw: bytes,
    provider: str,
    provider_message_id: str,
    force_thread: EmailThread | None,
) -> tuple[Message, bool]:
    provider_message_id = provider_message_id[:255]

    def store() -> Message:
        match = match_thread(parsed, force_thread)
        if match.thread is not None:
            # Before the row exists: an approval on this case either committed
            # already or sees this message (docs/design.md, guards and locks).
            lock_case(match.thread.case_id)
        message = _store(parsed, raw, provider, provider_message_id)
        _act_on_match(message, parsed, match)
        return message

    message, created = _store_once(store, provider_message_id, parsed.message_id, parsed.raw_sha256)
    if created:
        logger.info(
            "inbound %s stored: %s, %s, thread %s, flags %s",
            message.message_id,
            message.kind,
            message.status,
            message.thread.thread_id if message.thread else "-",
            ",".join(message.flags) or "-",
        )
    else:
        logger.info("inbound %s delivered again: nothing stored", message.message_id)
    return message, created


def _store_once(
    store: Callable[[], Message], provider_message_id: str, rfc_message_id: str, raw_sha256: str
) -> tuple[Message, bool]:
    """Run ``store`` in a transaction unless the message is already stored.

    The read first saves work on an ordinary redelivery; the unique
    constraints decide a race (two deliveries at once): the loser's
    transaction rolls back whole, so nothing it did survives.
    """
    existing = _find_stored(provider_message_id, rfc_message_id, raw_sha256)
    if existing is not None:
        return existing, False
    try:
        with one_writer_at_a_time(), transaction.atomic():
            return store(), True
    except IntegrityError:
        existing = _find_stored(provider_message_id, rfc_message_id, raw_sha256)
        if existing is None:
            raise
        return existing, False


def _find_stored(provider_message_id: str, rfc_message_id: str, raw_sha256: str) -> Message | None:
    # One indexed lookup per identifier: SQLite plans an OR of them as a scan.
    inbound = Message.objects.filter(direction=Message.Direction.INBOUND).select_related("thread")
    for field, value in (
        ("provider_message_id", provider_message_id),
        ("rfc_message_id", rfc_message_id),
        ("raw_sha256", raw_sha256),
    ):
        if value:
            found = inbound.filter(**{field: value}).order_by().first()
            if found is not None:
                return found
    return None


def _store(parsed: ParsedInbound, raw: bytes, provider: str, provider_message_id: str) -> Message:
    flags = list(parsed.flags)
    rfc_message_id = parsed.message_id
    # Our own outbound ids share the unique columns. A rider's client that
    # "redirects" our email keeps its Message-ID; that must not make the
    # inbound copy unstorable (or look like a duplicate of what we sent).
    if (
        rfc_message_id
        and Message.objects.filter(
            direction=Message.Direction.OUTBOUND, rfc_message_id=rfc_message_id
        ).exists()
    ):
        flags.append("message_id_reused")
        rfc_message_id = ""
    headers = dict(parsed.headers)
    if provider:
        headers[PROVIDER_HEADER] = provider
    kept_raw, raw_cut = kept_text(raw)
    text_body, text_cut = _cut(parsed.text)
    html_body, html_cut = _cut(parsed.html)
    if raw_cut or text_cut or html_cut:
        flags.append("truncated")
    is_reply = parsed.kind == Kind.REPLY
    return Message.objects.create(
        direction=Message.Direction.INBOUND,
        kind=parsed.kind,
        status=Status.RECEIVED if is_reply else Status.SET_ASIDE,
        from_email=parsed.from_email[:320],
        to=list(parsed.to),
        cc=list(parsed.cc),
        subject=parsed.subject[:998],
        text_body=text_body,
        html_body=html_body,
        in_reply_to=parsed.in_reply_to[:998],
        references=" ".join(parsed.references),
        headers=headers,
        raw=kept_raw,
        raw_sha256=parsed.raw_sha256,
        provider_message_id=_unused_provider_id(provider_message_id),
        rfc_message_id=rfc_message_id,
        flags=flags,
        # Why it was set aside, for the person reading the record.
        classification={} if is_reply else {"kind": parsed.kind, "reason": parsed.kind_reason},
        received_at=timezone.now(),
    )


def _unused_provider_id(provider_message_id: str) -> str:
    # An outbound row may (in theory) hold the same id from the same provider.
    if (
        provider_message_id
        and Message.objects.filter(
            provider_message_id=provider_message_id, direction=Message.Direction.OUTBOUND
        ).exists()
    ):
        return ""
    return provider_message_id


# --- Acting on what arrived ----------------------------------------------------------


def _act_on_match(message: Message, parsed: ParsedInbound, match: Match) -> None:
    if match.thread is None:
        _unmatched(message, parsed, match.why_not)
        return
    message.thread = match.thread
    if parsed.kind == Kind.BOUNCE:
        _bounce(message, parsed, match)
        return
    employee, why_not = sender_of(match, parsed)
    if match.how == "message_id" and not _answers_its_own_email(match, employee):
        # Without the thread's secret token, a Message-ID is only a header anyone
        # can copy: a co-rider quoting another rider's email must not speak for them.
        message.thread = None
        message.save(update_fields=["thread"])
        _unmatched(message, parsed, "sender is not the rider the referenced email was sent to")
        return
    if employee is not None and parsed.authentication_failures:
        # From says the rider; the provider says the mail is not from their
        # domain. A person looks before anyone acts on it as the rider's.
        why_not = "the sender's mail failed authentication at the provider: " + "; ".join(
            parsed.authentication_failures
        )
        employee = None
        message.flags = [*message.flags, "authentication_failed"]
    elif employee is None and match.rider is not None:
        message.flags = [*message.flags, "sender_mismatch"]
    message.employee = employee
    if employee is None:
        message.flags = [*message.flags, "unknown_sender"]
    message.save(update_fields=["thread", "employee", "flags"])
    if parsed.kind == Kind.AUTO_REPLY:
        return  # kept on the thread for the record; never processed or answered
    if employee is None:
        _ask_a_person(message, parsed, why_not, case=match.thread.case)
        return
    sent = _sent_within_the_hour(employee)
    if sent > settings.INBOUND_SENDER_HOURLY_LIMIT:
        _hold_flood(message, parsed, sent, match.thread.case, employee)
        return
    enqueue_inbound_processing(message.pk)


def _sent_within_the_hour(employee: Employee) -> int:
    """Inbound messages from the rider in the last hour, this one included."""
    since = timezone.now() - dt.timedelta(hours=1)
    return Message.objects.filter(
        employee=employee, direction=Message.Direction.INBOUND, received_at__gte=since
    ).count()


def _hold_flood(
    message: Message, parsed: ParsedInbound, sent: int, case: Case, employee: Employee
) -> None:
    """A rider over INBOUND_SENDER_HOURLY_LIMIT: kept, not read, counted on one card.

    Each reply read can mean a model call, a re-audit and an email back: 200
    of them in a minute is a loop between mail programs or someone testing
    us, and a person decides what it is. Nothing is lost: the messages stay
    on the thread, and the card says how many came.
    """
    message.status = Status.SET_ASIDE
    message.flags = [*message.flags, "flood"]
    message.classification = {
        "kind": "flood",
        "reason": f"{sent} messages from this sender within an hour",
    }
    message.save(update_fields=["status", "flags", "classification"])
    why = (
        f"{employee.employee_id} sent {sent} emails within an hour (more than "
        f"{settings.INBOUND_SENDER_HOURLY_LIMIT}); the rest are kept on the thread unread"
    )
    request_review(
        case,
        LabelReply(why=why, flood=True, suggested_bucket="", reasoning=""),
        message=message,
        actor=REQUESTER,
        note=why,
        hold_in=None,
        collapse_key=reply_collapse_key(case, employee),
    )


def reply_collapse_key(case: Case, employee: Employee) -> str:
    """One card at a time about one rider's replies on one case."""
    return f"reply:{case.pk}:{employee.pk}"


def _answers_its_own_email(match: Match, employee: Employee | None) -> bool:
    """Whether a Message-ID match comes from the rider that email went to."""
    outbound = match.outbound
    if outbound is None or outbound.employee_id is None:
        return True  # a thread-level email (no one rider): the case's riders may answer
    return employee is not None and employee.pk == outbound.employee_id


def _unmatched(message: Message, parsed: ParsedInbound, why_not: str) -> None:
    message.flags = [*message.flags, "unmatched"]
    message.save(update_fields=["flags"])
    # Out-of-office notes and bounces of mail we cannot find are mostly noise
    # (spam backscatter); only a reply is worth a person's time.
    if parsed.kind == Kind.REPLY:
        _ask_a_person(message, parsed, why_not, case=None)


def _ask_a_person(
    message: Message, parsed: ParsedInbound, reason: str, *, case: Case | None
) -> None:
    # A card about who sent the message: the case itself keeps its status. One
    # card per sender (and case): their later emails are counted on it.
    request_review(
        case,
        MatchInbound(reason=reason, sender=parsed.from_email, subject=parsed.subject[:300]),
        message=message,
        actor=REQUESTER,
        note=reason,
        hold_in=None,
        collapse_key=f"match:{case.pk if case else '-'}:{parsed.from_email.lower()}",
    )


def _bounce(message: Message, parsed: ParsedInbound, match: Match) -> None:
    """Record the bounce against each of our messages it proves did not arrive.

    A bounce email is trusted only as a delivery-status report whose returned
    original is an email we sent to the failed address (see
    ``bounces.returned_original``): anyone holding a reply address can write
    "mailer-daemon" in From. Anything less goes to a person, and the rider's
    address stays as it is.
    """
    assert match.thread is not None  # _act_on_match hands over matched messages only
    attributed: list[Message] = []
    why_not = unverified_bounce(parsed)
    if not why_not:
        for recipient, outbound in proven_bounces(parsed, match):
            record_bounce(outbound, recipient, parsed.kind_reason)
            attributed.append(outbound)
        if not attributed:
            why_not = unproven_why(parsed, match)
    riders = [outbound.employee for outbound in attributed if outbound.employee_id]
    message.employee = riders[0] if riders else None
    if not attributed:
        unattributed = why_not == NO_ADDRESS_WE_WROTE_TO
        message.flags = [
            *message.flags,
            "bounce_unattributed" if unattributed else "bounce_unverified",
        ]
    message.save(update_fields=["thread", "employee", "flags"])
    if not attributed:
        _ask_a_person(message, parsed, why_not, case=match.thread.case)


def kept_text(raw: bytes) -> tuple[str, list[str]]:
    """The raw message as a row keeps it, and ["truncated"] when it was cut.

    A 30 MB email is kept to its first INBOUND_RAW_MAX_BYTES: the headers and
    the text a person reads come first, and the page that shows it stays fast.
    """
    limit = settings.INBOUND_RAW_MAX_BYTES
    # Slicing a memoryview copies nothing; only the kept part is decoded.
    kept = memoryview(raw)[:limit].tobytes() if len(raw) > limit else raw
    # NUL is not storable in PostgreSQL text; the hash keeps the exact bytes' identity.
    text = kept.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
    return text, (["truncated"] if len(raw) > limit else [])


def _cut(body: str) -> tuple[str, bool]:
    limit = settings.INBOUND_BODY_MAX_CHARS
    return (body[:limit], True) if len(body) > limit else (body, False)
