"""Issue 34 probe, 50–56: a delivery the product cannot take now is answered so the
provider sends it again, and a delivery sent again is stored once.

Quarantine is for content the product cannot read. A body the server could
not read, a database locked or gone, a provider's API failing while anymail
fetches the message: each must answer an error the provider retries (4xx or
5xx), never a 200 over an empty or quarantined row. Providers are faked only
at their HTTP API (``requests.get`` in anymail's fetch).
"""

import http.client
import json
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
from django.db import connection
from django.urls import reverse

from outreach import inbound, webhooks
from outreach.models import Message
from tests.faults.support import (
    POSTMARK_INBOUND,
    SECRET,
    basic_auth,
    post_body,
    post_json,
    postmark_payload,
    production_webhooks,
)
from tests.inbound_support import REPLY_ADDRESS, RIDER_EMAIL, email_bytes, open_thread
from tests.qcluster_support import ROOT, process_env

MAILTRAP_INBOUND = reverse("anymail:mailtrap_inbound_webhook")
RESEND_INBOUND = reverse("anymail:resend_inbound_webhook")
SENDGRID_INBOUND = reverse("anymail:sendgrid_inbound_webhook")
MAILJET_INBOUND = reverse("anymail:mailjet_inbound_webhook")


@pytest.fixture(autouse=True)
def queued(settings, monkeypatch):
    """Webhooks as deployed, with the fetching providers' API keys; the pks handed on."""
    production_webhooks(settings)
    settings.ANYMAIL |= {"RESEND_API_KEY": "re_fault_suite", "MAILTRAP_API_TOKEN": "mt-fault"}
    calls: list[int] = []
    monkeypatch.setattr(inbound, "enqueue_inbound_processing", calls.append)
    return calls


def inbound_rows():
    return Message.objects.filter(direction=Message.Direction.INBOUND)


def reply(n: int) -> bytes:
    return email_bytes(body=f"Reply number {n}: I still ride.", message_id=f"<chunk.{n}@x>")


# --- 50: a body sent chunked ---------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_gunicorn(var_dir: Path) -> Iterator[str]:
    """gunicorn (it de-chunks request bodies) on the embedded database in ``var_dir``."""
    port = free_port()
    env = process_env(var_dir, DEBUG="false", WEBHOOK_SECRET=SECRET)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-w", "1", "-b", f"127.0.0.1:{port}", "poolpatrol.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):  # up to a minute to import and bind on a busy machine
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, "gunicorn exited"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def post_chunked(base_url: str, path: str, body: bytes) -> int | None:
    """POST ``body`` with Transfer-Encoding: chunked and no Content-Length.

    None when the server closed the connection before the body was sent
    (a server that refuses early): the provider retries that as any failure.
    """
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    chunks = [body[i : i + 1000] for i in range(0, len(body), 1000)]
    headers = {"Content-Type": "application/json"} | {
        "Authorization": basic_auth()["HTTP_AUTHORIZATION"]
    }
    try:
        conn.request("POST", path, body=iter(chunks), headers=headers, encode_chunked=True)
        return conn.getresponse().status
    except (BrokenPipeError, ConnectionResetError):
        return None
    finally:
        conn.close()


def chunked_delivery(n: int) -> bytes:
    """Three distinct replies, each with Postmark's own id, 1 KB chunks when sent."""
    return json.dumps(postmark_payload(reply(n), MessageID=f"chunked-{n}")).encode()


def stored_raws(database: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(database) as db:
        rows = db.execute(
            "SELECT status, raw FROM outreach_message WHERE direction = 'inbound' ORDER BY id"
        )
        return [(status, raw) for status, raw in rows]


@pytest.mark.slow_process
def test_fault_50_three_chunked_deliveries_under_gunicorn_are_three_replies(migrated_var_dir):
    with running_gunicorn(migrated_var_dir) as url:
        answers = [post_chunked(url, POSTMARK_INBOUND, chunked_delivery(n)) for n in range(3)]

    assert answers == [200, 200, 200]
    rows = stored_raws(migrated_var_dir / "db.sqlite3")
    assert [status for status, _ in rows] == ["received"] * 3
    assert [f"Reply number {n}" in raw for n, (_, raw) in enumerate(rows)] == [True] * 3


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow_process
def test_fault_50_a_server_that_cannot_read_a_chunked_body_answers_411_and_keeps_nothing(
    live_server,
):
    # Django's live server (wsgiref, like runserver) hands a chunked body over unread.
    answers = [
        post_chunked(live_server.url, POSTMARK_INBOUND, chunked_delivery(n)) for n in range(20)
    ]

    # 411 Length Required, or the connection closed with it while the client still
    # sent: never a 2xx, which the provider would not send again.
    assert set(answers) <= {411, None}
    assert 411 in answers
    assert not inbound_rows().exists()


@pytest.mark.django_db
def test_fault_50_an_empty_delivery_is_refused_and_never_a_duplicate(client):
    open_thread()

    empty = [post_body(client, POSTMARK_INBOUND, b"", **basic_auth()) for _ in range(2)]
    sent_again = post_json(client, POSTMARK_INBOUND, postmark_payload(reply(1)), **basic_auth())

    assert [response.status_code for response in empty] == [400, 400]
    assert sent_again.status_code == 200
    assert [row.text_body.strip() for row in inbound_rows()] == ["Reply number 1: I still ride."]


@pytest.mark.django_db
def test_fault_50_quarantined_empty_bytes_are_kept_each_time(client):
    first, created_first = inbound.quarantine(b"", why="nothing came", flag="error")
    second, created_second = inbound.quarantine(b"", why="nothing came", flag="error")

    assert (created_first, created_second) == (True, True)
    assert first.pk != second.pk
    assert first.raw_sha256 == ""


# --- 51, 52: the database locked past its timeout ------------------------------------


@contextmanager
def write_lock_held_elsewhere() -> Iterator[object]:
    """Another connection holds the lock a webhook's write needs, until released."""
    other = connection.get_new_connection(connection.get_connection_params())
    cursor = other.cursor()
    if connection.vendor == "sqlite":
        cursor.execute("BEGIN IMMEDIATE")
    else:  # PostgreSQL: the table every inbound write touches
        cursor.execute("LOCK TABLE outreach_message IN ACCESS EXCLUSIVE MODE")
    try:
        yield other
    finally:
        other.rollback()
        other.close()


@contextmanager
def short_lock_wait() -> Iterator[None]:
    """This connection gives up on a lock after 300 ms instead of waiting for it."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA busy_timeout = 300")
        else:
            cursor.execute("SET lock_timeout = '300ms'")
    try:
        yield
    finally:
        connection.close()  # the next use connects with the configured waits


@pytest.mark.django_db(transaction=True)
def test_fault_51_a_lock_past_the_timeout_answers_503_and_the_retry_is_stored(
    client, monkeypatch, queued
):
    scene = open_thread()
    payload = postmark_payload(reply(1))
    quarantined: list[str] = []
    keep = webhooks.quarantine

    with write_lock_held_elsewhere() as holder, short_lock_wait():

        def lock_gone_then_quarantine(*args, **kwargs):
            # The lock ends between the failed write and the quarantine's, as in the probe.
            holder.rollback()  # type: ignore[attr-defined]
            quarantined.append(str(kwargs.get("why")))
            return keep(*args, **kwargs)

        monkeypatch.setattr(webhooks, "quarantine", lock_gone_then_quarantine)
        during = post_json(client, POSTMARK_INBOUND, payload, **basic_auth())

    retried = post_json(client, POSTMARK_INBOUND, payload, **basic_auth())

    assert (during.status_code, during["Retry-After"]) == (503, "60")
    assert quarantined == []
    assert retried.status_code == 200
    message = inbound_rows().get()
    assert (message.status, message.thread) == (Message.Status.RECEIVED, scene.thread)
    assert queued == [message.pk]


@pytest.mark.django_db(transaction=True)
def test_fault_51_a_bounce_event_during_a_lock_answers_503(client):
    open_thread()
    bounce = {
        "RecordType": "Bounce",
        "Type": "HardBounce",
        "MessageID": "b7bc2f4a-e38e-4336-af7d-e6c392c2f817",
        "Email": RIDER_EMAIL,
        "Description": "mailbox unavailable",
    }

    with write_lock_held_elsewhere(), short_lock_wait():
        response = post_json(client, "/anymail/postmark/tracking/", bounce, **basic_auth())

    assert response.status_code == 503


@pytest.mark.django_db(transaction=True)
def test_fault_52_health_reports_the_database_failing_while_its_write_lock_is_held(client):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's one write lock: PostgreSQL answers reads and writes around a lock")
    with write_lock_held_elsewhere():
        during = client.get("/health")
    after = client.get("/health")

    # Answered while the lock was still held: a health check that waited for it
    # (20 s busy timeout) would have seen it go and answered 200.
    assert during.status_code == 503
    assert during.json()["database"] == {
        "ok": False,
        "vendor": "sqlite",
        "error": "OperationalError",
    }
    assert (after.status_code, after.json()["status"]) == (200, "ok")


# --- 53: /health by the instance's address -------------------------------------------


@pytest.mark.django_db
def test_fault_53_health_answers_a_probe_by_ip_with_its_status_only(client, settings):
    settings.ALLOWED_HOSTS = ["poolpatrol.example.org"]
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_REDIRECT_EXEMPT = [r"^health$"]

    by_ip = client.get("/health", HTTP_HOST="10.0.3.7:8000")
    by_name = client.get("/health", HTTP_HOST="poolpatrol.example.org", secure=True)
    other_page = client.get("/login/", HTTP_HOST="10.0.3.7:8000", secure=True)

    assert (by_ip.status_code, by_ip.json()) == (200, {"status": "ok"})
    assert set(by_name.json()) == {"status", "database", "queue", "waiting_for_a_person"}
    assert other_page.status_code == 400  # only /health is exempt from the Host check


# --- 54: events anymail reads as nothing ---------------------------------------------


@pytest.mark.django_db
def test_fault_54_mailtrap_s_test_your_integration_payload_is_dropped_without_a_5xx(client):
    sample = {
        "events": [
            {
                "event": "inbound_message_received",
                "inbox_id": 1,
                "message_id": "00000000-0000-0000-0000-000000000000",
                "timestamp": 1795453200000,
            }
        ]
    }

    response = post_json(client, MAILTRAP_INBOUND, sample, **basic_auth())

    assert response.status_code == 200
    assert not inbound_rows().exists()


def test_fault_54_a_receiver_handed_no_event_does_nothing():
    assert webhooks.handle_inbound(None, None, "Mailtrap") is None
    assert webhooks.handle_tracking(None, None, "Mailtrap") is None


# --- 55: the provider's API fails while anymail fetches the message ------------------


def api_response(status: int, body: bytes = b"", url: str = "https://api.example/") -> object:
    response = requests.Response()
    response.status_code = status
    response.url = url
    response._content = body
    response._content_consumed = True  # iter_content() serves _content
    return response


class FakeProviderApi:
    """The provider's API at the HTTP boundary: a failure first, then the message."""

    def __init__(self, failure: int | type[Exception], message: dict[str, object]) -> None:
        self.failure: int | type[Exception] | None = failure
        self.message = message
        self.calls: list[str] = []

    def get(self, url: str, **kwargs: object) -> object:
        self.calls.append(url)
        if self.failure is not None:
            if isinstance(self.failure, int):
                return api_response(self.failure, b'{"message": "unavailable"}', url)
            raise self.failure("connection reset by peer")
        if url.endswith("/raw.eml"):
            return api_response(200, reply(55), url)
        return api_response(200, json.dumps(self.message).encode(), url)


def resend_delivery() -> dict[str, object]:
    return {
        "type": "email.received",
        "created_at": "2026-11-23T16:41:07.000Z",
        "data": {"email_id": "4ef9a417-02e9-4d39-ad75-9611e0fcc33c", "to": [REPLY_ADDRESS]},
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    "failure", [503, 403, 429, requests.ConnectionError], ids=["503", "403", "429", "no-answer"]
)
def test_fault_55_resend_s_api_failing_answers_503_and_the_retry_reaches_the_thread(
    client, monkeypatch, queued, failure
):
    scene = open_thread()
    api = FakeProviderApi(failure, {"raw": {"download_url": "https://files.example/raw.eml"}})
    monkeypatch.setattr("anymail.webhooks.resend.requests.get", api.get)
    delivery = {"HTTP_SVIX_ID": "msg_2pFAKEsvixid0001"} | basic_auth()

    during = post_json(client, RESEND_INBOUND, resend_delivery(), **delivery)
    assert (during.status_code, inbound_rows().count()) == (503, 0)

    api.failure = None
    retried = post_json(client, RESEND_INBOUND, resend_delivery(), **delivery)

    assert retried.status_code == 200
    message = inbound_rows().get()
    assert (message.thread, message.provider_message_id) == (scene.thread, "msg_2pFAKEsvixid0001")
    assert "Reply number 55" in message.text_body
    assert queued == [message.pk]


@pytest.mark.django_db
def test_fault_55_mailtrap_s_raw_download_failing_answers_503_then_stores_it(
    client, monkeypatch, queued
):
    scene = open_thread()
    api = FakeProviderApi(503, {"raw_message_url": "https://mailtrap-s3.example/raw.eml"})
    monkeypatch.setattr("anymail.webhooks.mailtrap.requests.get", api.get)
    event = {"event": "inbound.message_received", "inbox_id": 4242, "message_id": "m-55"}

    during = post_json(client, MAILTRAP_INBOUND, {"events": [event]}, **basic_auth())
    api.failure = None
    retried = post_json(client, MAILTRAP_INBOUND, {"events": [event]}, **basic_auth())

    assert (during.status_code, retried.status_code) == (503, 200)
    message = inbound_rows().get()
    assert (message.thread, message.provider_message_id) == (scene.thread, "4242/m-55")


@pytest.mark.django_db
def test_fault_55_a_message_the_provider_says_does_not_exist_is_kept_for_a_person(
    client, monkeypatch
):
    api = FakeProviderApi(404, {})
    monkeypatch.setattr("anymail.webhooks.resend.requests.get", api.get)

    response = post_json(client, RESEND_INBOUND, resend_delivery(), **basic_auth())

    assert response.status_code == 200
    assert inbound_rows().get().status == Message.Status.QUARANTINED


# --- 56: redeliveries anymail serialises again ---------------------------------------

SENDGRID_HEADERS = (
    f"From: Pat Rivera <{RIDER_EMAIL}>\n"
    f"To: {REPLY_ADDRESS}\n"
    "Subject: Re: Your vanpool seat\n"
    "Date: Mon, 23 Nov 2026 08:41:07 -0800\n"
    "MIME-Version: 1.0\n"
)


@pytest.mark.django_db
@pytest.mark.filterwarnings("ignore::anymail.exceptions.AnymailNotSupportedWarning")
def test_fault_56_a_sendgrid_parsed_redelivery_without_a_message_id_is_stored_once(client, queued):
    scene = open_thread()
    fields = {
        "headers": SENDGRID_HEADERS,
        "text": "Still riding, thanks.",
        "html": "<p>Still riding, thanks.</p>",
        "from": f"Pat Rivera <{RIDER_EMAIL}>",
        "to": REPLY_ADDRESS,
        "subject": "Re: Your vanpool seat",
        "envelope": json.dumps({"from": RIDER_EMAIL, "to": [REPLY_ADDRESS]}),
        "charsets": json.dumps({"text": "utf-8", "html": "utf-8", "subject": "utf-8"}),
    }

    answers = [client.post(SENDGRID_INBOUND, fields, **basic_auth()).status_code for _ in range(3)]

    assert answers == [200, 200, 200]
    message = inbound_rows().get()
    assert message.thread == scene.thread
    assert queued == [message.pk]


@pytest.mark.django_db
def test_fault_56_a_mailjet_redelivery_is_stored_once(client, queued):
    scene = open_thread()
    payload = {
        "Sender": RIDER_EMAIL,
        "Recipient": REPLY_ADDRESS,
        "From": f"Pat Rivera <{RIDER_EMAIL}>",
        "Subject": "Re: Your vanpool seat",
        "Headers": {
            "From": f"Pat Rivera <{RIDER_EMAIL}>",
            "To": REPLY_ADDRESS,
            "Subject": "Re: Your vanpool seat",
            "Date": "Mon, 23 Nov 2026 08:41:07 -0800",
        },
        "Parts": [
            {"Headers": {"Content-Type": "text/plain"}, "ContentRef": "Text-part"},
            {"Headers": {"Content-Type": "text/html"}, "ContentRef": "Html-part"},
        ],
        "Text-part": "Still riding, thanks.",
        "Html-part": "<p>Still riding, thanks.</p>",
        "SpamAssassinScore": "0.0",
    }

    answers = [post_json(client, MAILJET_INBOUND, payload, **basic_auth()) for _ in range(3)]

    assert [answer.status_code for answer in answers] == [200, 200, 200]
    message = inbound_rows().get()
    assert message.thread == scene.thread
    assert queued == [message.pk]
