"""A rider's address bounced: stop writing to it and tell the people on the case.

Bounces reach us two ways: as a delivery-status email on the inbound webhook
(``outreach.inbound``) and as an ESP tracking event (``outreach.webhooks``).
Both end here. Both may arrive more than once, so everything is idempotent:
the first bounce stamps the address, later ones change nothing.
"""

import logging

from django.db import transaction
from django.utils import timezone

from cases.lifecycle import flag_case, lock_case
from outreach.models import Message
from vanpools.models import Employee

logger = logging.getLogger(__name__)

AGENT = "inbound"


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
