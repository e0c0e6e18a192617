"""Storing inbound email once, on the right thread, and handing replies to the loop."""

import hashlib
import threading

import pytest
from django.db import connection

from cases.models import CaseEvent, PendingAction
from outreach import inbound
from outreach.bounces import record_bounce
from outreach.inbound import receive_raw
from outreach.models import Message
from tests.factories import EmailThreadFactory, EmployeeFactory, RiderFactory
from tests.inbound_support import (
    OUR_MESSAGE_ID,
    RIDER_EMAIL,
    email_bytes,
    eml,
    open_thread,
    oversized_eml,
)

pytestmark = pytest.mark.django_db

Status = Message.Status
Kind = Message.Kind


@pytest.fixture(autouse=True)
def queued(monkeypatch):
    """The pks handed to the reply loop (which is not under test here)."""
    calls: list[int] = []
    monkeypatch.setattr(inbound, "enqueue_inbound_processing", calls.append)
    return calls


def inbound_messages():
    return Message.objects.filter(direction=Message.Direction.INBOUND)


# --- Replies -------------------------------------------------------------------------


def test_a_rider_s_reply_is_stored_on_its_thread_and_queued_for_processing(queued):
    scene = open_thread()

    message, created = receive_raw(
        eml("plain_reply.eml"), provider="postmark", provider_message_id="pm-1"
    )

    assert created
    assert queued == [message.pk]
    message.refresh_from_db()
    assert message.thread == scene.thread
    assert message.employee == scene.rider  # From: Pat.Rivera@Example.com, any case
    assert (message.direction, message.kind, message.status) == ("inbound", "reply", "received")
    assert message.from_email == RIDER_EMAIL
    assert message.rfc_message_id == "CAPlainReply.0001@mail.example.com"
    assert message.provider_message_id == "pm-1"
    assert message.in_reply_to == OUR_MESSAGE_ID
    assert message.references == OUR_MESSAGE_ID
    assert message.headers["X-Pool-Patrol-Received-Via"] == "postmark"
    assert message.raw.startswith("Return-Path: <pat.rivera@example.com>")
    assert message.received_at is not None
    assert message.flags == []
    assert not PendingAction.objects.exists()


def test_a_reply_without_the_token_is_matched_by_in_reply_to(queued):
    scene = open_thread()
    raw = email_bytes(
        to="vanpool-audit@example.com", headers={"In-Reply-To": f"<{OUR_MESSAGE_ID}>"}
    )

    message, _ = receive_raw(raw)

    assert message.thread == scene.thread
    assert queued == [message.pk]


def test_a_reply_without_the_token_is_matched_by_its_references(queued):
    scene = open_thread()
    raw = email_bytes(
        to="vanpool-audit@example.com",
        headers={"References": f"<{OUR_MESSAGE_ID}> <other.1@mail.example.com>"},
    )

    message, _ = receive_raw(raw)

    assert message.thread == scene.thread


def test_a_reply_matching_nothing_says_why_to_the_person_who_matches_it():
    raw = email_bytes(to="vanpool-audit@example.com")

    message, _ = receive_raw(raw)

    assert message.thread is None
    assert PendingAction.objects.get(message=message).payload["reason"] == (
        "no reply token and no reference to an email we sent"
    )


def test_a_reference_beyond_the_first_five_is_not_followed(queued):
    open_thread()
    others = " ".join(f"<old.{n}@mail.example.com>" for n in range(5))
    raw = email_bytes(
        to="vanpool-audit@example.com", headers={"References": f"{others} <{OUR_MESSAGE_ID}>"}
    )

    message, _ = receive_raw(raw)

    assert message.thread is None
    assert "unmatched" in message.flags


def test_a_reply_from_a_cancelled_seat_still_belongs_to_that_rider(queued):
    scene = open_thread(rider_status="cancelled")

    message, _ = receive_raw(eml("plain_reply.eml"))

    assert message.employee == scene.rider
    assert queued == [message.pk]


def test_the_same_delivery_three_times_stores_one_message(queued):
    open_thread()
    raw = eml("plain_reply.eml")

    results = [receive_raw(raw, provider="postmark", provider_message_id="pm-1") for _ in range(3)]

    assert [created for _, created in results] == [True, False, False]
    assert {message.pk for message, _ in results} == {results[0][0].pk}
    assert inbound_messages().count() == 1
    assert len(queued) == 1


def test_a_redelivery_under_a_new_provider_id_is_found_by_its_message_id():
    open_thread()
    first, _ = receive_raw(eml("plain_reply.eml"), provider_message_id="mg-token-1")

    again, created = receive_raw(
        eml("plain_reply.eml").replace(b"Hi,", b"Hi!"), provider_message_id="mg-token-2"
    )

    assert (again.pk, created) == (first.pk, False)


def test_a_message_without_a_message_id_is_recognised_by_its_bytes():
    open_thread()
    raw = email_bytes(message_id=None)

    first, _ = receive_raw(raw)
    again, created = receive_raw(raw)

    assert first.rfc_message_id == ""
    assert (again.pk, created) == (first.pk, False)


@pytest.mark.django_db(transaction=True)
def test_twenty_simultaneous_deliveries_store_one_message(queued):
    open_thread()
    raw = eml("plain_reply.eml")
    barrier = threading.Barrier(20)
    results: list[tuple[int, bool]] = []
    errors: list[BaseException] = []

    def deliver(n: int) -> None:
        try:
            barrier.wait(timeout=10)
            message, created = receive_raw(raw, provider="postmark", provider_message_id=f"pm-{n}")
            results.append((message.pk, created))
        except BaseException as exc:  # reported below: a thread's failure must fail the test
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=deliver, args=(n,)) for n in range(20)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)

    assert errors == []
    assert len(results) == 20
    assert len({pk for pk, _ in results}) == 1
    assert sum(created for _, created in results) == 1
    assert inbound_messages().count() == 1
    assert len(queued) == 1


# --- Nobody to give it to ------------------------------------------------------------


def test_an_unmatched_reply_waits_for_a_person_and_is_not_guessed_onto_a_case(queued):
    # Its token and In-Reply-To name a thread and an email that do not exist here.
    message, _ = receive_raw(eml("spanish_reply.eml"))

    assert (message.thread, message.status, message.flags) == (None, "received", ["unmatched"])
    action = PendingAction.objects.get()
    assert (action.kind, action.case, action.message, action.requested_by) == (
        "match_inbound",
        None,
        message,
        "agent:inbound",
    )
    assert action.payload == {
        "reason": "the reply token matches no thread",
        "from": "maria.lopez@example.com",
        "subject": "Re: Su plaza en el vanpool: confirme sus datos",
    }
    assert action.collapse_key == "match:-:maria.lopez@example.com"  # her later emails count here
    assert queued == []


def test_a_reply_from_someone_who_is_not_a_rider_of_the_case_goes_to_a_person(queued):
    scene = open_thread()
    EmployeeFactory(email="jose.munoz@example.com")  # an employee, but not on this vanpool

    message, _ = receive_raw(eml("latin1.eml"))

    assert message.thread == scene.thread
    assert message.employee is None
    assert message.flags == ["unknown_sender"]
    action = PendingAction.objects.get()
    assert (action.kind, action.case, action.message) == ("match_inbound", scene.case, message)
    assert action.payload["reason"] == "sender is not a rider of this case"
    assert queued == []


def test_a_shared_address_goes_to_the_rider_this_thread_wrote_to(queued):
    scene = open_thread()
    partner = EmployeeFactory(email=RIDER_EMAIL.upper())
    RiderFactory(employee=partner, vanpool=scene.case.vanpool)

    message, _ = receive_raw(eml("plain_reply.eml"))

    assert message.employee == scene.rider
    assert queued == [message.pk]


def test_a_forced_thread_files_a_message_its_headers_do_not_match(queued):
    scene = open_thread(token="0" * 40)

    message, _ = receive_raw(eml("plain_reply.eml"), force_thread=scene.thread)

    assert message.thread == scene.thread
    assert message.employee == scene.rider
    assert queued == [message.pk]


# --- Set aside -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("ooo_auto_submitted.eml", "Auto-Submitted: auto-replied"),
        ("ooo_subject_only.eml", "out-of-office subject: Out of Office"),
    ],
)
def test_an_auto_reply_stays_on_the_thread_set_aside_and_is_never_processed(queued, name, reason):
    scene = open_thread()

    message, _ = receive_raw(eml(name))

    assert (message.kind, message.status) == ("auto_reply", "set_aside")
    assert message.thread == scene.thread
    assert message.employee == scene.rider
    assert message.classification["reason"].startswith(reason)
    assert queued == []
    assert not PendingAction.objects.exists()


def test_bulk_mail_to_no_known_thread_is_set_aside_without_asking_anyone(queued):
    message, _ = receive_raw(eml("precedence_bulk.eml"))

    assert (message.kind, message.status, message.flags) == (
        "auto_reply",
        "set_aside",
        ["unmatched"],
    )
    assert not PendingAction.objects.exists()
    assert queued == []


# --- Bounces -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dsn_bounce.eml", "dsn_bounce_headers_only.eml"])
def test_a_bounce_marks_the_rider_undeliverable_and_flags_the_case(queued, name):
    scene = open_thread()

    message, _ = receive_raw(eml(name))

    assert (message.kind, message.status) == ("bounce", "set_aside")
    assert message.thread == scene.thread
    assert message.employee == scene.rider
    scene.rider.refresh_from_db()
    assert scene.rider.email_undeliverable_at is not None
    scene.case.refresh_from_db()
    assert scene.case.meta["flags"] == [f"bounced:{scene.rider.employee_id}"]
    assert scene.case.status == "pending_reply"  # a flag, not a move
    event = CaseEvent.objects.get(case=scene.case)
    assert event.actor_agent == "inbound"
    assert event.data["recipient"] == RIDER_EMAIL
    assert "5.1.1" in event.note
    scene.outbound.refresh_from_db()
    assert scene.outbound.flags == ["bounced"]
    assert queued == []


def test_a_second_bounce_for_the_same_address_changes_nothing():
    scene = open_thread()
    receive_raw(eml("dsn_bounce.eml"))
    scene.rider.refresh_from_db()
    first_mark = scene.rider.email_undeliverable_at

    receive_raw(eml("dsn_bounce_headers_only.eml"))

    scene.rider.refresh_from_db()
    assert scene.rider.email_undeliverable_at == first_mark
    assert CaseEvent.objects.filter(case=scene.case).count() == 1


def test_a_bounce_for_an_address_hr_has_since_corrected_leaves_the_new_one_alone():
    scene = open_thread()
    scene.rider.email = "pat.rivera@new.example.com"
    scene.rider.save()

    changed = record_bounce(scene.outbound, RIDER_EMAIL, "550 user unknown")

    assert changed
    scene.rider.refresh_from_db()
    assert scene.rider.email_undeliverable_at is None
    scene.case.refresh_from_db()
    assert scene.case.meta["flags"] == [f"bounced:{RIDER_EMAIL}"]


def test_a_bounce_naming_no_address_we_wrote_to_goes_to_a_person():
    scene = open_thread()
    raw = (
        eml("dsn_bounce.eml")
        .replace(b"pat.rivera@", b"someone.else@")
        .replace(b"Pat.Rivera@", b"someone.else@")
    )

    message, _ = receive_raw(raw)

    assert message.thread == scene.thread
    assert "bounce_unattributed" in message.flags
    assert PendingAction.objects.get().case == scene.case
    scene.rider.refresh_from_db()
    assert scene.rider.email_undeliverable_at is None


# --- Hostile or odd input ------------------------------------------------------------


def test_garbage_is_quarantined_once_and_nothing_is_raised(queued):
    raw = eml("garbage.eml")

    message, created = receive_raw(raw, provider="postmark", provider_message_id="pm-junk")
    again, created_again = receive_raw(raw, provider="postmark", provider_message_id="pm-junk")

    assert (created, created_again, again.pk) == (True, False, message.pk)
    message.refresh_from_db()
    assert (message.direction, message.status, message.flags) == (
        "inbound",
        "quarantined",
        ["unparseable"],
    )
    assert message.from_email == ""
    assert message.raw_sha256 and message.raw
    assert "\x00" not in message.raw
    assert message.last_error.startswith("UnparseableMessage")
    assert queued == []


def test_a_1_mb_reply_is_kept_cut_at_the_body_limit_and_flagged(queued, settings):
    open_thread()
    raw = oversized_eml()

    message, _ = receive_raw(raw)

    message.refresh_from_db()
    assert len(message.text_body) == settings.INBOUND_BODY_MAX_CHARS
    assert message.flags == ["oversized", "truncated"]
    assert message.raw_sha256 == hashlib.sha256(raw).hexdigest()  # identity of the whole
    assert queued == [message.pk]  # the loop classifies the first INBOUND_CLASSIFY_MAX_CHARS


def test_a_bogus_charset_is_stored_decoded_with_replacement():
    open_thread()

    message, _ = receive_raw(eml("bogus_charset.eml"))

    message.refresh_from_db()
    assert message.text_body == "Confirmed \ufffd\ufffd the \ufffd schedule is right.\n"
    assert message.flags == ["charset_replaced"]


def test_a_message_reusing_the_message_id_of_our_email_is_still_stored():
    # A mail client's "redirect" resends our email with its Message-ID intact.
    scene = open_thread()
    raw = email_bytes(message_id=f"<{OUR_MESSAGE_ID}>")

    message, created = receive_raw(raw)

    assert created
    assert message.thread == scene.thread
    assert message.rfc_message_id == ""
    assert "message_id_reused" in message.flags
    assert message.headers["Message-ID"] == f"<{OUR_MESSAGE_ID}>"


def test_a_thread_without_mail_of_ours_still_takes_a_token_reply(queued):
    thread = EmailThreadFactory(reply_token="a" * 40)
    RiderFactory(employee=EmployeeFactory(email=RIDER_EMAIL), vanpool=thread.case.vanpool)

    message, _ = receive_raw(
        email_bytes(to=f"reply+{'a' * 40}@replies.poolpatrol.example", message_id=None)
    )

    assert message.thread == thread
    assert queued == [message.pk]


def test_a_forged_in_reply_to_from_a_co_rider_goes_to_a_person_unmatched(queued):
    scene = open_thread()
    co_rider = EmployeeFactory(email="co.rider@example.com")
    RiderFactory(employee=co_rider, vanpool=scene.case.vanpool)
    raw = email_bytes(
        sender="Co Rider <co.rider@example.com>",
        to="vanpool-audit@example.com",
        body="Pat still rides with us every day, do not cancel.",
        headers={"In-Reply-To": f"<{OUR_MESSAGE_ID}>"},
    )

    message, _ = receive_raw(raw)

    assert message.thread is None and "unmatched" in message.flags
    assert queued == []  # never read as the rider's reply
    card = PendingAction.objects.get(kind="match_inbound")
    assert card.payload["reason"] == "sender is not the rider the referenced email was sent to"


def test_the_rider_the_email_went_to_is_still_matched_by_in_reply_to(queued):
    scene = open_thread()
    raw = email_bytes(
        to="vanpool-audit@example.com", headers={"In-Reply-To": f"<{OUR_MESSAGE_ID}>"}
    )
    message, _ = receive_raw(raw)
    assert (message.thread, message.employee) == (scene.thread, scene.rider)
