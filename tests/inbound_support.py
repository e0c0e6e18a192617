"""Sample emails and the smallest case they can answer, for the inbound tests.

The .eml files in tests/emails/ are written for these tests: they reply to
THREAD_TOKEN's thread and refer to OUR_MESSAGE_ID, the email we "sent" to
the rider at RIDER_EMAIL.
"""

from dataclasses import dataclass
from pathlib import Path

from django.utils import timezone

from cases.models import Case
from outreach.models import EmailThread, Message
from tests.factories import (
    CaseFactory,
    EmailThreadFactory,
    EmployeeFactory,
    MessageFactory,
    RiderFactory,
)
from vanpools.models import Employee

EMAILS = Path(__file__).parent / "emails"
THREAD_TOKEN = "5f1c0d3a9b8e7f6a5b4c3d2e1f0a9b8c7d6e5f40"
REPLY_ADDRESS = f"reply+{THREAD_TOKEN}@replies.poolpatrol.example"
OUR_MESSAGE_ID = "177.20261120170000.outreach@replies.poolpatrol.example"
OUR_PROVIDER_ID = "b7bc2f4a-e38e-4336-af7d-e6c392c2f817"
RIDER_EMAIL = "pat.rivera@example.com"


def eml(name: str) -> bytes:
    return (EMAILS / name).read_bytes()


def oversized_eml(size: int = 1_000_000) -> bytes:
    """A reply with a 1 MB body (built here rather than kept as a 1 MB file)."""
    line = b"2026-11-20 07:02 badge swipe Fremont Campus gate 3 OK\n"
    return eml("oversized_headers.eml") + line * (size // len(line) + 1)


def email_bytes(
    *,
    sender: str = f"Pat Rivera <{RIDER_EMAIL}>",
    to: str = REPLY_ADDRESS,
    subject: str = "Re: Your vanpool seat",
    body: str = "Thanks, all correct.",
    message_id: str | None = "<built.0001@mail.example.com>",
    headers: dict[str, str] | None = None,
) -> bytes:
    """A small plain-text email; ``headers`` adds or (with "") drops fields."""
    fields = {"From": sender, "To": to, "Subject": subject, "Message-ID": message_id or ""}
    fields |= headers or {}
    lines = [f"{name}: {value}" for name, value in fields.items() if value]
    lines += ["MIME-Version: 1.0", 'Content-Type: text/plain; charset="utf-8"', "", body, ""]
    return "\r\n".join(lines).encode("utf-8")


@dataclass(frozen=True)
class Scene:
    case: Case
    thread: EmailThread
    rider: Employee
    outbound: Message


def open_thread(
    *,
    token: str = THREAD_TOKEN,
    rider_email: str = RIDER_EMAIL,
    rider_status: str = "active",
) -> Scene:
    """A case on a vanpool with one rider, its thread, and the email we sent them."""
    rider = EmployeeFactory(email=rider_email)
    cancelled_at = timezone.now() if rider_status == "cancelled" else None
    seat = RiderFactory(employee=rider, status=rider_status, cancelled_at=cancelled_at)
    case = CaseFactory(vanpool=seat.vanpool, status=Case.Status.PENDING_REPLY)
    thread = EmailThreadFactory(case=case, reply_token=token)
    outbound = MessageFactory(
        thread=thread,
        employee=rider,
        to=[rider_email],
        reply_to=f"reply+{token}@replies.poolpatrol.example",
        rfc_message_id=OUR_MESSAGE_ID,
        provider_message_id=OUR_PROVIDER_ID,
    )
    return Scene(case=case, thread=thread, rider=rider, outbound=outbound)
