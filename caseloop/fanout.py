"""A full audit fanned out over the workers: split into chunks, each a task any worker takes.

``start_audit_run`` records the run and its chunks and queues one django-q2
task per chunk once the transaction commits; ``run_audit_chunk`` is that
task's body. Any number of ``qcluster`` processes, on any number of hosts,
drain the chunks against one database and one broker.

Delivery is at least once, and that is harmless:

- a chunk already done is skipped (a conditional update claims it);
- a chunk redelivered because its worker died mid-way is run again, and
  every vanpool it had finished is recognised by its input hash and left
  alone (``caseloop.audits``), so nothing is lost and nothing doubles;
- two runs over the same vanpools at once open no second case (the
  one-open-case-per-vanpool constraint) and send no second email (every
  outgoing email has an idempotency key).
"""

import datetime as dt
import logging
from collections import Counter
from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from caseloop.audits import audit_vanpools
from caseloop.models import AuditChunk, AuditRun
from poolpatrol.queue import enqueue_audit_chunk

logger = logging.getLogger(__name__)

Status = AuditChunk.Status


def start_audit_run(
    vanpool_ids: Iterable[str],
    *,
    audit_date: dt.date | None = None,
    requested_by: str = "command",
    chunk_size: int | None = None,
    queue: str = "",
) -> AuditRun:
    """Record a run of these vanpools in chunks and queue a task per chunk.

    ``queue`` names a django-q2 queue for the chunks (a benchmark's or a
    test's own workers); by default they go where every task goes.
    """
    ids = list(dict.fromkeys(vanpool_ids))
    size = chunk_size or settings.AUDIT_CHUNK_SIZE
    with transaction.atomic():
        run = AuditRun.objects.create(
            audit_date=audit_date or timezone.localdate(),
            requested_by=requested_by[:80],
            vanpools=len(ids),
            chunk_size=size,
        )
        chunks = AuditChunk.objects.bulk_create(
            AuditChunk(run=run, number=number, vanpool_ids=ids[start : start + size])
            for number, start in enumerate(range(0, len(ids), size), start=1)
        )
        for chunk in chunks:
            enqueue_audit_chunk(chunk.pk, queue=queue)
    logger.info("audit run %s: %s vanpools in %s chunks queued", run.pk, len(ids), len(chunks))
    return run


def run_audit_chunk(chunk_pk: int) -> str:
    """Audit one chunk (the task body); a chunk already done is skipped."""
    claimed = (
        AuditChunk.objects.filter(pk=chunk_pk)
        .exclude(status=Status.DONE)
        .update(status=Status.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now())
    )
    if not claimed:
        return "skipped"
    chunk = AuditChunk.objects.select_related("run").get(pk=chunk_pk)
    try:
        outcomes = audit_vanpools(
            chunk.vanpool_ids,
            audit_date=chunk.run.audit_date,
            chunk_size=max(len(chunk.vanpool_ids), 1),
        )
    except Exception as exc:
        _finish(chunk_pk, Status.FAILED, {}, f"{type(exc).__name__}: {exc}")
        raise
    counts: dict[str, int] = dict(Counter(str(outcome.status) for outcome in outcomes))
    errors = [f"{o.vanpool_id}: {o.error}" for o in outcomes if o.status == "error"]
    _finish(chunk_pk, Status.FAILED if errors else Status.DONE, counts, "\n".join(errors[:20]))
    return f"chunk {chunk.number} of run {chunk.run_id}: {counts}"


def _finish(chunk_pk: int, status: str, counts: dict[str, int], error: str) -> None:
    AuditChunk.objects.filter(pk=chunk_pk).update(
        status=status, outcomes=counts, error=error[:4000], finished_at=timezone.now()
    )


def retry_failed_chunks(run: AuditRun, *, queue: str = "") -> int:
    """Queue a run's failed chunks again; returns how many.

    The vanpools a failed chunk finished are recognised and left alone, so a
    retry audits only what is left (and whatever changed since).
    """
    with transaction.atomic():
        failed = list(
            AuditChunk.objects.select_for_update()
            .filter(run=run, status=Status.FAILED)
            .values_list("pk", flat=True)
        )
        AuditChunk.objects.filter(pk__in=failed).update(status=Status.WAITING, error="")
        for chunk_pk in failed:
            enqueue_audit_chunk(chunk_pk, queue=queue)
    logger.info("audit run %s: %s failed chunks queued again", run.pk, len(failed))
    return len(failed)
