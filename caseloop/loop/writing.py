"""Who is written to, and the first letters: one thread per case, one message per flagged rider.

``start_outreach`` moves the case to ``pending_reply`` with a deadline (the
letters quote it) and writes to every flagged rider not yet written to; riders
never see each other's data.
"""

import logging

from django.db import transaction
from django.utils import timezone

from cases.lifecycle import reply_deadline_from, set_reply_deadline, transition
from cases.models import Case
from outreach.compose import initial_template_for
from outreach.models import EmailThread, Message
from outreach.sending import queue_template
from poolpatrol.logcontext import log_context
from vanpools.models import Rider

logger = logging.getLogger(__name__)

AGENT = "outreach"
Status = Case.Status
WAITING = (Status.OPEN, Status.PENDING_REPLY)


def failing_checks(case: Case, employee_id: str) -> list[str]:
    checks = case.meta.get("rider_flags", {}).get(employee_id, {})
    return sorted(check for check, verdict in checks.items() if verdict == "fail")


def flagged_riders(case: Case) -> list[Rider]:
    """Active seats on the case's vanpool whose rider fails at least one check."""
    failing = [emp for emp in case.meta.get("rider_flags", {}) if failing_checks(case, emp)]
    return list(
        Rider.objects.filter(
            vanpool_id=case.vanpool_id,
            status=Rider.Status.ACTIVE,
            employee__employee_id__in=failing,
        )
        .select_related("employee")
        .order_by("employee__employee_id")
    )


def thread_for(case: Case) -> EmailThread:
    thread, _ = EmailThread.objects.get_or_create(
        case=case,
        defaults={"subject": f"Your vanpool seat on {case.vanpool.vanpool_id} ({case.case_id})"},
    )
    return thread


def start_outreach(case_pk: int) -> int:
    """Write to every flagged rider not yet written to; returns messages queued."""
    case = Case.objects.select_related("vanpool").get(pk=case_pk)
    with log_context(case_id=case.case_id, vanpool_id=case.vanpool.vanpool_id):
        if case.status not in WAITING:
            logger.info("no outreach: case is %s", case.status)
            return 0
        with transaction.atomic():
            # The deadline first: the letters quote it.
            if case.status == Status.OPEN:
                case = transition(
                    case,
                    Status.PENDING_REPLY,
                    actor=AGENT,
                    note=f"writing to {len(flagged_riders(case))} flagged rider(s)",
                    reply_deadline=reply_deadline_from(timezone.now()),
                )
            return write_to_flagged(case)


def write_to_flagged(case: Case) -> int:
    thread = thread_for(case)
    queued = 0
    for rider in flagged_riders(case):
        employee = rider.employee
        key = f"{case.case_id}:initial:{employee.employee_id}"
        if Message.objects.filter(idempotency_key=key).exists():
            continue
        template = initial_template_for(failing_checks(case, employee.employee_id))
        if queue_template(thread, employee, template, key=key):
            queued += 1
    return queued


def give_more_time(case: Case, note: str) -> Case:
    deadline = reply_deadline_from(timezone.now())
    if case.reply_deadline is None or case.reply_deadline < deadline:
        return set_reply_deadline(case, deadline, actor=AGENT, note=f"{note}; deadline moved")
    return case
