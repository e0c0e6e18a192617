"""Floods (defect 9): one sender sends hundreds of emails, and sends wait on a queue of their own.

A mail loop between two auto-responders, or someone testing us, can send
hundreds of emails a minute. Every one is kept; each sender gets one card
with a count; a rider's replies beyond INBOUND_SENDER_HOURLY_LIMIT are not
read (no model call, no re-audit, no email back) until a person decides.
"""

import time

import pytest
from django.core import mail

from caseloop import decisions
from cases.models import PendingAction
from outreach.inbound import receive_raw
from outreach.models import Message
from tests.faults.scenes import failing_case, outbound_to, reply_from
from tests.inbound_support import email_bytes
from tests.qcluster_support import manage, process_env, running_qcluster

pytestmark = pytest.mark.django_db


def stranger_email(n: int) -> bytes:
    return email_bytes(
        sender="Auto Responder <noreply@vendor.example>",
        to="reply+0000000000000000000000000000000000000000@replies.poolpatrol.example",
        subject=f"Ticket #{n} received",
        body="Your ticket was received.",
        message_id=f"<flood.{n}@vendor.example>",
    )


def test_defect_9_two_hundred_emails_from_a_stranger_are_kept_on_one_card(run, coordinator):
    for n in range(200):
        run(receive_raw, stranger_email(n), provider="test")

    assert Message.objects.filter(direction="inbound").count() == 200  # nothing lost
    card = PendingAction.objects.get()
    assert (card.kind, card.payload["repeats"]) == ("match_inbound", 199)

    run(decisions.reject, card, by=coordinator, note="a vendor's auto-responder")

    assert Message.objects.filter(direction="inbound", status="set_aside").count() == 200


def test_defect_9_a_rider_flooding_replies_is_read_up_to_the_limit_then_held_on_one_card(
    run, settings, _frozen_time
):
    settings.INBOUND_SENDER_HOURLY_LIMIT = 5
    scene = failing_case(run)
    question = "How is the distance to the pickup measured?"

    for n in range(200):
        run(receive_raw, reply_from(scene.case, scene.far, f"{question} ({n})", n=n))

    replies = Message.objects.filter(direction="inbound", employee=scene.far)
    assert replies.count() == 200  # every one kept on the thread
    assert replies.filter(status="processed").count() == 5
    held = replies.filter(status="set_aside")
    assert held.count() == 195 and all("flood" in m.flags for m in held)
    assert outbound_to(scene.far, "answer") == 5  # not 200 emails back
    [card] = PendingAction.objects.filter(status="pending")
    assert card.payload["flood"] is True and card.payload["repeats"] == 194
    assert "sent 6 emails within an hour" in card.payload["why"]


def test_defect_9_replies_that_need_a_person_collapse_into_one_card_and_are_reread_after_it(
    run, coordinator
):
    scene = failing_case(run)
    unsure = ["hmm", "?", "..."]  # nothing the reader can act on
    for n, text in enumerate(unsure):
        run(receive_raw, reply_from(scene.case, scene.far, text, n=n))

    [card] = PendingAction.objects.filter(status="pending")
    assert (card.kind, card.payload["repeats"]) == ("label_reply", 2)

    run(decisions.approve, card, by=coordinator, edits={"bucket": "acknowledgment"})

    # The next unsure reply makes the next card, with the one after it counted there.
    [following] = PendingAction.objects.filter(status="pending")
    assert following.pk != card.pk and following.payload["repeats"] == 1


@pytest.mark.slow_process
def test_defect_9_sends_go_to_their_own_queue_and_its_own_worker_drains_them(
    migrated_var_dir, settings
):
    env = process_env(migrated_var_dir, SEND_QUEUE="send")
    manage(
        env,
        "shell",
        "--no-imports",
        "-c",
        "from poolpatrol.queue import enqueue_send, enqueue_inbound_processing\n"
        "enqueue_inbound_processing(1)\n"
        "enqueue_send(1)\n",
    )
    count = (
        "from django_q.models import OrmQ\n"
        "print(sorted(OrmQ.objects.values_list('key', flat=True)))"
    )
    assert manage(env, "shell", "--no-imports", "-c", count) == "['poolpatrol', 'send']"

    with running_qcluster(env | {"Q_CLUSTER_NAME": "send"}):
        deadline = time.monotonic() + 30
        while (left := manage(env, "shell", "--no-imports", "-c", count)) != "['poolpatrol']":
            assert time.monotonic() < deadline, left
            time.sleep(0.5)
    # The send worker took only the send; the reply still waits for the main pool.
    assert mail.outbox == []
