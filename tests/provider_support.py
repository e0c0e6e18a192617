"""What the provider tests share: anymail's URLs, each provider's settings, a secret, keys.

``COMPLETE_SETTINGS`` is what each provider's webhooks need to run (the rows of
docs/operating.md's provider table); the keys are made up, except Postal's,
which is a real RSA key made once per run so its signatures can be checked.
"""

import base64
from functools import cache
from typing import Any

from anymail import urls as anymail_urls

SECRET = "esp:provider-suite-secret"


def basic_auth(secret: str = SECRET) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(secret.encode()).decode()}


def anymail_routes() -> list[str]:
    """Every URL anymail mounts (Mailgun's inbound pattern twice: parsed and raw MIME)."""
    routes = []
    for pattern in anymail_urls.urlpatterns:
        path = str(pattern.pattern).lstrip("^").rstrip("$")
        if "(_mime)?" in path:
            routes += [f"/anymail/{path.replace('(_mime)?', suffix)}" for suffix in ("", "_mime")]
        else:
            routes.append(f"/anymail/{path}")
    return routes


def provider_of(route: str) -> str:
    return route.removeprefix("/anymail/").split("/", 1)[0]


@cache
def postal_private_key() -> Any:
    # Imported here: without the postal extra the other providers' tests still run.
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def postal_public_key() -> str:
    """The key as Postal shows it for ANYMAIL_POSTAL_WEBHOOK_KEY: base64 DER, no PEM armour."""
    from cryptography.hazmat.primitives import serialization

    der = (
        postal_private_key()
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return base64.b64encode(der).decode()


def postal_signature(body: bytes) -> str:
    """X-Postal-Signature: RSA PKCS#1 v1.5 over SHA-1 of the body, base64."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    signed = postal_private_key().sign(body, padding.PKCS1v15(), hashes.SHA1())
    return base64.b64encode(signed).decode()


MAILGUN_KEY = "mailgun-signing-key-for-the-provider-suite"
MAILERSEND_INBOUND = "mailersend-inbound-secret-for-the-suite"
MAILERSEND_SIGNING = "mailersend-signing-secret-for-the-suite"
MANDRILL_KEY = "mandrill-webhook-key-for-the-suite"
# A Svix secret as Resend shows it: whsec_ and the base64 of the key's bytes.
RESEND_SECRET = "whsec_" + base64.b64encode(b"resend-inbound-secret-for-suite").decode()

COMPLETE_SETTINGS: dict[str, dict[str, str]] = {
    "amazon_ses": {},  # the amazon-ses extra (boto3); AWS credentials only to fetch from S3
    "brevo": {"BREVO_API_KEY": "brevo-api-key"},
    "mailersend": {
        "MAILERSEND_INBOUND_SECRET": MAILERSEND_INBOUND,
        "MAILERSEND_SIGNING_SECRET": MAILERSEND_SIGNING,
    },
    "mailgun": {"MAILGUN_WEBHOOK_SIGNING_KEY": MAILGUN_KEY},
    "mailjet": {},
    "mailtrap": {"MAILTRAP_API_TOKEN": "mailtrap-api-token"},
    "mandrill": {"MANDRILL_WEBHOOK_KEY": MANDRILL_KEY},
    "postal": {"POSTAL_WEBHOOK_KEY": "set by complete_settings"},
    "postmark": {},
    "resend": {
        "RESEND_API_KEY": "re_resend_api_key",
        "RESEND_INBOUND_SECRET": RESEND_SECRET,
        "RESEND_SIGNING_SECRET": RESEND_SECRET,
    },
    "sendgrid": {},
    "sendinblue": {"SENDINBLUE_API_KEY": "sendinblue-api-key"},
    "sparkpost": {},
    "unisender_go": {"UNISENDER_GO_API_KEY": "unisender-go-api-key"},
}


def complete_settings(provider: str) -> dict[str, str]:
    """ANYMAIL for one provider whose webhooks have all they need, behind the secret."""
    extra = dict(COMPLETE_SETTINGS[provider])
    if provider == "postal":
        extra["POSTAL_WEBHOOK_KEY"] = postal_public_key()
    return {"WEBHOOK_SECRET": [SECRET], **extra}
