"""Faults 6–10: large mail, poison payloads and odd bytes on the inbound webhook.

Each delivery carries the right secret: the provider will retry anything but
a 2xx for hours and then drop the mail, so nothing here may end as an error.
"""

import hashlib
import json

import pytest

from outreach import inbound
from outreach.models import Message
from tests.faults.support import (
    POSTMARK_INBOUND,
    basic_auth,
    post_body,
    post_json,
    postmark_payload,
    production_webhooks,
)
from tests.inbound_support import email_bytes, open_thread

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _webhooks(settings, monkeypatch):
    production_webhooks(settings)
    monkeypatch.setattr(inbound, "enqueue_inbound_processing", lambda pk: None)


def inbound_rows():
    return Message.objects.filter(direction=Message.Direction.INBOUND)


def email_of_size(size: int) -> bytes:
    """A rider's reply carrying a photo of ``size`` bytes (base64 lines, as mail clients send)."""
    line = b"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw\r\n"
    photo = line * (size // len(line) + 1)
    head = (
        b"From: Pat Rivera <pat.rivera@example.com>\r\n"
        b"To: reply+5f1c0d3a9b8e7f6a5b4c3d2e1f0a9b8c7d6e5f40@replies.poolpatrol.example\r\n"
        b"Subject: Re: Your vanpool seat\r\nMessage-ID: <photo.%d@mail.example.com>\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b1\r\n\r\n"
        b"--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
        b"Here is my new parking permit, I moved to the Oakland lot.\r\n"
        b"--b1\r\nContent-Type: image/png; name=permit.png\r\n"
        b"Content-Disposition: attachment; filename=permit.png\r\n"
        b"Content-Transfer-Encoding: base64\r\n\r\n"
    ) % size
    return head + photo + b"--b1--\r\n"


@pytest.mark.parametrize("megabytes", [3, 10])
def test_fault_06_mail_of_3_and_10_mb_is_stored_cut_with_a_flag_and_acknowledged(
    client, settings, megabytes
):
    scene = open_thread()
    raw = email_of_size(megabytes * 1024 * 1024)

    response = post_json(client, POSTMARK_INBOUND, postmark_payload(raw), **basic_auth())

    assert response.status_code == 200
    message = inbound_rows().get()
    assert message.thread == scene.thread
    assert message.status == Message.Status.RECEIVED
    assert "truncated" in message.flags
    assert len(message.raw.encode()) <= settings.INBOUND_RAW_MAX_BYTES
    assert message.raw_sha256 == hashlib.sha256(raw).hexdigest()  # the whole message's identity
    assert message.text_body.startswith("Here is my new parking permit")


def test_fault_07_a_body_over_the_inbound_limit_is_refused_before_it_is_read(client, settings):
    settings.INBOUND_MAX_BYTES = 2 * 1024 * 1024
    raw = email_of_size(3 * 1024 * 1024)

    response = post_json(client, POSTMARK_INBOUND, postmark_payload(raw), **basic_auth())

    assert response.status_code == 413
    assert b"at most 2,097,152 bytes" in response.content
    assert not inbound_rows().exists()


def test_fault_07_other_paths_keep_the_small_form_limit(client, coordinator):
    client.force_login(coordinator)

    response = post_body(client, "/api/cases/", b"{" + b" " * 3_000_000 + b"}")

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"


# An empty body is not poison but nothing at all: refused so the provider sends it
# again (test_deliveries_retried.py, 50).
POISON = {
    "malformed JSON": b'{"From": "pat.rivera@example.com", "TextBody": ',
    "an empty list": b"[]",
    "null": b"null",
    "a JSON string": b'"just a string"',
    "bytes that are not UTF-8": b'{"TextBody": "caf\xe9 \xff\xfe"}',
    "Headers that is not a list": json.dumps(postmark_payload(Headers="X-Spam: yes")).encode(),
    "FromFull that is a string": json.dumps(postmark_payload(FromFull="pat@example.com")).encode(),
}


@pytest.mark.parametrize("body", POISON.values(), ids=POISON.keys())
def test_fault_09_a_poison_payload_with_the_secret_is_kept_raw_and_acknowledged(client, body):
    response = post_body(client, POSTMARK_INBOUND, body, **basic_auth())

    assert response.status_code == 200
    kept = inbound_rows().get()
    assert kept.status == Message.Status.QUARANTINED
    assert "undecodable_delivery" in kept.flags
    assert kept.raw_sha256 == hashlib.sha256(body).hexdigest()
    assert "/anymail/postmark/inbound/" in kept.last_error


def test_fault_10_the_same_poison_delivered_again_is_kept_once(client):
    for _ in range(3):
        assert post_body(client, POSTMARK_INBOUND, b"[]", **basic_auth()).status_code == 200

    assert inbound_rows().count() == 1


def test_fault_10_poison_without_the_secret_is_refused_and_nothing_is_kept(client):
    response = post_body(client, POSTMARK_INBOUND, b"[]", **basic_auth("esp:wrong"))

    assert response.status_code == 400
    assert not inbound_rows().exists()


@pytest.mark.parametrize(
    ("charset", "text"),
    [
        ("iso-8859-1", "Merci, c'est noté. Je reste à Fremont."),
        ("windows-1252", "Thanks — I’m still on the 6:30 van."),
        ("shift_jis", "承知しました。引き続き利用します。"),
        ("koi8-r", "Спасибо, всё верно."),
    ],
)
def test_fault_08_mail_in_legacy_charsets_is_read_as_the_rider_wrote_it(charset, text):
    open_thread()
    raw = email_bytes(body="BODY").replace(b'charset="utf-8"', f'charset="{charset}"'.encode())
    raw = raw.replace(b"BODY", text.encode(charset))

    message, created = inbound.receive_raw(raw, provider="postmark")

    assert created
    assert message.text_body.strip() == text
