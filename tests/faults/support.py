"""What the fault tests share: the provider's secret and payload shapes."""

import base64
import json

from django.test import Client

from tests.inbound_support import REPLY_ADDRESS, RIDER_EMAIL

SECRET = "esp:fault-suite-secret"
POSTMARK_INBOUND = "/anymail/postmark/inbound/"
POSTMARK_TRACKING = "/anymail/postmark/tracking/"
MAILGUN_INBOUND_MIME = "/anymail/mailgun/inbound_mime/"
MAILGUN_KEY = "mailgun-signing-key-for-the-fault-suite"


def basic_auth(secret: str = SECRET) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(secret.encode()).decode()}


def production_webhooks(settings) -> None:
    """Webhooks as deployed: DEBUG off, one secret, Mailgun's signing key."""
    settings.DEBUG = False
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET], "MAILGUN_WEBHOOK_SIGNING_KEY": MAILGUN_KEY}


def postmark_payload(raw: bytes | None = None, **fields: object) -> dict[str, object]:
    """Postmark's inbound JSON; with ``raw``, "include raw email" is on."""
    payload: dict[str, object] = {
        "From": RIDER_EMAIL,
        "FromFull": {"Email": RIDER_EMAIL, "Name": "Pat Rivera", "MailboxHash": ""},
        "To": REPLY_ADDRESS,
        "ToFull": [{"Email": REPLY_ADDRESS, "Name": "", "MailboxHash": ""}],
        "Subject": "Re: Your vanpool seat: please confirm your details",
        "MessageID": "0f3b2a61-7c55-4e0a-9d8e-fault0000001",
        "Date": "Mon, 23 Nov 2026 08:41:07 -0800",
        "TextBody": "Got it, thanks. I still ride the van.",
        "HtmlBody": "",
        "Headers": [{"Name": "Message-ID", "Value": "<fault.0001@mail.example.com>"}],
        "Attachments": [],
    }
    if raw is not None:
        payload["RawEmail"] = raw.decode("utf-8")
    return payload | fields


def post_body(client: Client, url: str, body: bytes | str, **extra: str):
    return client.generic(
        "POST", url, body, content_type=extra.pop("content_type", "application/json"), **extra
    )


def post_json(client: Client, url: str, payload: object, **extra: str):
    return post_body(client, url, json.dumps(payload), **extra)
