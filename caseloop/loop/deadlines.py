"""The deadline sweep: reminders, re-audits at the deadline, waiting replies, send retries.

Run by a schedule (``caseloop.tasks.process_timeouts_task``) and safe to run
twice: each deadline is claimed with a conditional update, each reminder is
keyed by the case, the deadline and the rider.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.decide import ALL_CHECKS
from caseloop.loop.inbound import read_waiting_replies
from caseloop.loop.reaudit import reaudit
from caseloop.loop.writing import AGENT, flagged_riders, thread_for
from cases.kinds import LabelReply
from cases.lifecycle import claim_expired_deadline, expire_cancellation_proposals
from cases.models import Case, PendingAction
from outreach.models import EmailThread, Message
from outreach.sending import fail_stuck_sends, queue_template, retry_due_sends
from poolpatrol.logcontext import log_context
from vanpools.models import Employee

logger = logging.getLogger(__name__)

Status = Case.Status


def process_timeouts(now: datetime | None = None) -> dict[str, int]:
    """The sweep: reminders, deadline re-audits, send retries. Safe to run twice."""
    now = now or timezone.now()
    counts = {"reminders": send_reminders(now), "timeouts": 0, "resolved": 0, "pre_cancel": 0}
    counts.update({f"model_{k}": v for k, v in read_waiting_replies().items()})
    # Before the deadlines: a case whose proposal expired is due for a re-audit now.
    counts["proposals_expired"] = len(expire_cancellation_proposals(now, actor=AGENT))
    for case in _expired_cases(now):
        with log_context(case_id=case.case_id, vanpool_id=case.vanpool.vanpool_id):
            result = _time_out(case, now)
        if result:
            counts["timeouts"] += 1
            if result in ("resolved", "pre_cancel"):
                counts[result] += 1
    counts["sends_retried"] = retry_due_sends(now)
    counts["sends_stuck"] = fail_stuck_sends(now)
    logger.info("timeouts sweep: %s", counts)
    return counts


def _expired_cases(now: datetime) -> list[Case]:
    """Waiting cases past their deadline, and those a person is only asked to read.

    A case waiting on a label for a reply still gets its deadline re-audit, so
    a silent fix closes it; a failing one waits for the person, never goes to
    ``pre_cancel`` under them.
    """
    waiting = Case.objects.filter(status=Status.PENDING_REPLY, reply_deadline__lte=now)
    reading = Case.objects.filter(status=Status.HITL_REVIEW, reply_deadline__lte=now).exclude(
        pk__in=PendingAction.objects.pending().not_of(LabelReply).values("case_id")
    )
    return list((waiting | reading).select_related("vanpool").order_by("reply_deadline", "pk"))


def _time_out(case: Case, now: datetime) -> str:
    with transaction.atomic():
        if not claim_expired_deadline(case, now):
            return ""  # another sweep, or a reply, got here first
        return reaudit(case, ALL_CHECKS, trigger="timeout")


def send_reminders(now: datetime) -> int:
    if not settings.REMINDER_DAYS_BEFORE:
        return 0
    window_end = now + timedelta(days=settings.REMINDER_DAYS_BEFORE)
    sent = 0
    cases = Case.objects.filter(
        status=Status.PENDING_REPLY, reply_deadline__gt=now, reply_deadline__lte=window_end
    ).select_related("vanpool")
    for case in cases:
        thread = thread_for(case)
        assert case.reply_deadline is not None  # the filter above took cases with a deadline
        stamp = case.reply_deadline.strftime("%Y%m%dT%H%M")
        for rider in flagged_riders(case):
            employee = rider.employee
            if _has_replied(thread, employee):
                continue
            key = f"{case.case_id}:reminder:{stamp}:{employee.employee_id}"
            if Message.objects.filter(idempotency_key=key).exists():
                continue
            if queue_template(thread, employee, "reminder", key=key):
                sent += 1
    return sent


def _has_replied(thread: EmailThread, employee: Employee) -> bool:
    # Their own reply, not their out-of-office: an auto-reply says they are away,
    # which is a reason to remind them, not to stop.
    return Message.objects.filter(
        thread=thread,
        employee=employee,
        direction=Message.Direction.INBOUND,
        kind=Message.Kind.REPLY,
    ).exists()
