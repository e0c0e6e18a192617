"""Scenes for the browser tests, made the real way: audit, outreach, replies, the deadline.

The browser tests run with ``transaction=True``, so the follow-on work the
agents queue on commit (sends, reply processing; django-q2 is sync in tests)
runs as each call commits — no capture needed.
"""

import datetime as dt
from email.message import EmailMessage

from caseloop.audits import audit_vanpool
from caseloop.loop.deadlines import process_timeouts
from cases.models import Case, PendingAction
from outreach.inbound import receive_raw
from outreach.models import EmailThread, Message
from tests.factories import EmployeeFactory, RiderFactory, VanpoolFactory
from vanpools.models import Employee, Vanpool

NEAR_ZIP = "94587"  # the pickup's own ZIP
FAR_ZIP = "90026"  # Los Angeles: hundreds of miles from the pickup


def flagged_van(**vanpool_fields) -> Vanpool:
    """A vanpool with a rider who lives by the pickup and one who lives in Los Angeles."""
    vanpool = VanpoolFactory(**vanpool_fields)
    RiderFactory(
        vanpool=vanpool,
        employee=EmployeeFactory(first_name="Nadia", last_name="Okafor", home_zip=NEAR_ZIP),
    )
    RiderFactory(
        vanpool=vanpool,
        employee=EmployeeFactory(first_name="Farid", last_name="Haddad", home_zip=FAR_ZIP),
    )
    return vanpool


def far_rider(vanpool: Vanpool) -> Employee:
    return vanpool.riders.get(employee__home_zip=FAR_ZIP).employee


def audited_case(**vanpool_fields) -> Case:
    """The audit fails the far rider and outreach writes to them: a case waiting for a reply."""
    vanpool = flagged_van(**vanpool_fields)
    audit_vanpool(vanpool.vanpool_id)
    return Case.objects.get(vanpool=vanpool)


def pre_cancel(traveller, **vanpool_fields) -> PendingAction:
    """No reply by the deadline: the re-audit fails again and a cancellation waits for a person."""
    case = audited_case(**vanpool_fields)
    traveller.shift(dt.timedelta(days=7, minutes=1))
    process_timeouts()
    return PendingAction.objects.get(case=case, kind=PendingAction.Kind.CANCEL_MEMBERSHIP)


def reply(case: Case, employee: Employee, text: str) -> Message:
    """The rider answers the outreach email; the reply is received and acted on."""
    thread = EmailThread.objects.get(case=case)
    first = thread.messages.filter(direction="outbound", employee=employee).first()
    msg = EmailMessage()
    msg["From"] = f"{employee.first_name} <{employee.email}>"
    msg["To"] = first.reply_to
    msg["Subject"] = "Re: your vanpool seat"
    msg["Message-ID"] = f"<reply-{Message.objects.count()}-{employee.employee_id}@mail.example>"
    msg["In-Reply-To"] = f"<{first.rfc_message_id}>"
    msg.set_content(text)
    message, _ = receive_raw(msg.as_bytes(), provider="test")
    return Message.objects.get(pk=message.pk)


def action_after_reply(text: str, kind: str) -> PendingAction:
    """A far rider's reply that an agent may not handle alone: ``kind`` waits for a person."""
    case = audited_case()
    reply(case, far_rider(case.vanpool), text)
    return PendingAction.objects.get(case=case, kind=kind, status=PendingAction.Status.PENDING)


def drafted_reply() -> PendingAction:
    """An escalation: the holding reply is drafted and held for review, nothing sent."""
    return action_after_reply(
        "This is harassment. I'm contacting my lawyer and HR.", PendingAction.Kind.REVIEW_EMAIL
    )


def reply_to_label() -> PendingAction:
    """A reply too short to classify with confidence: a person picks its bucket."""
    return action_after_reply("hmm", PendingAction.Kind.LABEL_REPLY)


def unmatched_email() -> PendingAction:
    """An email from a sender we do not know, with no reply token: a person matches it."""
    msg = EmailMessage()
    msg["From"] = "Someone <someone@elsewhere.example>"
    msg["To"] = "vanpool@poolpatrol.example"
    msg["Subject"] = "About my vanpool seat"
    msg["Message-ID"] = f"<stray-{Message.objects.count()}@mail.example>"
    msg.set_content("I moved last month, do I keep my seat?")
    message, _ = receive_raw(msg.as_bytes(), provider="test")
    return PendingAction.objects.get(message=message, kind=PendingAction.Kind.MATCH_INBOUND)


def undecided_check() -> PendingAction:
    """A rider with no shift and one whose home ZIP has no location: the rules cannot decide."""
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(shift=None))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip="00000"))
    audit_vanpool(vanpool.vanpool_id)
    return PendingAction.objects.get(
        case__vanpool=vanpool, kind=PendingAction.Kind.DECIDE_VERIFICATION
    )
