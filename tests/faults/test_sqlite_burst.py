"""Defect 10: the embedded SQLite database holds a burst of webhook deliveries.

Deliveries from many gunicorn workers at once used to wait seconds on the
database's one write lock. Three things keep the wait short: the webhook's
write transaction holds only its own inserts (lookups run before it, one
indexed query each), its writers take turns through a file lock the kernel
hands over at once, and a worker reads a reply (the reader, or a model call
of seconds) before it opens its transaction. Measured under load with
``bench_webhook`` (docs/reliability.md).
"""

import threading
import time

import pytest
from django.db import connection
from django.test import Client

from caseloop import loop
from outreach.inbound import receive_raw
from outreach.models import Message
from tests.faults.scenes import failing_case, reply_from
from tests.faults.support import (
    POSTMARK_INBOUND,
    basic_auth,
    post_json,
    postmark_payload,
    production_webhooks,
)
from tests.inbound_support import email_bytes


@pytest.mark.django_db(transaction=True)
def test_defect_10_a_burst_of_distinct_deliveries_is_stored_whole_and_none_waits_seconds(settings):
    production_webhooks(settings)
    count, barrier = 24, threading.Barrier(24)
    answers: list[tuple[int, float]] = []
    errors: list[BaseException] = []

    def deliver(n: int) -> None:
        try:
            raw = email_bytes(sender=f"Rider {n} <rider{n}@example.com>", message_id=f"<b.{n}@x>")
            payload = postmark_payload(raw, MessageID=f"burst-{n}")
            client = Client()
            barrier.wait(timeout=10)
            started = time.perf_counter()
            status = post_json(client, POSTMARK_INBOUND, payload, **basic_auth()).status_code
            answers.append((status, time.perf_counter() - started))
        except BaseException as exc:  # reported below: a thread's failure fails the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert sorted(status for status, _ in answers) == [200] * count
    assert max(seconds for _, seconds in answers) < 3.0  # the shortest provider timeout
    assert Message.objects.filter(direction="inbound").count() == count


@pytest.mark.django_db(transaction=True)  # no test transaction around it to hide the answer
def test_defect_10_a_worker_reads_the_reply_before_it_opens_a_write_transaction(run, monkeypatch):
    scene = failing_case(run)
    seen: list[bool] = []
    read = loop.classify_reply

    def reading(*args, **kwargs):
        seen.append(connection.in_atomic_block)
        return read(*args, **kwargs)

    monkeypatch.setattr(loop, "classify_reply", reading)

    run(receive_raw, reply_from(scene.case, scene.far, "I moved back to Fremont in May."))

    assert seen == [False]
