"""django-q2 tasks: one-line wrappers over the case manager, enqueued on commit.

Delivery is at least once; every task here is safe to run twice because the
audit recognises facts it already judged (see agents.case_manager).
"""

import logging
from dataclasses import asdict

from django.db import transaction
from django_q.tasks import async_task

from agents.case_manager import audit_vanpool, audit_vanpools
from vanpools.models import Vanpool

logger = logging.getLogger(__name__)


def audit_vanpool_task(vanpool_id: str) -> dict:
    return asdict(audit_vanpool(vanpool_id))


def audit_all_vanpools_task() -> dict[str, int]:
    """The periodic full audit: every active vanpool."""
    ids = Vanpool.objects.filter(status=Vanpool.Status.ACTIVE).values_list("vanpool_id", flat=True)
    outcomes = audit_vanpools(ids)
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    logger.info("full audit: %s", counts)
    return counts


def enqueue_audit(vanpool_id: str) -> None:
    """Queue an audit once the surrounding transaction commits (never a phantom row)."""
    transaction.on_commit(
        lambda: async_task(
            "agents.tasks.audit_vanpool_task",
            vanpool_id,
            task_name=f"audit {vanpool_id}",
            group="audit",
        )
    )
