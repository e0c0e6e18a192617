"""The raw email a scenario's rider or mail server sends, as it would arrive.

A reply answers the last email we sent the rider (threading headers and
all); a bounce is an RFC 3464 delivery-status report for it. Both go through
``receive_raw`` as any inbound delivery does.
"""

from email.message import EmailMessage
from typing import Any

from django.conf import settings
from django.utils import timezone

from vanpools.models import Employee


def latest_outbound(employee: Employee) -> Any:
    from outreach.models import Message

    return (
        Message.objects.filter(direction=Message.Direction.OUTBOUND, employee=employee)
        .exclude(rfc_message_id="")
        .order_by("-created_at", "-id")
        .first()
    )


def reply_bytes(event: dict[str, Any], *, vanpool_id: str, case_id: str, number: int) -> bytes:
    """The rider's email as their mail client would send it: answering our last email."""
    from outreach.models import EmailThread

    employee = Employee.objects.get(employee_id=event["from"])
    outbound = latest_outbound(employee)
    msg = EmailMessage()
    sender = event.get("from_email", employee.email)
    msg["From"] = f"{employee.first_name} {employee.last_name} <{sender}>"
    if outbound is not None:
        msg["To"] = outbound.reply_to
        msg["In-Reply-To"] = f"<{outbound.rfc_message_id}>"
        msg["References"] = f"<{outbound.rfc_message_id}>"
        subject = f"Re: {outbound.subject}"
    else:
        # Never written to (a co-rider who heard about it): to the thread's address if any.
        thread = EmailThread.objects.filter(case__vanpool__vanpool_id=vanpool_id).last()
        domain = settings.INBOUND_DOMAIN
        msg["To"] = (
            f"{settings.INBOUND_LOCAL_PREFIX}+{thread.reply_token}@{domain}"
            if thread
            else f"{settings.INBOUND_LOCAL_PREFIX}@{domain}"
        )
        subject = "Re: your vanpool seat"
    msg["Subject"] = event.get("subject", subject)
    msg["Message-ID"] = f"<eval-{case_id}-{number}@mail.example.com>"
    msg["Date"] = timezone.now().strftime("%a, %d %b %Y %H:%M:%S %z")
    for name, value in event.get("headers", {}).items():
        msg[name] = value
    msg.set_content(event["text"])
    return msg.as_bytes()


def bounce_bytes(event: dict[str, Any], *, case_id: str) -> bytes:
    """An RFC 3464 delivery-status report for our last email to the rider."""
    employee = Employee.objects.get(employee_id=event["employee"])
    outbound = latest_outbound(employee)
    if outbound is None:
        raise LookupError(f"nothing was sent to {employee.employee_id}, so nothing can bounce")
    address = employee.email
    boundary = "EVAL-DSN-BOUNDARY"
    lines = [
        "From: Mail Delivery Subsystem <MAILER-DAEMON@mx.example.com>",
        f"To: {outbound.reply_to}",
        "Subject: Undelivered Mail Returned to Sender",
        f"Message-ID: <dsn-{case_id}-{outbound.pk}@mx.example.com>",
        "Auto-Submitted: auto-replied",
        "MIME-Version: 1.0",
        f'Content-Type: multipart/report; report-type=delivery-status; boundary="{boundary}"',
        "",
        f"--{boundary}",
        "Content-Type: text/plain; charset=us-ascii",
        "",
        f"<{address}>: 550 5.1.1 Recipient address rejected: User unknown",
        "",
        f"--{boundary}",
        "Content-Type: message/delivery-status",
        "",
        "Reporting-MTA: dns; mx.example.com",
        "",
        f"Final-Recipient: rfc822; {address}",
        "Action: failed",
        "Status: 5.1.1",
        f"Diagnostic-Code: smtp; 550 5.1.1 <{address}>: User unknown",
        "",
        f"--{boundary}",
        "Content-Type: text/rfc822-headers",
        "",
        f"Message-ID: <{outbound.rfc_message_id}>",
        f"To: {address}",
        "",
        f"--{boundary}--",
        "",
    ]
    return "\r\n".join(lines).encode()
