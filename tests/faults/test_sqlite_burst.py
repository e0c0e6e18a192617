"""Defect 10: the embedded SQLite database holds a burst of webhook deliveries.

Deliveries from many gunicorn workers at once used to wait seconds on the
database's one write lock. Three things keep the wait short: the webhook's
lookups are indexed, its writers take turns through a file lock the kernel
hands over at once, and a worker reads a reply (the reader, or a model call
of seconds) before it opens its transaction. How short is measured with
``bench_webhook`` (docs/reliability.md); the tests here prove that a burst
loses and refuses nothing, and that a reply is read outside a transaction.
"""

import threading

import pytest
from django.db import connection
from django.test import Client

from caseloop.loop import reading as reply_reading
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
def test_defect_10_a_burst_of_distinct_deliveries_is_stored_whole_and_none_fails_on_a_lock(
    settings,
):
    production_webhooks(settings)
    count, barrier = 24, threading.Barrier(24)
    answers: list[int] = []
    errors: list[BaseException] = []

    def deliver(n: int) -> None:
        try:
            raw = email_bytes(sender=f"Rider {n} <rider{n}@example.com>", message_id=f"<b.{n}@x>")
            payload = postmark_payload(raw, MessageID=f"burst-{n}")
            client = Client()
            barrier.wait(timeout=10)
            answers.append(post_json(client, POSTMARK_INBOUND, payload, **basic_auth()).status_code)
        except BaseException as exc:  # reported below: a thread's failure fails the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    # No "database is locked", no 5xx, nothing lost. How long each waits is a figure
    # for bench_webhook ("over 3 s: 0"), not for a test on a shared machine.
    assert errors == []
    assert answers == [200] * count
    assert Message.objects.filter(direction="inbound").count() == count


@pytest.mark.django_db(transaction=True)  # no test transaction around it to hide the answer
def test_defect_10_a_worker_reads_the_reply_before_it_opens_a_write_transaction(run, monkeypatch):
    scene = failing_case(run)
    seen: list[bool] = []
    read = reply_reading.classify_reply

    def reading(*args, **kwargs):
        seen.append(connection.in_atomic_block)
        return read(*args, **kwargs)

    monkeypatch.setattr(reply_reading, "classify_reply", reading)

    run(receive_raw, reply_from(scene.case, scene.far, "I moved back to Fremont in May."))

    assert seen == [False]
