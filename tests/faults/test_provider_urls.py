"""Issue 34 point 8: every anymail URL answers 4xx, never 5xx, unless it is this server's provider.

anymail mounts 27 URL patterns for 14 providers; a view built without its
provider's settings raises, and Django answered anyone's ``POST {}`` with a 500
and a traceback. Only the configured provider's URLs answer now; every other
answers 404 before anymail runs.
"""

import pytest
from django.test import Client

from outreach.models import Message
from tests.provider_support import (
    COMPLETE_SETTINGS,
    SECRET,
    anymail_routes,
    basic_auth,
    complete_settings,
    provider_of,
)

pytestmark = [
    pytest.mark.django_db,
    # Production logs these; the suite turns warnings into errors.
    pytest.mark.filterwarnings("ignore::anymail.exceptions.AnymailDeprecationWarning"),
    pytest.mark.filterwarnings("ignore::anymail.exceptions.AnymailNotSupportedWarning"),
]

ROUTES = anymail_routes()
# The URLs whose provider needs a setting beyond the webhook secret (docs/operating.md).
NEED_A_SETTING = {
    "/anymail/brevo/inbound/",
    "/anymail/sendinblue/inbound/",
    "/anymail/mailersend/inbound/",
    "/anymail/mailersend/tracking/",
    "/anymail/mailgun/inbound/",
    "/anymail/mailgun/inbound_mime/",
    "/anymail/mailgun/tracking/",
    "/anymail/mailtrap/inbound/",
    "/anymail/postal/inbound/",
    "/anymail/postal/tracking/",
    "/anymail/resend/inbound/",
    "/anymail/unisender_go/tracking/",
    "/anymail/mandrill/",
    "/anymail/mandrill/tracking/",
}


@pytest.fixture
def anyone() -> Client:
    """A caller whose 500s come back as responses, as a client on the web sees them."""
    return Client(raise_request_exception=False)


@pytest.fixture(autouse=True)
def production_like(settings):
    settings.DEBUG = False
    settings.ANYMAIL = {"WEBHOOK_SECRET": [SECRET]}


def post_empty_object(client: Client, route: str, **extra: str):
    return client.post(route, "{}", content_type="application/json", **extra)


def test_the_suite_covers_every_url_anymail_mounts():
    assert len(ROUTES) == 28  # 27 patterns, Mailgun's inbound one in both forms
    assert set(ROUTES) >= NEED_A_SETTING
    assert {provider_of(route) for route in ROUTES} == set(COMPLETE_SETTINGS)


@pytest.mark.parametrize("route", ROUTES)
def test_fault_85_an_anonymous_post_to_any_anymail_url_never_gets_a_5xx(anyone, route):
    response = post_empty_object(anyone, route)

    assert 400 <= response.status_code < 500, response.content[:300]
    assert b"Traceback" not in response.content
    assert not Message.objects.exists()


@pytest.mark.parametrize("route", sorted(NEED_A_SETTING))
def test_fault_85_with_the_secret_a_provider_without_its_settings_answers_404(anyone, route):
    response = post_empty_object(anyone, route, **basic_auth())

    assert response.status_code == 404
    assert b"does not receive email from" in response.content
    assert not Message.objects.exists()


@pytest.mark.parametrize("route", [r for r in ROUTES if provider_of(r) != "postmark"])
def test_fault_85_with_the_secret_every_url_but_the_configured_provider_s_answers_404(
    anyone, settings, route
):
    # Every other provider complete too: only EMAIL_PROVIDER decides which answer.
    settings.ANYMAIL = {
        key: value
        for provider in COMPLETE_SETTINGS
        for key, value in complete_settings(provider).items()
    }
    settings.EMAIL_PROVIDER = ["postmark"]

    response = post_empty_object(anyone, route, **basic_auth())

    assert response.status_code == 404
    assert not Message.objects.exists()


def test_the_configured_provider_s_url_still_takes_deliveries(anyone, settings):
    settings.EMAIL_PROVIDER = ["postmark"]

    response = post_empty_object(anyone, "/anymail/postmark/inbound/", **basic_auth())

    assert response.status_code == 200  # anymail's payload error, kept for a person
    assert Message.objects.get().status == Message.Status.QUARANTINED


@pytest.mark.parametrize("route", ROUTES)
def test_fault_85_a_configured_provider_s_own_urls_refuse_an_anonymous_post_with_4xx(
    anyone, settings, route
):
    provider = provider_of(route)
    settings.ANYMAIL = complete_settings(provider)
    settings.EMAIL_PROVIDER = [provider]

    response = post_empty_object(anyone, route)

    assert 400 <= response.status_code < 500, response.content[:300]
    assert response.status_code != 404
    assert not Message.objects.exists()


def test_the_provider_defaults_to_the_one_email_backend_sends_through(anyone, settings):
    settings.ANYMAIL = complete_settings("mailgun") | complete_settings("postmark")
    settings.EMAIL_BACKEND = "anymail.backends.mailgun.EmailBackend"

    postmark = post_empty_object(anyone, "/anymail/postmark/inbound/", **basic_auth())
    mailgun = post_empty_object(anyone, "/anymail/mailgun/tracking/", **basic_auth())

    assert (postmark.status_code, mailgun.status_code) == (404, 400)  # 400: no Mailgun signature
