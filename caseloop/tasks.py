"""django-q2 task bodies: one-line wrappers over the workflow's services.

They are queued by name through ``poolpatrol.queue`` once the transaction
commits. Delivery is at least once: each service claims its row with a
conditional update or recognises facts it already judged, so running a task
twice changes nothing the second time.
"""

import logging
from dataclasses import asdict

from caseloop.audits import audit_vanpool
from caseloop.fanout import run_audit_chunk, start_audit_run
from caseloop.lessons import capture_lesson
from caseloop.loop.deadlines import process_timeouts
from caseloop.loop.inbound import process_inbound
from caseloop.loop.writing import start_outreach
from caseloop.supervisor.review import review_pre_cancel
from outreach.sending import send_message
from vanpools.models import Vanpool

logger = logging.getLogger(__name__)


def audit_vanpool_task(vanpool_id: str) -> dict:
    return asdict(audit_vanpool(vanpool_id))


def audit_all_vanpools_task() -> dict[str, int]:
    """The nightly full audit: every active vanpool, fanned out to the workers in chunks."""
    ids = Vanpool.objects.filter(status=Vanpool.Status.ACTIVE).values_list("vanpool_id", flat=True)
    run = start_audit_run(ids, requested_by="schedule")
    logger.info("full audit: run %s, %s vanpools queued", run.pk, run.vanpools)
    return {"run": run.pk, "vanpools": run.vanpools}


def audit_chunk_task(chunk_pk: int) -> str:
    return run_audit_chunk(chunk_pk)


def send_message_task(message_pk: int) -> str:
    return send_message(message_pk)


def process_inbound_task(message_pk: int) -> str:
    return process_inbound(message_pk)


def start_outreach_task(case_pk: int) -> int:
    return start_outreach(case_pk)


def process_timeouts_task() -> dict[str, int]:
    return process_timeouts()


def review_pre_cancel_task(event_pk: int) -> str:
    review = review_pre_cancel(event_pk)
    return str(review) if review else "skipped"


def capture_lesson_task(case_pk: int) -> str:
    lesson = capture_lesson(case_pk)
    return str(lesson) if lesson else "skipped"
