"""A rider's address bounced: stop writing to it and tell the people on the case.

Bounces reach us two ways: as a delivery-status email on the inbound webhook
(``outreach.inbound``) and as an ESP tracking event (``outreach.webhooks``).
Both end here. Both may arrive more than once, so everything is idempotent:
the first bounce stamps the address, later ones change nothing.

Marking an address undeliverable stops all mail to a rider, so a bounce email
must prove itself: the provider's authenticated event webhook does; an email
does only as a delivery-status report (RFC 3464 ``multipart/report``,
``report-type=delivery-status``) that returns the original we sent to the
failed address, named by its Message-ID. A forger holding a reply address
knows neither that Message-ID nor can make a mail server's report of it; a
"failure notice" from any ``mailer-daemon@`` proves nothing and goes to a
person.
"""

import logging

from django.db import transaction
from django.utils import timezone

from cases.lifecycle import flag_case, lock_case
from outreach.matching import Match
from outreach.models import EmailThread, Message
from outreach.parsing import ParsedInbound
from vanpools.models import Employee

logger = logging.getLogger(__name__)

AGENT = "inbound"


def unverified_bounce(parsed: ParsedInbound) -> str:
    """Why a bounce email cannot mark an address undeliverable by itself ("" when it may)."""
    if not parsed.delivery_report:
        return (
            f"a failure notice ({parsed.kind_reason}) that is not a delivery-status report "
            "(multipart/report): anyone can send one, so the address is not marked "
            "undeliverable; check it and mark it by hand if it is real"
        )
    if parsed.authentication_failures:
        return (
            "the delivery-status report failed authentication at the provider ("
            + "; ".join(parsed.authentication_failures)
            + "): the address is not marked undeliverable"
        )
    return ""


def returned_original(
    thread: EmailThread, message_ids: tuple[str, ...], recipient: str
) -> Message | None:
    """Our email on ``thread`` to ``recipient`` whose Message-ID the report returns, if any."""
    if not message_ids:
        return None
    sent = (
        thread.messages.filter(direction=Message.Direction.OUTBOUND, rfc_message_id__in=message_ids)
        .select_related("thread__case", "employee")
        .order_by("-created_at", "-id")
    )
    recipient = recipient.strip().lower()
    return next(
        (o for o in sent if recipient in [a.strip().lower() for a in o.to]),
        None,
    )


def record_bounce(outbound: Message, recipient_email: str, reason: str) -> bool:
    """Mark the rider's address undeliverable and flag the case; True if anything changed.

    Only the address the message actually went to is marked: a bounce for a
    copy (the coordinator) or for an address HR has since corrected must not
    stop mail to the rider's current address.
    """
    recipient = recipient_email.strip().lower()
    employee = outbound.employee
    if employee is not None and employee.email.strip().lower() != recipient:
        employee = None  # a copy, or an address since corrected: not the rider's
    changed = False
    with transaction.atomic():
        if outbound.thread is not None:
            # The lock an approval on the case takes before it sends (docs/design.md).
            lock_case(outbound.thread.case_id)
        if employee is not None:
            # The address is compared again in the write itself: HR may have
            # corrected it since the copy above was read.
            changed |= bool(
                Employee.objects.filter(
                    pk=employee.pk, email__iexact=recipient, email_undeliverable_at__isnull=True
                ).update(email_undeliverable_at=timezone.now())
            )
        if "bounced" not in outbound.flags:
            outbound.flags = [*outbound.flags, "bounced"]
            outbound.save(update_fields=["flags"])
            changed = True
        if outbound.thread is not None:
            who = employee.employee_id if employee is not None else recipient
            _, flagged = flag_case(
                outbound.thread.case,
                actor=AGENT,
                flag=f"bounced:{who}",
                note=f"Email {outbound.message_id} to {recipient} bounced: {reason}"[:2000],
                data={
                    "message_id": outbound.message_id,
                    "recipient": recipient,
                    "reason": reason[:500],
                },
            )
            changed |= flagged
    if employee is not None:
        logger.info("address of %s marked undeliverable: %s", employee.employee_id, reason[:200])
    else:
        logger.info("bounce for %s on %s (not the rider's address)", recipient, outbound.message_id)
    return changed


NO_ADDRESS_WE_WROTE_TO = "bounce names no address this thread wrote to"


def proven_bounces(parsed: ParsedInbound, match: Match) -> list[tuple[str, Message]]:
    """(failed address, our email the report returns) for each address the report proves."""
    assert match.thread is not None
    recipients = list(parsed.bounced_recipients)
    outbound = match.outbound
    if (
        not recipients
        and outbound is not None
        and len(outbound.to) == 1
        and outbound.rfc_message_id in parsed.bounced_message_ids
    ):
        recipients = [outbound.to[0].strip().lower()]
    proven = []
    for recipient in recipients:
        original = returned_original(match.thread, parsed.bounced_message_ids, recipient)
        if original is not None:
            proven.append((recipient, original))
    return proven


def unproven_why(parsed: ParsedInbound, match: Match) -> str:
    """Why a delivery-status report proved nothing: no address of ours, or not our email."""
    assert match.thread is not None
    sent = match.thread.messages.filter(direction=Message.Direction.OUTBOUND)
    written_to = {address for outbound in sent for address in _lower(outbound.to)}
    named = [recipient for recipient in parsed.bounced_recipients if recipient in written_to]
    if not named:
        return NO_ADDRESS_WE_WROTE_TO
    return (
        f"the report names {', '.join(named)}, but the original it returns is not an email "
        "this thread sent there: the address is not marked undeliverable"
    )


def _lower(addresses: list[str]) -> list[str]:
    return [address.strip().lower() for address in addresses]
