"""django-q2 tasks for the case loop: thin wrappers, enqueued once the transaction commits.

Outreach (send, inbound, start), the supervisor's review of a pre_cancel entry
and knowledge capture when a case closes.

Delivery is at least once. Each task claims its row with a conditional update
(a message is sent by exactly one worker; an inbound reply is acted on once),
so running one twice changes nothing the second time.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction
from django_q.tasks import async_task

logger = logging.getLogger(__name__)

# Commands an operator watches (load_demo, ingest_email) run the follow-on
# work in-process, so they see its result without a worker running.
_inline: ContextVar[bool] = ContextVar("outreach_inline", default=False)


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


def _enqueue(func: str, arg: int, name: str, group: str = "outreach") -> None:
    options: dict[str, object] = {"task_name": name, "group": group}
    if _inline.get():
        options["sync"] = True
    transaction.on_commit(lambda: async_task(func, arg, **options))


def send_message_task(message_pk: int) -> str:
    from outreach.sending import send_message

    return send_message(message_pk)


def process_inbound_task(message_pk: int) -> str:
    from outreach.loop import process_inbound

    return process_inbound(message_pk)


def start_outreach_task(case_pk: int) -> int:
    from outreach.loop import start_outreach

    return start_outreach(case_pk)


def process_timeouts_task() -> dict[str, int]:
    from outreach.loop import process_timeouts

    return process_timeouts()


def review_pre_cancel_task(event_pk: int) -> str:
    from agents.supervisor import review_pre_cancel

    review = review_pre_cancel(event_pk)
    return str(review) if review else "skipped"


def capture_lesson_task(case_pk: int) -> str:
    from agents.lessons import capture_lesson

    lesson = capture_lesson(case_pk)
    return str(lesson) if lesson else "skipped"


def enqueue_send(message_pk: int) -> None:
    _enqueue("outreach.tasks.send_message_task", message_pk, f"send message {message_pk}")


def enqueue_inbound_processing(message_pk: int) -> None:
    """Queue a stored inbound reply for classification and the case loop."""
    _enqueue("outreach.tasks.process_inbound_task", message_pk, f"process inbound {message_pk}")


def enqueue_outreach(case_pk: int) -> None:
    _enqueue("outreach.tasks.start_outreach_task", case_pk, f"outreach for case {case_pk}")


def enqueue_supervisor_review(event_pk: int) -> None:
    """Queue the supervisor's review of the pre_cancel entry ``event_pk`` (one review per entry)."""
    _enqueue(
        "outreach.tasks.review_pre_cancel_task",
        event_pk,
        f"supervisor review of event {event_pk}",
        group="supervisor",
    )


def enqueue_lesson_capture(case_pk: int) -> None:
    """Queue knowledge capture for a case that has just closed (one lesson per case)."""
    _enqueue(
        "outreach.tasks.capture_lesson_task",
        case_pk,
        f"lesson of case {case_pk}",
        group="knowledge",
    )
