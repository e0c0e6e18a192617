"""Issue 34 points 16 and 20: each provider's real payload shape, through the product end to end.

One rider's reply to an open case, delivered the way each provider anymail
receives from delivers it (field names and nesting as in the provider's
documentation and anymail's parsers), authenticated the way that provider
authenticates: basic auth everywhere, and Mailgun's HMAC, Postal's RSA
signature (a key made here), Mandrill's URL signature, MailerSend's and
Mailtrap's body HMAC, Resend's Svix signature, SES's SNS headers. Only the
provider's own API is faked, by a local HTTP server: S3 for SES, Mailtrap's
and Resend's message APIs.

Each must end as 200, one received row on the case's thread, the rider as its
sender and the reply's text intact; where the provider ships the raw MIME,
the stored raw message is those bytes (its hash too), not anymail's
re-serialisation.
"""

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from outreach import inbound
from outreach.models import Message
from tests.inbound_support import OUR_MESSAGE_ID, REPLY_ADDRESS, RIDER_EMAIL, Scene, open_thread
from tests.provider_support import (
    MAILERSEND_INBOUND,
    MAILGUN_KEY,
    MANDRILL_KEY,
    RESEND_SECRET,
    SECRET,
    basic_auth,
    complete_settings,
    postal_signature,
)

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.filterwarnings("ignore::anymail.exceptions.AnymailNotSupportedWarning"),
]

REPLY_TEXT = "Thanks, that\u2019s right \u2014 I still ride VP-101 every weekday."
REPLY_HTML = f'<div dir="ltr">{REPLY_TEXT}</div>'
SUBJECT = "Re: Your vanpool seat: please confirm your details"
MESSAGE_ID = "CAPatReply.4242@mail.example.com"
BOUNDARY = "00000000000054a1b2c3d4e5f6"
HEADERS = [
    ("Return-Path", f"<{RIDER_EMAIL}>"),
    ("Received", "from mail.example.com (mail.example.com [203.0.113.7]) by mx.example.net"),
    ("MIME-Version", "1.0"),
    ("From", f'"Pat Rivera" <{RIDER_EMAIL}>'),
    ("To", REPLY_ADDRESS),
    ("Subject", SUBJECT),
    ("Date", "Mon, 23 Nov 2026 08:41:07 -0800"),
    ("Message-ID", f"<{MESSAGE_ID}>"),
    ("In-Reply-To", f"<{OUR_MESSAGE_ID}>"),
    ("References", f"<{OUR_MESSAGE_ID}>"),
    ("Content-Type", f'multipart/alternative; boundary="{BOUNDARY}"'),
]
QP_TEXT = "Thanks, that=E2=80=99s right =E2=80=94 I still ride VP-101 every weekday."
RAW = "\r\n".join(
    [f"{name}: {value}" for name, value in HEADERS]
    + [
        "",
        f"--{BOUNDARY}",
        'Content-Type: text/plain; charset="UTF-8"',
        "Content-Transfer-Encoding: quoted-printable",
        "",
        QP_TEXT,
        "",
        f"--{BOUNDARY}",
        'Content-Type: text/html; charset="UTF-8"',
        "Content-Transfer-Encoding: quoted-printable",
        "",
        f'<div dir=3D"ltr">{QP_TEXT}</div>',
        "",
        f"--{BOUNDARY}--",
        "",
    ]
).encode("ascii")
HEADER_BLOCK = "".join(f"{name}: {value}\r\n" for name, value in HEADERS)
NOW = 1795453200  # the suite's frozen clock, 2026-11-23 17:00 UTC


@pytest.fixture(autouse=True)
def queued(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(inbound, "enqueue_inbound_processing", calls.append)
    return calls


@pytest.fixture
def scene() -> Scene:
    return open_thread()


def configure(settings, provider: str, **extra: object) -> None:
    settings.DEBUG = False
    settings.EMAIL_PROVIDER = [provider]
    settings.ANYMAIL = complete_settings(provider) | extra


def assert_one_reply_on_the_thread(scene: Scene, queued: list[int], raw: bytes | None) -> Message:
    """One received row on the case's thread, from its rider, text intact, queued to be read."""
    message = Message.objects.get(direction=Message.Direction.INBOUND)
    assert message.status == Message.Status.RECEIVED, message.last_error
    assert message.thread == scene.thread
    assert message.employee == scene.rider
    assert message.from_email == RIDER_EMAIL
    assert message.text_body.strip() == REPLY_TEXT
    assert message.subject == SUBJECT
    assert message.rfc_message_id == MESSAGE_ID
    assert queued == [message.pk]
    if raw is not None:  # what the provider sent, byte for byte
        assert message.raw == raw.decode("utf-8")
        assert message.raw_sha256 == hashlib.sha256(raw).hexdigest()
    return message


def post_json(client, route: str, body: bytes, **extra: str):
    return client.generic(
        "POST", route, body, content_type=extra.pop("content_type", "application/json"), **extra
    )


# --- A provider's API, on this machine ----------------------------------------------------


@dataclass
class FakeApi:
    """A provider's HTTP API: GET path -> (content type, body); the requests it saw."""

    url: str
    routes: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    seen: list[tuple[str, str]] = field(default_factory=list)  # (path, Authorization)


@pytest.fixture
def provider_api() -> Iterator[FakeApi]:
    api = FakeApi(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            api.seen.append((self.path, self.headers.get("Authorization", "")))
            content_type, body = api.routes.get(self.path, ("text/plain", b""))
            self.send_response(200 if self.path in api.routes else 404)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    api.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield api
    server.shutdown()
    server.server_close()


# --- Postmark -----------------------------------------------------------------------------


def postmark_payload(raw: bytes | None) -> dict[str, object]:
    payload: dict[str, object] = {
        "FromName": "Pat Rivera",
        "MessageStream": "inbound",
        "From": RIDER_EMAIL,
        "FromFull": {"Email": RIDER_EMAIL, "Name": "Pat Rivera", "MailboxHash": ""},
        "To": REPLY_ADDRESS,
        "ToFull": [{"Email": REPLY_ADDRESS, "Name": "", "MailboxHash": ""}],
        "Cc": "",
        "CcFull": [],
        "Bcc": "",
        "BccFull": [],
        "OriginalRecipient": REPLY_ADDRESS,
        "Subject": SUBJECT,
        "MessageID": "22c74902-a0c1-4511-804f-341342852c90",
        "ReplyTo": "",
        "MailboxHash": "",
        "Date": "Mon, 23 Nov 2026 08:41:07 -0800",
        "TextBody": REPLY_TEXT,
        "HtmlBody": REPLY_HTML,
        "StrippedTextReply": REPLY_TEXT,
        "Tag": "",
        "Headers": [
            {"Name": name, "Value": value}
            for name, value in HEADERS
            if name not in {"From", "To", "Subject", "Date", "Content-Type", "MIME-Version"}
        ],
        "Attachments": [],
    }
    if raw is not None:
        payload["RawEmail"] = raw.decode("ascii")
    return payload


@pytest.mark.parametrize("raw", [None, RAW], ids=["fields", "raw-email"])
def test_fault_87_postmark_inbound(client, settings, scene, queued, raw):
    configure(settings, "postmark")

    body = json.dumps(postmark_payload(raw)).encode()
    response = post_json(client, "/anymail/postmark/inbound/", body, **basic_auth())

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, raw)


# --- Mailgun (HMAC of timestamp and token) ---------------------------------------------------


def mailgun_signature(token: str) -> dict[str, str]:
    signature = hmac.new(MAILGUN_KEY.encode(), f"{NOW}{token}".encode(), hashlib.sha256)
    return {"timestamp": str(NOW), "token": token, "signature": signature.hexdigest()}


def test_fault_87_mailgun_inbound_parsed_fields(client, settings, scene, queued):
    configure(settings, "mailgun")
    fields = {
        "recipient": REPLY_ADDRESS,
        "sender": RIDER_EMAIL,
        "from": f"Pat Rivera <{RIDER_EMAIL}>",
        "subject": SUBJECT,
        "body-plain": REPLY_TEXT + "\r\n",
        "stripped-text": REPLY_TEXT,
        "stripped-signature": "",
        "body-html": REPLY_HTML,
        "stripped-html": REPLY_HTML,
        "message-headers": json.dumps([[name, value] for name, value in HEADERS]),
        "Message-Id": f"<{MESSAGE_ID}>",
        "In-Reply-To": f"<{OUR_MESSAGE_ID}>",
        "X-Mailgun-Incoming": "Yes",
    } | mailgun_signature("7a3c1f0e9b2d4c6a8e1f3b5d7c9a0e2f4b6d8c1a3e5f7b9d0c")

    response = client.post("/anymail/mailgun/inbound/", fields, **basic_auth())

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, raw=None)


def test_fault_87_mailgun_inbound_raw_mime(client, settings, scene, queued):
    configure(settings, "mailgun")
    fields = {
        "recipient": REPLY_ADDRESS,
        "sender": RIDER_EMAIL,
        "from": f"Pat Rivera <{RIDER_EMAIL}>",
        "subject": SUBJECT,
        "body-mime": RAW.decode(),
    } | mailgun_signature("0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c")

    response = client.post("/anymail/mailgun/inbound_mime/", fields, **basic_auth())

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, RAW)


# --- SendGrid -------------------------------------------------------------------------------


def test_fault_87_sendgrid_inbound_parsed_fields(client, settings, scene, queued):
    configure(settings, "sendgrid")
    fields = {
        "headers": HEADER_BLOCK,
        "dkim": "{@example.com : pass}",
        "to": REPLY_ADDRESS,
        "from": f"Pat Rivera <{RIDER_EMAIL}>",
        "text": REPLY_TEXT + "\r\n",
        "html": REPLY_HTML,
        "sender_ip": "203.0.113.7",
        "envelope": json.dumps({"to": [REPLY_ADDRESS], "from": RIDER_EMAIL}),
        "attachments": "0",
        "subject": SUBJECT,
        "charsets": json.dumps(
            {"to": "UTF-8", "html": "UTF-8", "subject": "UTF-8", "from": "UTF-8", "text": "UTF-8"}
        ),
        "SPF": "pass",
        "spam_score": "0.1",
    }

    response = client.post("/anymail/sendgrid/inbound/", fields, **basic_auth())

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, raw=None)


def test_fault_87_sendgrid_inbound_send_raw(client, settings, scene, queued):
    configure(settings, "sendgrid")
    fields = {
        "email": RAW.decode(),
        "to": REPLY_ADDRESS,
        "from": f"Pat Rivera <{RIDER_EMAIL}>",
        "subject": SUBJECT,
        "sender_ip": "203.0.113.7",
        "envelope": json.dumps({"to": [REPLY_ADDRESS], "from": RIDER_EMAIL}),
        "charsets": json.dumps({"to": "UTF-8", "subject": "UTF-8", "from": "UTF-8"}),
        "SPF": "pass",
        "dkim": "{@example.com : pass}",
        "spam_score": "0.1",
    }

    response = client.post("/anymail/sendgrid/inbound/", fields, **basic_auth())

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, RAW)


# --- Amazon SES (an SNS notification; SNS headers checked as anymail checks them) ------------


def ses_event(action: dict[str, object], content: str | None) -> dict[str, object]:
    event: dict[str, object] = {
        "notificationType": "Received",
        "mail": {
            "timestamp": "2026-11-23T16:41:08.636Z",
            "source": RIDER_EMAIL,
            "messageId": "jili9m351il3gkburn7o2f0u6788stij94c8ld01",
            "destination": [REPLY_ADDRESS],
            "headersTruncated": False,
            "headers": [{"name": name, "value": value} for name, value in HEADERS],
            "commonHeaders": {
                "returnPath": RIDER_EMAIL,
                "from": [f'"Pat Rivera" <{RIDER_EMAIL}>'],
                "date": "Mon, 23 Nov 2026 08:41:07 -0800",
                "to": [REPLY_ADDRESS],
                "messageId": f"<{MESSAGE_ID}>",
                "subject": SUBJECT,
            },
        },
        "receipt": {
            "timestamp": "2026-11-23T16:41:08.636Z",
            "processingTimeMillis": 357,
            "recipients": [REPLY_ADDRESS],
            "spamVerdict": {"status": "PASS"},
            "virusVerdict": {"status": "PASS"},
            "spfVerdict": {"status": "PASS"},
            "dkimVerdict": {"status": "PASS"},
            "dmarcVerdict": {"status": "PASS"},
            "action": action,
        },
    }
    if content is not None:
        event["content"] = content
    return event


def post_from_sns(client, event: dict[str, object]):
    notification = {
        "Type": "Notification",
        "MessageId": "8f6dee70-c885-558a-be7d-bd48bbf5335e",
        "TopicArn": "arn:aws:sns:us-east-1:111111111111:PoolPatrolInbound",
        "Subject": "Amazon SES Email Receipt Notification",
        "Message": json.dumps(event),
        "Timestamp": "2026-11-23T16:41:09.516Z",
        "SignatureVersion": "1",
        "Signature": "EXAMPLEpH+..",
        "SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem",
        "UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe",
    }
    return post_json(
        client,
        "/anymail/amazon_ses/inbound/",
        json.dumps(notification).encode(),
        content_type="text/plain; charset=UTF-8",
        HTTP_X_AMZ_SNS_MESSAGE_TYPE="Notification",
        HTTP_X_AMZ_SNS_MESSAGE_ID="8f6dee70-c885-558a-be7d-bd48bbf5335e",
        HTTP_X_AMZ_SNS_TOPIC_ARN="arn:aws:sns:us-east-1:111111111111:PoolPatrolInbound",
        **basic_auth(),
    )


SNS_ACTION = {"type": "SNS", "topicArn": "arn:aws:sns:us-east-1:111111111111:PoolPatrolInbound"}


def test_fault_87_amazon_ses_inbound_sns_utf8(client, settings, scene, queued):
    configure(settings, "amazon_ses")

    response = post_from_sns(client, ses_event(SNS_ACTION | {"encoding": "UTF8"}, RAW.decode()))

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, RAW)


def test_fault_87_amazon_ses_inbound_sns_base64(client, settings, scene, queued):
    configure(settings, "amazon_ses")
    content = base64.b64encode(RAW).decode()

    response = post_from_sns(client, ses_event(SNS_ACTION | {"encoding": "BASE64"}, content))

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, RAW)


def test_fault_87_amazon_ses_inbound_s3(client, settings, scene, queued, provider_api):
    key = "inbound/jili9m351il3gkburn7o2f0u6788stij94c8ld01"
    provider_api.routes[f"/pool-patrol-inbound/{key}"] = ("application/octet-stream", RAW)
    configure(
        settings,
        "amazon_ses",
        AMAZON_SES_SESSION_PARAMS={
            "aws_access_key_id": "AKIDEXAMPLE",
            "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "region_name": "us-east-1",
        },
        AMAZON_SES_CLIENT_PARAMS={
            "endpoint_url": provider_api.url,
            "config": {"s3": {"addressing_style": "path"}, "retries": {"max_attempts": 1}},
        },
    )
    action = SNS_ACTION | {
        "type": "S3",
        "bucketName": "pool-patrol-inbound",
        "objectKeyPrefix": "inbound",
        "objectKey": key,
    }

    response = post_from_sns(client, ses_event(action, content=None))

    assert response.status_code == 200
    assert [path for path, _ in provider_api.seen] == [f"/pool-patrol-inbound/{key}"]
    assert provider_api.seen[0][1].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert_one_reply_on_the_thread(scene, queued, RAW)


# --- Postal (RSA signature of the body) -------------------------------------------------------


def test_fault_87_postal_inbound_signed_with_the_server_s_key(client, settings, scene, queued):
    configure(settings, "postal")
    body = json.dumps(
        {
            "id": 233980,
            "rcpt_to": REPLY_ADDRESS,
            "mail_from": RIDER_EMAIL,
            "token": "rtmuzogUauKN",
            "subject": SUBJECT,
            "message": base64.b64encode(RAW).decode(),
            "base64": True,
            "size": len(RAW),
        }
    ).encode()

    response = post_json(
        client,
        "/anymail/postal/inbound/",
        body,
        HTTP_X_POSTAL_SIGNATURE=postal_signature(body),
        **basic_auth(),
    )

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, RAW)


def test_fault_88_postal_refuses_a_body_its_signature_does_not_cover(client, settings, scene):
    configure(settings, "postal")
    body = json.dumps({"id": 1, "rcpt_to": REPLY_ADDRESS, "message": RAW.decode()}).encode()

    response = post_json(
        client,
        "/anymail/postal/inbound/",
        body,
        HTTP_X_POSTAL_SIGNATURE=postal_signature(body + b" "),
        **basic_auth(),
    )

    assert response.status_code == 400
    assert not Message.objects.filter(direction=Message.Direction.INBOUND).exists()


# --- SparkPost ------------------------------------------------------------------------------


@pytest.mark.parametrize("as_base64", [False, True], ids=["text", "base64"])
def test_fault_87_sparkpost_relay_message(client, settings, scene, queued, as_base64):
    configure(settings, "sparkpost")
    rfc822 = base64.b64encode(RAW).decode() if as_base64 else RAW.decode()
    body = json.dumps(
        [
            {
                "msys": {
                    "relay_message": {
                        "content": {
                            "email_rfc822": rfc822,
                            "email_rfc822_is_base64": as_base64,
                            "headers": [{name: value} for name, value in HEADERS],
                            "html": REPLY_HTML,
                            "subject": SUBJECT,
                            "text": REPLY_TEXT,
                            "to": [REPLY_ADDRESS],
                        },
                        "customer_id": "1337",
                        "friendly_from": RIDER_EMAIL,
                        "msg_from": RIDER_EMAIL,
                        "rcpt_to": REPLY_ADDRESS,
                        "webhook_id": "4839201967643219",
                        "protocol": "smtp",
                    }
                }
            }
        ]
    ).encode()

    response = post_json(client, "/anymail/sparkpost/inbound/", body, **basic_auth())

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, RAW)


# --- Mandrill (signature over the exact URL and the sorted form fields) ------------------------


def test_fault_87_mandrill_inbound_at_its_one_url(client, settings, scene, queued):
    configure(settings, "mandrill")
    events = json.dumps(
        [
            {
                "event": "inbound",
                "ts": NOW,
                "msg": {
                    "raw_msg": RAW.decode(),
                    "headers": dict(HEADERS),
                    "text": REPLY_TEXT,
                    "html": REPLY_HTML,
                    "from_email": RIDER_EMAIL,
                    "from_name": "Pat Rivera",
                    "to": [[REPLY_ADDRESS, None]],
                    "email": REPLY_ADDRESS,
                    "subject": SUBJECT,
                    "tags": [],
                    "sender": None,
                    "spam_report": {"score": 0.1, "matched_rules": []},
                    "dkim": {"signed": True, "valid": True},
                    "spf": {"result": "pass", "detail": "sender SPF authorized"},
                },
            }
        ]
    )
    # Mandrill signs the URL it was given (basic auth included) and each field.
    url = f"http://{SECRET}@testserver/anymail/mandrill/"
    signed = hmac.new(MANDRILL_KEY.encode(), f"{url}mandrill_events{events}".encode(), "sha1")

    response = client.post(
        "/anymail/mandrill/",
        {"mandrill_events": events},
        HTTP_X_MANDRILL_SIGNATURE=base64.b64encode(signed.digest()).decode(),
        **basic_auth(),
    )

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, RAW)


# --- MailerSend (HMAC of the body) --------------------------------------------------------------


def test_fault_87_mailersend_inbound_signed(client, settings, scene, queued):
    configure(settings, "mailersend")
    body = json.dumps(
        {
            "type": "inbound.message",
            "inbound_id": "65c0e1f2a3b4c5d6e7f80912",
            "url": "https://app.mailersend.com/inbound-routes/65c0e1f2a3b4c5d6e7f80912",
            "created_at": "2026-11-23T16:41:08.000000Z",
            "data": {
                "object": "message",
                "id": "65c0e1f2a3b4c5d6e7f80913",
                "recipients": {
                    "rcptTo": [{"email": REPLY_ADDRESS}],
                    "to": {"raw": REPLY_ADDRESS, "data": [{"email": REPLY_ADDRESS, "name": ""}]},
                },
                "from": {"email": RIDER_EMAIL, "name": "Pat Rivera", "raw": RIDER_EMAIL},
                "sender": {"email": RIDER_EMAIL},
                "subject": SUBJECT,
                "date": "Mon, 23 Nov 2026 08:41:07 -0800",
                "headers": dict(HEADERS),
                "text": REPLY_TEXT,
                "html": REPLY_HTML,
                "raw": RAW.decode(),
                "attachments": [],
                "spf_check": {"code": "+", "value": None},
                "dkim_check": False,
                "created_at": "2026-11-23T16:41:08.000000Z",
            },
        }
    ).encode()
    signature = hmac.new(MAILERSEND_INBOUND.encode(), body, hashlib.sha256).hexdigest()

    response = post_json(
        client, "/anymail/mailersend/inbound/", body, HTTP_SIGNATURE=signature, **basic_auth()
    )

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, RAW)


# --- Mailjet and Brevo (parsed fields only) ----------------------------------------------------


def test_fault_87_mailjet_parse_api(client, settings, scene, queued):
    configure(settings, "mailjet")
    body = json.dumps(
        {
            "Sender": RIDER_EMAIL,
            "Recipient": REPLY_ADDRESS,
            "Date": "20261123T164107",
            "From": f"Pat Rivera <{RIDER_EMAIL}>",
            "Subject": SUBJECT,
            "Headers": dict(HEADERS) | {"Received": [HEADERS[1][1], "by mx.mailjet.com"]},
            "Parts": [
                {"Headers": {"Content-Type": f"text/{kind}; charset=UTF-8"}, "ContentRef": ref}
                for kind, ref in (("plain", "Text-part"), ("html", "Html-part"))
            ],
            "Text-part": REPLY_TEXT,
            "Html-part": REPLY_HTML,
            "SpamAssassinScore": "0.1",
            "CustomID": "",
            "Payload": "",
        }
    ).encode()

    response = post_json(client, "/anymail/mailjet/inbound/", body, **basic_auth())

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, raw=None)


def test_fault_87_brevo_inbound_parse(client, settings, scene, queued):
    configure(settings, "brevo")
    body = json.dumps(
        {
            "items": [
                {
                    "Uuid": ["b4c1e6f0-2d3a-4c5b-8e9f-0a1b2c3d4e5f"],
                    "MessageId": f"<{MESSAGE_ID}>",
                    "InReplyTo": f"<{OUR_MESSAGE_ID}>",
                    "From": {"Name": "Pat Rivera", "Address": RIDER_EMAIL},
                    "To": [{"Name": None, "Address": REPLY_ADDRESS}],
                    "Cc": None,
                    "ReplyTo": None,
                    "SentAtDate": "Mon, 23 Nov 2026 08:41:07 -0800",
                    "Subject": SUBJECT,
                    "Attachments": [],
                    "Headers": dict(HEADERS),
                    "SpamScore": 0.1,
                    "ExtractedMarkdownMessage": REPLY_TEXT,
                    "ExtractedMarkdownSignature": None,
                    "RawHtmlBody": REPLY_HTML,
                    "RawTextBody": REPLY_TEXT + "\n",
                }
            ]
        }
    ).encode()

    response = post_json(client, "/anymail/brevo/inbound/", body, **basic_auth())

    assert response.status_code == 200
    assert_one_reply_on_the_thread(scene, queued, raw=None)


# --- Mailtrap and Resend (a notification; anymail fetches the message) -------------------------


def test_fault_87_mailtrap_inbound_fetches_and_keeps_the_raw_message(
    client, settings, scene, queued, provider_api
):
    inbound_secret = "mailtrap-inbound-secret"
    configure(settings, "mailtrap", MAILTRAP_API_URL=provider_api.url)
    settings.ANYMAIL["MAILTRAP_INBOUND_SECRET"] = inbound_secret
    message_path = "/inbound/inboxes/4242/messages/6a5d9f0e-1b2c-4d3e-8f90-a1b2c3d4e5f6"
    provider_api.routes[message_path] = (
        "application/json",
        json.dumps(
            {
                "id": "6a5d9f0e-1b2c-4d3e-8f90-a1b2c3d4e5f6",
                "inbox_id": 4242,
                "from": RIDER_EMAIL,
                "to": [REPLY_ADDRESS],
                "subject": SUBJECT,
                "raw_message_url": f"{provider_api.url}raw/6a5d9f0e.eml?X-Amz-Signature=abc",
                "raw_message_expires_at": "2026-11-23T18:00:00Z",
            }
        ).encode(),
    )
    provider_api.routes["/raw/6a5d9f0e.eml?X-Amz-Signature=abc"] = ("message/rfc822", RAW)
    body = json.dumps(
        {
            "events": [
                {
                    "event": "inbound.message_received",
                    "event_id": "7f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
                    "timestamp": NOW * 1000,
                    "inbox_id": 4242,
                    "message_id": "6a5d9f0e-1b2c-4d3e-8f90-a1b2c3d4e5f6",
                }
            ]
        }
    ).encode()
    signature = hmac.new(inbound_secret.encode(), body, hashlib.sha256).hexdigest()

    response = post_json(
        client,
        "/anymail/mailtrap/inbound/",
        body,
        HTTP_MAILTRAP_SIGNATURE=signature,
        **basic_auth(),
    )

    assert response.status_code == 200
    assert provider_api.seen[0] == (message_path, "Bearer mailtrap-api-token")
    assert_one_reply_on_the_thread(scene, queued, RAW)


def svix_headers(body: bytes, secret: str, svix_id: str) -> dict[str, str]:
    """Resend signs through Svix: v1, HMAC-SHA256 of "id.timestamp.body" with the secret's key."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    timestamp = str(int(time.time()))  # the frozen clock: Svix refuses a stale timestamp
    signed = hmac.new(key, f"{svix_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return {
        "HTTP_SVIX_ID": svix_id,
        "HTTP_SVIX_TIMESTAMP": timestamp,
        "HTTP_SVIX_SIGNATURE": "v1," + base64.b64encode(signed.digest()).decode(),
    }


def test_fault_87_resend_inbound_signed_with_svix(client, settings, scene, queued, provider_api):
    configure(settings, "resend", RESEND_API_URL=provider_api.url)
    email_id = "56761188-7520-42d8-8898-ff6fc54ce618"
    provider_api.routes[f"/emails/receiving/{email_id}"] = (
        "application/json",
        json.dumps(
            {
                "id": email_id,
                "from": f"Pat Rivera <{RIDER_EMAIL}>",
                "to": [REPLY_ADDRESS],
                "cc": [],
                "bcc": [],
                "reply_to": [],
                "subject": SUBJECT,
                "html": REPLY_HTML,
                "text": REPLY_TEXT,
                "headers": dict(HEADERS),
                "message_id": f"<{MESSAGE_ID}>",
                "created_at": "2026-11-23T16:41:08.894719+00:00",
                "attachments": [],
                "raw": {
                    "download_url": f"{provider_api.url}raw/{email_id}.eml",
                    "expires_at": "2026-11-24T16:41:08+00:00",
                },
            }
        ).encode(),
    )
    provider_api.routes[f"/raw/{email_id}.eml"] = ("message/rfc822", RAW)
    body = json.dumps(
        {
            "type": "email.received",
            "created_at": "2026-11-23T16:41:09.126Z",
            "data": {
                "email_id": email_id,
                "created_at": "2026-11-23T16:41:08.894719+00:00",
                "from": f"Pat Rivera <{RIDER_EMAIL}>",
                "to": [REPLY_ADDRESS],
                "cc": [],
                "bcc": [],
                "subject": SUBJECT,
                "message_id": f"<{MESSAGE_ID}>",
                "attachments": [],
            },
        }
    ).encode()

    response = post_json(
        client,
        "/anymail/resend/inbound/",
        body,
        **svix_headers(body, RESEND_SECRET, "msg_2pQeE9wD6n8kZ4rYx0vB"),
        **basic_auth(),
    )

    assert response.status_code == 200
    assert provider_api.seen[0] == (
        f"/emails/receiving/{email_id}",
        "Bearer re_resend_api_key",
    )
    # anymail streams Resend's raw download into its parser and keeps no copy.
    assert_one_reply_on_the_thread(scene, queued, raw=None)


def test_fault_88_resend_refuses_a_delivery_whose_svix_signature_is_wrong(client, settings, scene):
    configure(settings, "resend")
    body = json.dumps({"type": "email.received", "data": {"email_id": "x"}}).encode()
    headers = svix_headers(body, "whsec_" + base64.b64encode(b"someone else").decode(), "msg_1")

    response = post_json(client, "/anymail/resend/inbound/", body, **headers, **basic_auth())

    assert response.status_code == 400
    assert not Message.objects.filter(direction=Message.Direction.INBOUND).exists()
