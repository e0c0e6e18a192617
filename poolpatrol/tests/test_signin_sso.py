"""Single sign-on against a real OpenID Connect provider on loopback (tests/oidc_provider).

The app runs in Django's test client; the provider is django-oauth-toolkit in
its own process. Each sign-in goes the whole way: the app sends the browser to
the provider with state, nonce and a PKCE challenge, the person signs in on the
provider's page, the provider sends them back with a code, and the app fetches
the tokens and the user's claims from the provider over HTTP.
"""

from collections.abc import Callable
from urllib.parse import parse_qsl, urlsplit

import pytest
import time_machine
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from time_machine import escape_hatch

from tests.oidc_support import (
    CALLBACK,
    DirectoryBrowser,
    free_port,
    local_path,
    signin_settings,
    with_query,
)

pytestmark = pytest.mark.django_db

START = reverse("openid_connect_login", kwargs={"provider_id": "sso"})
Rewrite = Callable[[str], str]


def unchanged(url: str) -> str:
    return url


@pytest.fixture
def sso(settings, oidc_provider):
    # The provider stamps its tokens with the real time: a clock frozen days
    # before would read them as issued in the future.
    signin_settings(settings, oidc_provider.app_settings())
    with time_machine.travel(escape_hatch.time.time(), tick=True):
        yield oidc_provider


def sign_in(
    client: Client,
    provider,
    username: str,
    *,
    to_provider: Rewrite = unchanged,
    back_to_app: Rewrite = unchanged,
):
    """The whole round trip; the app's answer to the provider's redirect back."""
    start = client.post(START, {"next": "/"})
    assert start.status_code == 302, start.content
    assert start["Location"].startswith(provider.issuer)
    back = DirectoryBrowser(provider).authorize(to_provider(start["Location"]), username)
    return client.get(local_path(back_to_app(back)))


def account_of(username: str):
    """The app's user for a directory user, found by the provider's subject, not a name."""
    accounts = SocialAccount.objects.filter(
        provider="sso", extra_data__id_token__preferred_username=username
    )
    return accounts.get().user if accounts.exists() else None


def roles(user) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_signing_in_creates_the_user_with_the_role_their_groups_grant(client, sso):
    response = sign_in(client, sso, "dana")

    assert response.status_code == 302
    assert response["Location"] == "/"
    user = account_of("dana")
    assert (user.first_name, user.last_name, user.email) == (
        "Dana",
        "Reyes",
        "dana@example-corp.test",
    )
    assert user.username == "dana"  # preferred_username, when no one has it yet
    assert user.is_staff and not user.is_superuser
    assert roles(user) == {"Auditors"}  # "staff" maps to no role
    assert not user.has_usable_password()
    assert client.get("/").status_code == 200
    assert client.get("/admin/").status_code == 200


def test_a_coordinator_from_the_provider_lands_on_the_review_queue(client, sso):
    response = sign_in(client, sso, "luis")

    assert roles(account_of("luis")) == {"Coordinators"}
    queue = client.get(response["Location"])
    assert queue.status_code == 200
    assert b"Review queue" in queue.content


def test_a_changed_group_changes_the_role_at_the_next_sign_in(sso):
    sso.user("mo", "pool-coordinators")
    sign_in(Client(), sso, "mo")
    user = account_of("mo")
    assert roles(user) == {"Coordinators"}

    sso.user("mo", "pool-auditors")
    sign_in(Client(), sso, "mo")
    user.refresh_from_db()
    assert roles(user) == {"Auditors"} and user.is_staff

    sso.user("mo")  # removed from every group
    browser = Client()
    sign_in(browser, sso, "mo")
    user.refresh_from_db()
    assert roles(user) == set() and not user.is_staff
    assert browser.get("/").status_code == 403
    assert get_user_model().objects.filter(username__startswith="mo").count() == 1


def test_someone_outside_every_mapped_group_gets_no_staff_access(client, sso):
    response = sign_in(client, sso, "erin")

    assert response.status_code == 302  # signed in: the provider vouches for them
    user = account_of("erin")
    assert not user.is_staff and roles(user) == set()
    assert client.get("/").status_code == 403
    admin = client.get("/admin/")
    assert admin.status_code == 302 and admin["Location"].startswith("/admin/login/")
    assert client.get("/api/cases").status_code == 403


def test_groups_made_by_hand_are_kept_and_only_the_roles_follow_the_provider(client, sso):
    sign_in(client, sso, "luis")
    user = account_of("luis")
    user.groups.add(Group.objects.create(name="Night desk"), Group.objects.get(name="Auditors"))

    sign_in(Client(), sso, "luis")

    assert roles(user) == {"Coordinators", "Night desk"}


def refused(response) -> None:
    assert response.status_code == 401
    assert b"Sign-in failed" in response.content
    assert not SocialAccount.objects.exists()


def test_a_tampered_state_is_refused_and_nobody_is_signed_in(client, sso):
    response = sign_in(client, sso, "dana", back_to_app=lambda url: with_query(url, state="forged"))

    refused(response)
    assert "_auth_user_id" not in client.session


def test_a_callback_carried_to_another_browser_is_refused(sso):
    victim, attacker = Client(), Client()
    start = attacker.post(START, {"next": "/"})
    back = DirectoryBrowser(sso).authorize(start["Location"], "dana")

    # The attacker's own sign-in, completed in the victim's browser (login CSRF).
    refused(victim.get(local_path(back)))
    assert "_auth_user_id" not in victim.session


def test_an_id_token_for_another_nonce_is_refused(client, sso):
    response = sign_in(
        client, sso, "dana", to_provider=lambda url: with_query(url, nonce="not-the-apps")
    )

    refused(response)
    assert "_auth_user_id" not in client.session


def test_an_id_token_without_a_nonce_is_refused(client, sso):
    response = sign_in(client, sso, "dana", to_provider=lambda url: with_query(url, nonce=None))

    refused(response)


def test_a_provider_that_names_another_issuer_is_refused(client, settings, sso):
    # The same server by another name: it says its issuer is http://127.0.0.1:…/o.
    elsewhere = sso.issuer.replace("127.0.0.1", "localhost")
    signin_settings(settings, sso.app_settings(issuer=elsewhere))

    response = client.post(START, {"next": "/"})

    refused(response)
    assert "_auth_user_id" not in client.session


def test_a_provider_that_does_not_answer_is_a_refusal_not_a_server_error(client, settings, sso):
    signin_settings(settings, sso.app_settings(issuer=f"http://127.0.0.1:{free_port()}/o"))

    refused(client.post(START, {"next": "/"}))


def test_signing_in_is_all_the_provider_may_do(client, sso):
    # allauth's "connect" would attach the provider's identity to whoever is signed in.
    start = client.post(START, {"next": "/", "process": "connect"})
    back = DirectoryBrowser(sso).authorize(start["Location"], "dana")

    response = client.get(local_path(back))

    assert response.status_code == 403
    assert not SocialAccount.objects.exists()


def test_the_login_page_offers_the_provider_and_passwords(client, sso):
    page = client.get("/login/").content.decode()

    assert f'action="{START}"' in page
    assert "Sign in with Example Corp" in page
    assert 'name="password"' in page


def test_the_admin_login_offers_the_provider_and_lands_on_the_admin(client, sso):
    page = client.get("/admin/login/?next=/admin/").content.decode()
    assert f'action="{START}"' in page
    assert '<input type="hidden" name="next" value="/admin/">' in page

    start = client.post(START, {"next": "/admin/"})
    back = DirectoryBrowser(sso).authorize(start["Location"], "dana")
    response = client.get(local_path(back))

    assert response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_the_sign_in_form_may_post_to_the_provider(client, sso):
    csp = client.get("/login/")["Content-Security-Policy"]

    assert f"form-action 'self' {sso.url}" in csp


def test_a_provider_sign_in_is_left_to_the_providers_own_second_factor(client, settings, sso):
    settings.MFA_REQUIRED_FOR = frozenset({"Auditors"})

    sign_in(client, sso, "dana")

    assert client.get("/").status_code == 200


def test_a_deactivated_account_is_not_signed_in_by_the_provider(client, sso):
    sign_in(Client(), sso, "luis")
    user = account_of("luis")
    user.is_active = False
    user.save()

    response = sign_in(client, sso, "luis")

    assert response.status_code == 302 and response["Location"] == "/accounts/inactive/"
    assert client.get(response["Location"]).status_code == 200
    assert "_auth_user_id" not in client.session


def test_following_a_link_to_the_provider_asks_before_leaving(client, sso):
    # A GET never starts a sign-in (a link on another site could): a button posts.
    page = client.get(START)

    assert page.status_code == 200
    assert b'<form method="post"' in page.content


def test_a_sign_in_cancelled_at_the_provider_says_so(client, sso):
    start = client.post(START, {"next": "/"})
    state = dict(parse_qsl(urlsplit(start["Location"]).query))["state"]

    response = client.get(f"{CALLBACK}?error=access_denied&state={state}")

    assert response.status_code == 302
    assert client.get(response["Location"]).status_code == 200
    assert "_auth_user_id" not in client.session
