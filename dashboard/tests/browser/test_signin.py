"""Signing in as a person does: through the company's provider, and with an authenticator app.

The provider is real (django-oauth-toolkit in its own process, tests/oidc_provider)
and Chromium walks the whole way: the app's button, the provider's own login
page, the redirect back. The authenticator app is pyotp, given the secret the
enrolment page shows. CSP stays on: the sign-in form's redirect to the provider
must be allowed by the page's form-action.
"""

import re

import pyotp
import pytest
import time_machine
from allauth.socialaccount.models import SocialAccount
from playwright.sync_api import expect
from time_machine import escape_hatch

from dashboard.tests.browser import axe
from dashboard.tests.browser.conftest import PASSWORD
from tests.oidc_support import PASSWORD as DIRECTORY_PASSWORD
from tests.oidc_support import signin_settings

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def sso(settings, oidc_provider, live_server):
    signin_settings(settings, oidc_provider.app_settings())
    oidc_provider.allow_redirect(live_server.url)
    # The provider stamps its tokens with the real time, not the tests' frozen clock.
    with time_machine.travel(escape_hatch.time.time(), tick=True):
        yield oidc_provider


def sign_in_with_password(page, live_server, user, next_path: str = "/") -> None:
    user.set_password(PASSWORD)
    user.save()
    page.goto(f"{live_server.url}/login/?next={next_path}")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_a_coordinator_signs_in_through_the_companys_provider(page, live_server, sso, screenshots):
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/$"))
    screenshots(page, "signin-sso")

    page.get_by_role("button", name="Sign in with Example Corp").click()

    # The provider's own page, on its own origin.
    expect(page).to_have_url(re.compile(rf"^{re.escape(sso.url)}/login/"))
    expect(page.get_by_role("heading", name="Example Corp sign-in")).to_be_visible()
    screenshots(page, "signin-provider", phone=False)
    page.get_by_label("Corporate username").fill("luis")
    page.get_by_label("Password").fill(DIRECTORY_PASSWORD)
    page.get_by_role("button", name="Sign in to Example Corp").click()

    expect(page).to_have_url(f"{live_server.url}/")
    expect(page.locator("nav [aria-current=page]")).to_have_text("Review queue")
    expect(page.locator(".account .who")).to_have_text("Luis Ortega")
    user = SocialAccount.objects.get(provider="sso").user
    assert set(user.groups.values_list("name", flat=True)) == {"Coordinators"}
    page.get_by_role("link", name="Admin").click()
    expect(page.get_by_role("heading", name="Audit records")).to_be_visible()


def test_the_admin_sends_a_signed_out_auditor_through_the_provider_and_back(page, live_server, sso):
    page.goto(f"{live_server.url}/admin/")
    expect(page).to_have_url(re.compile(r"/admin/login/\?next=/admin/$"))

    page.get_by_role("button", name="Sign in with Example Corp").click()
    page.get_by_label("Corporate username").fill("dana")
    page.get_by_label("Password").fill(DIRECTORY_PASSWORD)
    page.get_by_role("button", name="Sign in to Example Corp").click()

    expect(page).to_have_url(f"{live_server.url}/admin/")
    expect(page.get_by_role("heading", name="Audit records")).to_be_visible()


def test_an_auditor_enrols_an_authenticator_app_and_signs_in_with_its_code(
    page, live_server, auditor, settings, screenshots, _frozen_time
):
    settings.MFA_REQUIRED_FOR = frozenset({"Auditors"})

    sign_in_with_password(page, live_server, auditor)

    # Held at enrolment: the dashboard is out of reach until a code is given.
    expect(page).to_have_url(re.compile(r"/accounts/2fa/totp/activate/\?next="))
    screenshots(page, "signin-enrol")
    page.goto(f"{live_server.url}/cases/")
    expect(page).to_have_url(re.compile(r"/accounts/2fa/totp/activate/"))
    app = pyotp.TOTP(page.locator("#authenticator_secret").input_value())
    page.get_by_label("Authenticator code").fill(app.now())
    page.get_by_role("button", name="Activate").click()

    expect(page.get_by_role("heading", name="Recovery Codes")).to_be_visible()
    codes = page.get_by_label("Unused codes").input_value().split()
    assert len(codes) == 10
    screenshots(page, "signin-recovery-codes")
    page.goto(f"{live_server.url}/")
    expect(page.locator("nav [aria-current=page]")).to_have_text("Review queue")

    page.get_by_role("button", name="Log out").click()
    _frozen_time.shift(30)  # the next code
    sign_in_with_password(page, live_server, auditor, next_path="/cases/")

    expect(page).to_have_url(re.compile(r"/accounts/2fa/authenticate/"))
    screenshots(page, "signin-code")
    page.get_by_label("Code").fill("000000")
    page.get_by_role("button", name="Sign In").click()
    expect(page.get_by_text("Incorrect code.")).to_be_visible()
    page.get_by_label("Code").fill(app.now())
    page.get_by_role("button", name="Sign In").click()
    expect(page).to_have_url(f"{live_server.url}/cases/")

    page.get_by_role("button", name="Log out").click()
    sign_in_with_password(page, live_server, auditor)
    page.get_by_label("Code").fill(codes[0])  # no phone at hand: a recovery code
    page.get_by_role("button", name="Sign In").click()
    expect(page).to_have_url(f"{live_server.url}/")


@pytest.mark.browser_context_args(bypass_csp=True)  # axe is added as an inline script
def test_the_sign_in_pages_have_no_serious_axe_violation(page, live_server, auditor, settings, sso):
    settings.MFA_REQUIRED_FOR = frozenset({"Auditors"})
    problems: list[str] = []

    def check(where: str) -> None:
        found = axe.violations(page)
        if found:
            problems.append(axe.report(where, found))

    page.goto(f"{live_server.url}/login/")
    check("the login page with single sign-on")
    page.goto(f"{live_server.url}/accounts/oidc/sso/login/callback/?state=forged&code=x")
    check("a refused single sign-on")
    sign_in_with_password(page, live_server, auditor)
    check("enrolment")
    app = pyotp.TOTP(page.locator("#authenticator_secret").input_value())
    page.get_by_label("Authenticator code").fill(app.now())
    page.get_by_role("button", name="Activate").click()
    check("recovery codes")
    page.goto(f"{live_server.url}/accounts/2fa/")
    check("two-factor overview")
    page.get_by_role("button", name="Log out").click()
    sign_in_with_password(page, live_server, auditor)
    check("the code at sign-in")

    assert not problems, "\n".join(problems)
