"""Every enqueue helper: the one place work is handed to django-q2.

Tasks are named by dotted path (``caseloop.tasks.*``, one in ``agents.telemetry``),
never imported, so any layer may queue work without importing the code that
runs it. Each helper enqueues inside ``transaction.on_commit``: a rolled-back
write queues nothing. No other product module imports django-q2's enqueue
functions (``poolpatrol/tests/test_one_enqueue_place.py``).

Delivery is at least once; every task body claims its row or recognises work
already done, so running one twice changes nothing the second time.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.db import transaction
from django_q.tasks import async_task

TASKS = "caseloop.tasks"

logger = logging.getLogger(__name__)

# Commands an operator watches (load_demo, ingest_email) run the follow-on
# work in-process, so they see its result without a worker running.
_inline: ContextVar[bool] = ContextVar("queue_inline", default=False)


@contextmanager
def run_inline() -> Iterator[None]:
    # django-q2's in-process runner narrates its own start and stop at INFO
    # for every task; the command's summary says what matters.
    q_logger = logging.getLogger("django-q")
    level = q_logger.level
    q_logger.setLevel(max(level, logging.WARNING))
    token = _inline.set(True)
    try:
        yield
    finally:
        _inline.reset(token)
        q_logger.setLevel(level)


def _enqueue(task: str, arg: int | str, name: str, group: str, queue: str = "") -> None:
    options: dict[str, object] = {"task_name": name, "group": group}
    if queue:
        # django-q2's name for a queue of its own. A named queue is always
        # drained by its own workers, even where tasks otherwise run inline.
        options["cluster"] = queue
        options["sync"] = False
    if _inline.get():
        options["sync"] = True
    transaction.on_commit(lambda: async_task(f"{TASKS}.{task}", arg, **options))


def enqueue_audit_chunk(chunk_pk: int, *, queue: str = "") -> None:
    """Queue one chunk of an audit run (``caseloop.fanout``)."""
    _enqueue("audit_chunk_task", chunk_pk, f"audit chunk {chunk_pk}", group="audit", queue=queue)


def enqueue_audit(vanpool_id: str) -> None:
    """Queue an audit once the surrounding transaction commits (never a phantom row)."""
    _enqueue("audit_vanpool_task", vanpool_id, f"audit {vanpool_id}", group="audit")


def enqueue_send(message_pk: int) -> None:
    """Queue one email to send; on settings.SEND_QUEUE when one is configured."""
    _enqueue(
        "send_message_task",
        message_pk,
        f"send message {message_pk}",
        group="outreach",
        queue=settings.SEND_QUEUE,
    )


def enqueue_inbound_processing(message_pk: int) -> None:
    """Queue a stored inbound reply for classification and the case loop."""
    _enqueue("process_inbound_task", message_pk, f"process inbound {message_pk}", group="outreach")


def enqueue_outreach(case_pk: int) -> None:
    _enqueue("start_outreach_task", case_pk, f"outreach for case {case_pk}", group="outreach")


def enqueue_supervisor_review(event_pk: int) -> None:
    """Queue the supervisor's review of the pre_cancel entry ``event_pk`` (one review per entry)."""
    _enqueue(
        "review_pre_cancel_task",
        event_pk,
        f"supervisor review of event {event_pk}",
        group="supervisor",
    )


def enqueue_lesson_capture(case_pk: int) -> None:
    """Queue knowledge capture for a case that has just closed (one lesson per case)."""
    _enqueue("capture_lesson_task", case_pk, f"lesson of case {case_pk}", group="knowledge")


def enqueue_trace_export(root_pk: int) -> None:
    """Queue the export of one agent-run tree to the tracing backends (``agents.telemetry``).

    Best effort, unlike the workflow's tasks: a broker that refuses it is
    logged, never raised, so observability cannot fail the audit that traced.
    Never run inline: an operator's command does not wait on a collector.
    """

    def enqueue() -> None:
        try:
            async_task(
                "agents.telemetry.export_trace_task",
                root_pk,
                task_name=f"export trace {root_pk}",
                group="telemetry",
            )
        except Exception:
            logger.warning("could not queue the export of agent run %s", root_pk, exc_info=True)

    transaction.on_commit(enqueue)
