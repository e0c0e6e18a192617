"""The provider's webhooks through anymail: authenticated, stored once, never a retry storm."""

import base64
import hashlib
import hmac
import json

import pytest
import requests
from anymail.exceptions import AnymailInsecureWebhookWarning
from django.db import (
    DatabaseError,
    DataError,
    IntegrityError,
    InterfaceError,
    InternalError,
    OperationalError,
)
from django.urls import reverse

from cases.models import CaseEvent
from outreach import inbound, webhooks
from outreach.models import Message
from tests.inbound_support import (
    OUR_MESSAGE_ID,
    OUR_PROVIDER_ID,
    REPLY_ADDRESS,
    RIDER_EMAIL,
    eml,
    open_thread,
)

pytestmark = pytest.mark.django_db

SECRET = "esp:webhook-secret-for-tests"
MAILGUN_KEY = "mailgun-signing-key-for-tests"
POSTMARK_INBOUND = reverse("anymail:postmark_inbound_webhook")
POSTMARK_TRACKING = reverse("anymail:postmark_tracking_webhook")
MAILGUN_INBOUND_MIME = "/anymail/mailgun/inbound_mime/"
SENDGRID_INBOUND = reverse("anymail:sendgrid_inbound_webhook")


def basic_auth(secret: str = SECRET) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(secret.encode()).decode()}


@pytest.fixture(autouse=True)
def production_like(settings):
    settings.DEBUG = False
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET], "MAILGUN_WEBHOOK_SIGNING_KEY": MAILGUN_KEY}


@pytest.fixture(autouse=True)
def queued(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(inbound, "enqueue_inbound_processing", calls.append)
    return calls


def postmark_inbound(raw: bytes | None = None, **fields: object) -> dict[str, object]:
    """Postmark's inbound JSON; with ``raw``, "include raw email" is on."""
    payload: dict[str, object] = {
        "FromName": "Pat Rivera",
        "From": RIDER_EMAIL,
        "FromFull": {"Email": RIDER_EMAIL, "Name": "Pat Rivera", "MailboxHash": ""},
        "To": REPLY_ADDRESS,
        "ToFull": [{"Email": REPLY_ADDRESS, "Name": "", "MailboxHash": ""}],
        "OriginalRecipient": REPLY_ADDRESS,
        "Subject": "Re: Your vanpool seat: please confirm your details",
        "MessageID": "a8c1040e-cc41-4d32-8a3a-3e4b0c8f2d11",
        "Date": "Mon, 23 Nov 2026 08:41:07 -0800",
        "TextBody": "Got it, thanks. I still ride VP-101.",
        "HtmlBody": "",
        "Headers": [
            {"Name": "Return-Path", "Value": f"<{RIDER_EMAIL}>"},
            {"Name": "Message-ID", "Value": "<pm-fields.0001@mail.example.com>"},
            {"Name": "In-Reply-To", "Value": f"<{OUR_MESSAGE_ID}>"},
        ],
        "Attachments": [],
    }
    if raw is not None:
        payload["RawEmail"] = raw.decode("utf-8")
    return payload | fields


def post_json(client, url: str, payload: dict[str, object], **extra: str):
    return client.post(url, json.dumps(payload), content_type="application/json", **extra)


def inbound_messages():
    return Message.objects.filter(direction=Message.Direction.INBOUND)


# --- Who may call --------------------------------------------------------------------


def test_a_wrong_secret_is_refused_and_nothing_is_stored(client):
    open_thread()

    response = post_json(
        client, POSTMARK_INBOUND, postmark_inbound(eml("plain_reply.eml")), **basic_auth("esp:no")
    )

    assert response.status_code == 400
    assert not inbound_messages().exists()


def test_a_call_without_credentials_is_refused(client):
    response = post_json(client, POSTMARK_INBOUND, postmark_inbound(eml("plain_reply.eml")))

    assert response.status_code == 400
    assert not inbound_messages().exists()


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("post", POSTMARK_INBOUND),
        ("post", POSTMARK_TRACKING),
        ("post", MAILGUN_INBOUND_MIME),
        ("post", SENDGRID_INBOUND),
        ("head", POSTMARK_INBOUND),
    ],
)
def test_without_a_secret_outside_debug_every_webhook_is_refused(client, settings, method, url):
    settings.ANYMAIL = {}
    open_thread()

    if method == "head":  # how some providers check the URL when it is configured
        response = client.head(url)
    else:
        response = post_json(client, url, postmark_inbound(eml("plain_reply.eml")))

    assert response.status_code == 403
    if method == "post":
        assert b"WEBHOOK_SECRET is not set" in response.content
    assert not inbound_messages().exists()


def test_without_a_secret_in_debug_the_webhook_works_with_anymail_s_warning(client, settings):
    settings.DEBUG = True
    settings.ANYMAIL = {}
    open_thread()

    with pytest.warns(AnymailInsecureWebhookWarning):
        response = post_json(client, POSTMARK_INBOUND, postmark_inbound(eml("plain_reply.eml")))

    assert response.status_code == 200
    assert inbound_messages().count() == 1


# --- What the providers send ---------------------------------------------------------


def test_postmark_with_raw_email_stores_the_raw_message_once_per_delivery(client, queued):
    scene = open_thread()
    raw = eml("plain_reply.eml")

    responses = [
        post_json(client, POSTMARK_INBOUND, postmark_inbound(raw), **basic_auth()) for _ in range(3)
    ]

    assert [response.status_code for response in responses] == [200, 200, 200]
    message = inbound_messages().get()
    assert message.thread == scene.thread
    assert message.provider_message_id == "a8c1040e-cc41-4d32-8a3a-3e4b0c8f2d11"
    assert message.rfc_message_id == "CAPlainReply.0001@mail.example.com"
    assert message.raw_sha256 == hashlib.sha256(raw).hexdigest()
    assert message.headers["X-Pool-Patrol-Received-Via"] == "postmark"
    assert queued == [message.pk]


def test_postmark_without_raw_email_is_read_from_its_fields(client, queued):
    scene = open_thread()

    response = post_json(client, POSTMARK_INBOUND, postmark_inbound(), **basic_auth())

    assert response.status_code == 200
    message = inbound_messages().get()
    assert message.thread == scene.thread
    assert message.employee == scene.rider
    assert message.text_body == "Got it, thanks. I still ride VP-101."
    assert message.rfc_message_id == "pm-fields.0001@mail.example.com"
    assert message.in_reply_to == OUR_MESSAGE_ID
    assert queued == [message.pk]


def mailgun_signed(fields: dict[str, str], token: str = "mg-token-1") -> dict[str, str]:
    timestamp = "1795453200"
    signature = hmac.new(
        MAILGUN_KEY.encode(), f"{timestamp}{token}".encode(), hashlib.sha256
    ).hexdigest()
    return fields | {"timestamp": timestamp, "token": token, "signature": signature}


def test_mailgun_raw_mime_is_stored_and_a_resend_with_a_new_token_is_recognised(client, queued):
    scene = open_thread()
    fields = {
        "body-mime": eml("plain_reply.eml").decode(),
        "recipient": REPLY_ADDRESS,
        "sender": RIDER_EMAIL,
    }

    first = client.post(MAILGUN_INBOUND_MIME, mailgun_signed(fields, "mg-token-1"), **basic_auth())
    again = client.post(MAILGUN_INBOUND_MIME, mailgun_signed(fields, "mg-token-2"), **basic_auth())

    assert (first.status_code, again.status_code) == (200, 200)
    message = inbound_messages().get()
    assert message.thread == scene.thread
    assert message.provider_message_id == "mg-token-1"
    assert message.raw.startswith("Return-Path:")
    assert queued == [message.pk]


@pytest.mark.filterwarnings("ignore::anymail.exceptions.AnymailNotSupportedWarning")
def test_sendgrid_raw_mime_without_a_provider_id_is_still_stored_once(client):
    scene = open_thread()
    fields = {
        "email": eml("spanish_reply.eml").decode(),
        "envelope": json.dumps({"from": "maria.lopez@example.com", "to": [REPLY_ADDRESS]}),
    }

    for _ in range(2):
        assert client.post(SENDGRID_INBOUND, fields, **basic_auth()).status_code == 200

    message = inbound_messages().get()
    assert message.thread == scene.thread
    assert message.provider_message_id == ""
    assert message.flags == ["unknown_sender"]  # María is not a rider of this case


# --- Nothing makes the provider retry a poison message -------------------------------


def test_an_unparseable_delivery_is_quarantined_and_acknowledged(client):
    payload = postmark_inbound(RawEmail="\x00\x01 not an email at all", FromFull=None, ToFull=[])

    response = post_json(client, POSTMARK_INBOUND, payload, **basic_auth())

    assert response.status_code == 200
    message = inbound_messages().get()
    assert (message.status, message.flags) == ("quarantined", ["unparseable"])
    assert message.provider_message_id == "a8c1040e-cc41-4d32-8a3a-3e4b0c8f2d11"


def test_a_bug_while_storing_quarantines_the_message_and_acknowledges_it(client, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug in our code")

    monkeypatch.setattr(webhooks, "receive_message", broken)

    response = post_json(
        client, POSTMARK_INBOUND, postmark_inbound(eml("plain_reply.eml")), **basic_auth()
    )

    assert response.status_code == 200
    message = inbound_messages().get()
    assert (message.status, message.flags) == ("quarantined", ["error"])
    assert message.last_error == "RuntimeError: a bug in our code"
    assert message.raw.startswith("Return-Path:")


def test_when_not_even_the_quarantine_can_be_written_the_provider_keeps_the_message(
    client, monkeypatch
):
    def down(*args, **kwargs):
        raise DatabaseError("the database is down")

    monkeypatch.setattr(webhooks, "receive_message", down)
    monkeypatch.setattr(webhooks, "quarantine", down)

    # An error response: the provider's retry is the only copy left.
    with pytest.raises(DatabaseError):
        post_json(
            client, POSTMARK_INBOUND, postmark_inbound(eml("plain_reply.eml")), **basic_auth()
        )


# --- Delivery events -----------------------------------------------------------------


def postmark_bounce(**fields: object) -> dict[str, object]:
    return {
        "RecordType": "Bounce",
        "ID": 4323372036854775807,
        "Type": "HardBounce",
        "TypeCode": 1,
        "MessageID": OUR_PROVIDER_ID,
        "Description": "The server was unable to deliver your message.",
        "Details": "smtp;550 5.1.1 The email account that you tried to reach does not exist.",
        "Email": RIDER_EMAIL,
        "BouncedAt": "2026-11-20T17:00:05Z",
    } | fields


def test_a_bounce_event_marks_the_rider_undeliverable_and_flags_the_case(client):
    scene = open_thread()

    response = post_json(client, POSTMARK_TRACKING, postmark_bounce(), **basic_auth())

    assert response.status_code == 200
    scene.rider.refresh_from_db()
    assert scene.rider.email_undeliverable_at is not None
    scene.case.refresh_from_db()
    assert scene.case.meta["flags"] == [f"bounced:{scene.rider.employee_id}"]
    assert "unable to deliver" in CaseEvent.objects.get(case=scene.case).note


def test_a_rejected_event_counts_as_a_bounce(client):
    scene = open_thread()

    post_json(client, POSTMARK_TRACKING, postmark_bounce(Type="BadEmailAddress"), **basic_auth())

    scene.rider.refresh_from_db()
    assert scene.rider.email_undeliverable_at is not None


@pytest.mark.parametrize(
    "payload",
    [
        {"RecordType": "Delivery", "MessageID": OUR_PROVIDER_ID, "Recipient": RIDER_EMAIL},
        {"RecordType": "Open", "MessageID": OUR_PROVIDER_ID, "Recipient": RIDER_EMAIL},
        postmark_bounce(MessageID="not-one-of-ours"),
    ],
    ids=["delivered", "opened", "someone-else-s-bounce"],
)
def test_other_events_change_nothing(client, payload):
    scene = open_thread()

    response = post_json(client, POSTMARK_TRACKING, payload, **basic_auth())

    assert response.status_code == 200
    scene.rider.refresh_from_db()
    assert scene.rider.email_undeliverable_at is None
    assert not CaseEvent.objects.exists()


def test_a_bug_while_recording_a_bounce_event_is_logged_not_retried(client, monkeypatch, caplog):
    open_thread()

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in our code")

    monkeypatch.setattr(webhooks, "record_bounce", broken)

    response = post_json(client, POSTMARK_TRACKING, postmark_bounce(), **basic_auth())

    assert response.status_code == 200
    assert "bounced event for" in caplog.text


# --- What may pass: answered 503 so the provider retries -----------------------------


def http_error(status: int) -> requests.HTTPError:
    response = requests.Response()
    response.status_code = status
    return requests.HTTPError(f"{status} from the provider's API", response=response)


class BotoShapedError(Exception):
    """botocore's ClientError carries the HTTP status in ``response`` (SES's S3 download)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"S3 answered {status}")
        self.response = {"Error": {"Code": "x"}, "ResponseMetadata": {"HTTPStatusCode": status}}


@pytest.mark.parametrize(
    ("error", "passes"),
    [
        (OperationalError("database is locked"), True),
        (InterfaceError("connection already closed"), True),
        (InternalError("current transaction is aborted"), True),
        (DataError("A string literal cannot contain NUL (0x00) characters."), False),
        (IntegrityError("UNIQUE constraint failed"), False),
        (http_error(503), True),
        (http_error(403), True),
        (http_error(429), True),
        (http_error(404), False),
        (http_error(400), False),
        (requests.ConnectionError("connection reset"), True),
        (requests.Timeout("read timed out"), True),
        (BotoShapedError(503), True),
        (BotoShapedError(404), False),
        (ValueError("not an email"), False),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
)
def test_it_retries_what_may_pass_and_keeps_what_will_not(error, passes):
    assert webhooks.may_pass(error) is passes


def test_a_fetch_error_raised_inside_anymail_s_parser_is_found_by_its_cause():
    try:
        try:
            raise http_error(502)
        except requests.HTTPError as exc:
            raise ValueError("could not parse the message") from exc
    except ValueError as wrapped:
        assert webhooks.may_pass(wrapped)
