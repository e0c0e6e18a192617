"""Checks of the timeline: outreach delivered, a deadline set, the wait served, the re-audit due.

A seat is cancelled only after each flagged rider was reached, had the full
waiting period, and the case was re-audited at the deadline or past the limit.
"""

import datetime as dt

from django.conf import settings
from django.utils import timezone

from caseloop.supervisor.package import Issue, Package
from cases.models import Case, CaseEvent
from outreach.models import Message

# The deadline is set as the letters are written, a moment before the outbox
# sends them; a letter held up longer than this shortened the rider's time.
SEND_GRACE = dt.timedelta(hours=1)


def _delivered(message: Message) -> bool:
    return (
        message.direction == Message.Direction.OUTBOUND
        and message.status == Message.Status.SENT
        and message.sent_at is not None
        and "bounced" not in message.flags
    )


def check_timeline(package: Package) -> list[Issue]:
    """Outreach, a deadline, the full waiting period and the re-audits the policy requires."""
    issues = []
    wait = dt.timedelta(days=settings.REPLY_WAIT_DAYS)
    first_delivered: list[dt.datetime] = []
    for employee_id in package.flagged:
        written = [
            m
            for m in package.messages
            if m.direction == Message.Direction.OUTBOUND
            and m.employee is not None
            and m.employee.employee_id == employee_id
        ]
        delivered = sorted(m.sent_at for m in written if _delivered(m) and m.sent_at is not None)
        if not written:
            issues.append(
                Issue(
                    "missing_section",
                    "high",
                    f"No email was ever written to {employee_id}.",
                    "timeline",
                )
            )
        elif not delivered:
            statuses = ", ".join(sorted({m.status for m in written}))
            issues.append(
                Issue(
                    "timeline",
                    "high",
                    f"No email to {employee_id} was delivered ({statuses}); a seat is not "
                    "cancelled without at least one.",
                    "timeline",
                )
            )
        else:
            first_delivered.append(delivered[0])
            waited = package.now - delivered[0]
            if waited + SEND_GRACE < wait:
                issues.append(
                    Issue(
                        "timeline",
                        "high",
                        f"{employee_id}'s first delivered email went out "
                        f"{timezone.localtime(delivered[0]):%Y-%m-%d %H:%M}; "
                        f"{_days(waited)} of the {settings.REPLY_WAIT_DAYS}-day waiting period "
                        "have passed.",
                        "timeline",
                    )
                )
    if not any(_sets_deadline(event) for event in package.events):
        issues.append(
            Issue(
                "missing_section", "high", "No reply deadline was ever set on the case.", "timeline"
            )
        )
    issues += _reaudit_issues(package, min(first_delivered, default=None))
    return issues


def _sets_deadline(event: CaseEvent) -> bool:
    entered_waiting = event.to_status == Case.Status.PENDING_REPLY and event.from_status not in (
        "",
        Case.Status.PENDING_REPLY,
    )
    return entered_waiting or bool(event.data.get("reply_deadline"))


def _reaudit_issues(package: Package, first_delivery: dt.datetime | None) -> list[Issue]:
    last = package.last_reaudit
    if last is None:
        return [
            Issue(
                "missing_section",
                "high",
                "The case was never re-audited after the outreach.",
                "timeline",
            )
        ]
    issues = []
    if first_delivery is not None and last.created_at < first_delivery:
        issues.append(
            Issue(
                "timeline",
                "high",
                "The last re-audit came before any email reached a flagged rider.",
                "timeline",
            )
        )
    at_deadline = last.data.get("trigger") == "timeout"
    at_limit = int(last.data.get("reaudit", 0)) > settings.MAX_REAUDITS
    if not (at_deadline or at_limit):
        issues.append(
            Issue(
                "timeline",
                "high",
                f"The last re-audit ({last.data.get('trigger', '?')}, "
                f"{last.data.get('reaudit', '?')} of {settings.MAX_REAUDITS} allowed) was "
                "neither the deadline re-audit nor past the re-audit limit.",
                "timeline",
            )
        )
    return issues


def _days(delta: dt.timedelta) -> str:
    return f"{delta.total_seconds() / 86400:.1f} days"
