"""Checks of the riders' replies: each one read and acted on, none waiting for a person."""

from caseloop.supervisor.package import Issue, Package
from cases.kinds import ReviewEmail
from outreach.models import Message


def check_replies(package: Package) -> list[Issue]:
    """Every reply since the last re-audit was classified and answered; none waits for a person."""
    since = package.last_reaudit.created_at if package.last_reaudit else None
    issues = []
    for message in package.messages:
        if message.direction != Message.Direction.INBOUND or message.kind != Message.Kind.REPLY:
            continue
        arrived = message.received_at or message.created_at
        problem = _waiting_for_a_person(package, message)
        if not problem and (since is None or arrived > since):
            problem = _reply_problem(package, message)
        if problem:
            who = message.employee.employee_id if message.employee else message.from_email
            issues.append(
                Issue(
                    "reply", "high", f"Reply {message.message_id} from {who} {problem}.", "replies"
                )
            )
    return issues


def _waiting_for_a_person(package: Package, message: Message) -> str:
    waiting = [a for a in package.actions if a.message_id == message.pk and a.status == "pending"]
    return f"waits for a person ({waiting[0].get_kind_display()})" if waiting else ""


def _reply_problem(package: Package, message: Message) -> str:
    if message.status == Message.Status.RECEIVED or not message.bucket:
        return "has not been classified"
    if message.bucket == Message.Bucket.QUESTION and not _answered(package, message):
        return "asked a question that was not answered"
    if message.bucket == Message.Bucket.ESCALATION and not any(
        a.message_id == message.pk and a.is_a(ReviewEmail) for a in package.actions
    ):
        return "escalated and no reply was drafted for review"
    if message.bucket in (Message.Bucket.ACKNOWLEDGMENT, Message.Bucket.UPDATE):
        return f"({message.bucket}) came after the last re-audit and was not acted on"
    return ""


def _answered(package: Package, message: Message) -> bool:
    key = f"{package.case.case_id}:answer:{message.message_id}"
    return any(
        m.direction == Message.Direction.OUTBOUND
        and (
            m.idempotency_key == key
            or (message.rfc_message_id and m.in_reply_to == message.rfc_message_id)
        )
        for m in package.messages
    )
