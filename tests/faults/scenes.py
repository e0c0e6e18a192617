"""Cases in the states the fault scenarios start from, built the way the product builds them.

A vanpool with one rider who lives by the pickup and one who lives hundreds
of miles away: the audit fails the far rider and writes to them.
"""

import datetime as dt
from dataclasses import dataclass
from email.message import EmailMessage

from caseloop.audits import audit_vanpool
from caseloop.loop.deadlines import process_timeouts
from cases.models import Case, PendingAction
from outreach.models import EmailThread, Message
from tests.factories import EmployeeFactory, RiderFactory, VanpoolFactory
from vanpools.models import Employee, Vanpool

NEAR_ZIP = "94587"  # the pickup's own ZIP
FAR_ZIP = "90026"  # Los Angeles


@dataclass(frozen=True)
class Scene:
    vanpool: Vanpool
    case: Case
    far: Employee
    near: Employee


def failing_case(run) -> Scene:
    """An audited vanpool whose far rider is flagged and has been written to."""
    vanpool = VanpoolFactory()
    near = EmployeeFactory(first_name="Nadia", home_zip=NEAR_ZIP)
    far = EmployeeFactory(first_name="Farid", home_zip=FAR_ZIP)
    RiderFactory(vanpool=vanpool, employee=near)
    RiderFactory(vanpool=vanpool, employee=far)
    run(audit_vanpool, vanpool.vanpool_id)
    return Scene(vanpool, Case.objects.get(vanpool=vanpool), far, near)


def pre_cancel(scene: Scene, run, traveller) -> PendingAction:
    """The reply deadline passes in silence: the far rider's cancellation waits for approval."""
    traveller.shift(dt.timedelta(days=7, minutes=1))
    run(process_timeouts)
    return PendingAction.objects.get(case=scene.case, kind="cancel_membership", status="pending")


def reply_from(case: Case, employee: Employee, text: str, *, n: int = 1) -> bytes:
    """The rider's answer to the email we sent them, as their mail client writes it."""
    thread = EmailThread.objects.get(case=case)
    first = thread.messages.filter(direction="outbound", employee=employee).first()
    assert first is not None, "the rider was never written to"
    msg = EmailMessage()
    msg["From"] = f"{employee.first_name} <{employee.email}>"
    msg["To"] = first.reply_to
    msg["Subject"] = "Re: your vanpool seat"
    msg["Message-ID"] = f"<fault-reply-{n}-{employee.employee_id}@mail.example>"
    msg["In-Reply-To"] = f"<{first.rfc_message_id}>"
    msg.set_content(text)
    return msg.as_bytes()


def outbound_to(employee: Employee, template: str) -> int:
    return Message.objects.filter(
        direction=Message.Direction.OUTBOUND, employee=employee, template=template
    ).count()
