"""Faults 1–5 and 11–13: who may call the inbound webhook, replays and racing
deliveries, a reply that is only an attachment, and hostile HTML and headers.

The webhook must refuse a caller without the secret before anything is kept,
store a delivery once however often and however concurrently the provider
sends it, hand a reply it cannot read to a person rather than answer it, and
never let what a rider wrote reach the coordinators' pages as markup.
"""

import base64
import datetime as dt
import hashlib
import hmac
import html
import threading
from email.message import EmailMessage

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.utils import timezone

from caseloop.loop.inbound import process_inbound
from cases.models import PendingAction
from outreach import inbound
from outreach.models import Message
from tests.faults.support import (
    MAILGUN_INBOUND_MIME,
    MAILGUN_KEY,
    POSTMARK_INBOUND,
    POSTMARK_TRACKING,
    basic_auth,
    post_json,
    postmark_payload,
    production_webhooks,
)
from tests.inbound_support import (
    OUR_MESSAGE_ID,
    OUR_PROVIDER_ID,
    REPLY_ADDRESS,
    RIDER_EMAIL,
    eml,
    open_thread,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def queued(settings, monkeypatch):
    """Webhooks as deployed; the pks handed to the reply loop."""
    production_webhooks(settings)
    calls: list[int] = []
    monkeypatch.setattr(inbound, "enqueue_inbound_processing", calls.append)
    return calls


def inbound_rows():
    return Message.objects.filter(direction=Message.Direction.INBOUND)


def mailgun_signed(fields: dict[str, str], token: str = "mg-fault-token-1") -> dict[str, str]:
    timestamp = "1795453200"
    signature = hmac.new(
        MAILGUN_KEY.encode(), f"{timestamp}{token}".encode(), hashlib.sha256
    ).hexdigest()
    return fields | {"timestamp": timestamp, "token": token, "signature": signature}


def encoded_word(text: str) -> str:
    """A header value as mail clients encode non-ASCII (and, here, line breaks)."""
    return "=?utf-8?b?" + base64.b64encode(text.encode()).decode() + "?="


def rider_reply(subject: str = "Re: Your vanpool seat") -> EmailMessage:
    """The rider's reply to our email, without a body yet."""
    msg = EmailMessage()
    msg["From"] = f"Pat Rivera <{RIDER_EMAIL}>"
    msg["To"] = REPLY_ADDRESS
    msg["Subject"] = subject
    msg["Message-ID"] = "<hostile.0001@mail.example.com>"
    msg["In-Reply-To"] = f"<{OUR_MESSAGE_ID}>"
    return msg


# --- 1, 2: who may call ----------------------------------------------------------------


@pytest.mark.parametrize(
    "secret",
    ["esp:wrong-secret", "esp:fault-suite-secret-and-more", "other:fault-suite-secret", "esp:"],
)
def test_fault_01_a_delivery_with_a_wrong_secret_is_refused_and_nothing_is_stored(
    client, queued, secret
):
    open_thread()

    response = post_json(
        client, POSTMARK_INBOUND, postmark_payload(eml("plain_reply.eml")), **basic_auth(secret)
    )

    assert response.status_code == 400
    assert not inbound_rows().exists()
    assert queued == []


def test_fault_02_without_a_secret_outside_debug_every_webhook_url_is_refused(
    client, settings, queued
):
    settings.ANYMAIL = {"MAILGUN_WEBHOOK_SIGNING_KEY": MAILGUN_KEY}  # no WEBHOOK_SECRET
    scene = open_thread()
    bounce = {
        "RecordType": "Bounce",
        "ID": 4323372036854775807,
        "Type": "HardBounce",
        "MessageID": OUR_PROVIDER_ID,
        "Description": "The server was unable to deliver your message.",
        "Email": RIDER_EMAIL,
        "BouncedAt": "2026-11-20T17:00:05Z",
    }
    mime = {"body-mime": eml("plain_reply.eml").decode(), "recipient": REPLY_ADDRESS}

    # Even a caller presenting the deployed credentials: there is nothing to check them against.
    responses = {
        "postmark inbound": post_json(
            client, POSTMARK_INBOUND, postmark_payload(eml("plain_reply.eml")), **basic_auth()
        ),
        "postmark tracking": post_json(client, POSTMARK_TRACKING, bounce, **basic_auth()),
        "mailgun inbound_mime": client.post(
            MAILGUN_INBOUND_MIME, mailgun_signed(mime), **basic_auth()
        ),
    }

    assert {url: r.status_code for url, r in responses.items()} == dict.fromkeys(responses, 403)
    assert all(b"WEBHOOK_SECRET is not set" in r.content for r in responses.values())
    assert not inbound_rows().exists()
    assert queued == []
    scene.rider.refresh_from_db()
    assert scene.rider.email_undeliverable_at is None  # the bounce was not recorded either


# --- 3, 4, 5: replays and racing deliveries ------------------------------------------


def test_fault_03_the_same_delivery_replayed_hours_later_is_stored_and_queued_once(
    client, queued, _frozen_time
):
    scene = open_thread()
    payload = postmark_payload(eml("plain_reply.eml"))
    first = post_json(client, POSTMARK_INBOUND, payload, **basic_auth())
    stored = inbound_rows().get()

    replies = []
    for hours in (6, 30, 72):  # the provider's retry schedule runs for days
        _frozen_time.shift(dt.timedelta(hours=hours))
        replies.append(post_json(client, POSTMARK_INBOUND, payload, **basic_auth()))

    assert [r.status_code for r in [first, *replies]] == [200, 200, 200, 200]
    again = inbound_rows().get()
    assert again.pk == stored.pk
    assert again.thread == scene.thread
    assert again.received_at == stored.received_at  # the first arrival, not the replay's
    assert timezone.now() - stored.received_at == dt.timedelta(hours=108)
    assert queued == [stored.pk]


def deliver_concurrently(times: int, payload: dict[str, object]) -> list[int]:
    """``times`` threads post the same payload at once, each with its own client."""
    barrier = threading.Barrier(times)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def deliver() -> None:
        try:
            client = Client()
            barrier.wait(timeout=10)
            statuses.append(
                post_json(client, POSTMARK_INBOUND, payload, **basic_auth()).status_code
            )
        except BaseException as exc:  # reported below: a thread's failure must fail the test
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=deliver) for _ in range(times)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert not any(worker.is_alive() for worker in workers)
    assert errors == []
    return statuses


@pytest.mark.django_db(transaction=True)
def test_fault_04_three_concurrent_deliveries_of_one_email_store_one_row(queued):
    scene = open_thread()

    statuses = deliver_concurrently(3, postmark_payload(eml("plain_reply.eml")))

    assert statuses == [200, 200, 200]
    stored = inbound_rows().get()
    assert stored.thread == scene.thread
    assert stored.status == Message.Status.RECEIVED
    assert queued == [stored.pk]


@pytest.mark.django_db(transaction=True)
def test_fault_05_twenty_concurrent_deliveries_store_one_row_and_queue_it_once(queued):
    scene = open_thread()

    statuses = deliver_concurrently(20, postmark_payload(eml("plain_reply.eml")))

    assert statuses == [200] * 20
    stored = inbound_rows().get()
    assert stored.thread == scene.thread
    assert stored.employee == scene.rider
    assert queued == [stored.pk]


# --- 11: a reply that is only an attachment ---------------------------------------------

PHOTO = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + bytes(64)


def attachment_only_raw(subject: str) -> dict[str, object]:
    msg = rider_reply(subject)
    msg.add_attachment(PHOTO, maintype="image", subtype="jpeg", filename="IMG_0412.jpg")
    return postmark_payload(msg.as_bytes())


def attachment_only_fields(subject: str) -> dict[str, object]:
    photo = {
        "Name": "IMG_0412.jpg",
        "Content": base64.b64encode(PHOTO).decode(),
        "ContentType": "image/jpeg",
        "ContentLength": len(PHOTO),
    }
    return postmark_payload(TextBody="", HtmlBody="", Subject=subject, Attachments=[photo])


@pytest.mark.parametrize(
    "payload", [attachment_only_raw, attachment_only_fields], ids=["raw mime", "parsed fields"]
)
def test_fault_11_an_attachment_only_reply_is_a_label_card_for_a_person_not_answered(
    client, queued, run, payload
):
    scene = open_thread()
    # Our own subject coming back is not the rider's words: there is nothing to read.
    subject = f"Re: {scene.outbound.subject}"

    response = post_json(client, POSTMARK_INBOUND, payload(subject), **basic_auth())

    assert response.status_code == 200
    stored = inbound_rows().get()
    assert (stored.thread, stored.employee) == (scene.thread, scene.rider)
    assert stored.text_body.strip() == ""
    assert queued == [stored.pk]

    assert run(process_inbound, stored.pk) == "label_requested"

    card = PendingAction.objects.get()
    assert (card.kind, card.status, card.case, card.message) == (
        PendingAction.Kind.LABEL_REPLY,
        PendingAction.Status.PENDING,
        scene.case,
        stored,
    )
    stored.refresh_from_db()
    assert stored.status == Message.Status.PROCESSED
    assert stored.bucket != "escalation"
    assert stored.classification["reasoning"] == "Nothing to read."
    assert mail.outbox == []  # nothing goes to the rider on its own
    assert Message.objects.filter(direction=Message.Direction.OUTBOUND).count() == 1


# --- 12: hostile HTML ------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">my permit</a>',
    "<svg onload=alert(1)>",
    "<iframe src=//evil.example></iframe>",
]
ESCAPED = [
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&lt;img src=x onerror=alert(1)&gt;",
    "&lt;a href=&quot;javascript:alert(1)&quot;&gt;my permit&lt;/a&gt;",
    "&lt;svg onload=alert(1)&gt;",
    "&lt;iframe src=//evil.example&gt;&lt;/iframe&gt;",
]


def hostile_plain_and_html() -> bytes:
    msg = rider_reply()
    msg.set_content("I still ride the van.\n" + "\n".join(HOSTILE))
    msg.add_alternative("<p>I still ride the van.</p>" + "".join(HOSTILE), subtype="html")
    return msg.as_bytes()


def hostile_html_only() -> bytes:
    """HTML whose text, once its tags are read, is itself markup (entities decoded)."""
    msg = rider_reply()
    shown = "".join(f"<p>{html.escape(value)}</p>" for value in HOSTILE)
    msg.set_content(
        f"<html><body><script>alert(2)</script>{shown}<img src=x onerror=alert(3)></body></html>",
        subtype="html",
    )
    return msg.as_bytes()


@pytest.mark.parametrize(
    "raw", [hostile_plain_and_html, hostile_html_only], ids=["text and html", "html only"]
)
def test_fault_12_hostile_html_in_a_reply_is_shown_escaped_on_the_coordinators_pages(
    client, coordinator, queued, run, raw
):
    scene = open_thread()
    response = post_json(client, POSTMARK_INBOUND, postmark_payload(raw()), **basic_auth())

    assert response.status_code == 200
    stored = inbound_rows().get()
    assert "<script>alert(1)</script>" in stored.text_body  # kept as the rider wrote it
    run(process_inbound, stored.pk)  # whatever it reads as, a card waits for a person
    card = PendingAction.objects.get(message=stored)
    client.force_login(coordinator)

    pages = {
        "case": client.get(f"/cases/{scene.case.case_id}/"),
        "queue": client.get("/"),
        "card": client.get(f"/queue/{card.pk}/"),
    }

    for name, page in pages.items():
        assert page.status_code == 200, name
        shown = page.content.decode()
        assert stored.message_id in shown, name  # the page does show this reply
        for value, escaped in zip(HOSTILE, ESCAPED, strict=True):
            assert value not in shown, (name, value)
            assert escaped in shown, (name, escaped)
        assert "alert(2)" not in shown and "alert(3)" not in shown, name


# --- 13: hostile headers ---------------------------------------------------------------

HOSTILE_SUBJECT = (
    'Re: <b onmouseover="alert(1)">seat</b><script>alert(1)</script>'
    "\r\nBcc: attacker@evil.example\r\n\r\n<img src=x onerror=alert(1)>"
)
HOSTILE_NAME = "<script>alert(1)</script>\r\nX-Injected: yes"


def hostile_headers_raw() -> bytes:
    lines = [
        f"From: {encoded_word(HOSTILE_NAME)} <{RIDER_EMAIL}>",
        f"To: {REPLY_ADDRESS}",
        f"Subject: {encoded_word(HOSTILE_SUBJECT)}",
        "Message-ID: <hostile-headers.0001@mail.example.com>",
        f"In-Reply-To: <{OUR_MESSAGE_ID}>",
        "MIME-Version: 1.0",
        'Content-Type: text/plain; charset="utf-8"',
        "",
        "Got it, thanks. I still ride the van.",
        "",
    ]
    return "\r\n".join(lines).encode()


def test_fault_13_a_hostile_subject_and_sender_name_are_kept_as_text_and_shown_escaped(
    client, coordinator, queued
):
    scene = open_thread()

    response = post_json(
        client, POSTMARK_INBOUND, postmark_payload(hostile_headers_raw()), **basic_auth()
    )

    assert response.status_code == 200
    stored = inbound_rows().get()
    assert stored.status == Message.Status.RECEIVED
    assert (stored.thread, stored.employee) == (scene.thread, scene.rider)
    assert stored.from_email == RIDER_EMAIL
    # The "Bcc:" line stays inside the subject's text: no header was injected.
    assert "<script>alert(1)</script>" in stored.subject
    assert "attacker@evil.example" in stored.subject
    assert stored.cc == [] and stored.to == [REPLY_ADDRESS]
    assert not {"Bcc", "X-Injected"} & set(stored.headers)
    assert queued == [stored.pk]

    client.force_login(coordinator)
    page = client.get(f"/cases/{scene.case.case_id}/").content.decode()
    assert stored.message_id in page
    for raw_markup in ("<script>alert(1)</script>", '<b onmouseover="alert(1)">', "<img src=x"):
        assert raw_markup not in page
    assert "&lt;b onmouseover=&quot;alert(1)&quot;&gt;seat&lt;/b&gt;" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "X-Injected" not in page  # the sender's display name is never shown

    by_case = client.get(f"/api/cases/{scene.case.case_id}/emails")
    by_thread = client.get(f"/api/emails/threads/{scene.thread.thread_id}")
    assert (by_case.status_code, by_thread.status_code) == (200, 200)
    assert by_case["Content-Type"].startswith("application/json")
    for listed in (by_case.json()["results"], by_thread.json()["messages"]):
        (received,) = [m for m in listed if m["message_id"] == stored.message_id]
        # Plain data: the subject as the rider's client decoded it, neither escaped nor cut.
        assert received["subject"] == stored.subject
        assert received["from_email"] == RIDER_EMAIL


def test_fault_13_a_hostile_subject_from_a_stranger_is_escaped_on_the_card_to_match_it(
    client, coordinator, queued
):
    scene = open_thread()
    raw = hostile_headers_raw().replace(RIDER_EMAIL.encode(), b"stranger@evil.example")

    response = post_json(client, POSTMARK_INBOUND, postmark_payload(raw), **basic_auth())

    assert response.status_code == 200
    stored = inbound_rows().get()
    assert stored.thread == scene.thread and stored.employee is None
    assert queued == []  # not a rider of the case: a person decides who sent it
    card = PendingAction.objects.get()
    assert (card.kind, card.message) == (PendingAction.Kind.MATCH_INBOUND, stored)
    assert "<script>alert(1)</script>" in card.payload["subject"]

    client.force_login(coordinator)
    for url in ("/", f"/queue/{card.pk}/"):
        page = client.get(url).content.decode()
        assert "Match an email from stranger@evil.example" in page, url
        assert "<script>alert(1)</script>" not in page and "<img src=x" not in page, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page, url
        assert "&lt;img src=x onerror=alert(1)&gt;" in page, url
