"""Local passwords switched off (LOCAL_LOGIN=false), and the sign-in settings' parsing."""

import json

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import authenticate
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory

from poolpatrol.signin.config import (
    local_login_from_env,
    mfa_required_for_from_env,
    oidc_from_env,
    parse_role_map,
)
from poolpatrol.tests.test_settings import run_manage
from tests.oidc_support import app_settings, signin_settings

PASSWORD = "a-long-enough-password"


@pytest.fixture
def passwords_off(settings):
    signin_settings(settings, app_settings("https://login.example-corp.test"), LOCAL_LOGIN=False)


@pytest.fixture
def coordinator_with_password(coordinator):
    coordinator.set_password(PASSWORD)
    coordinator.save()
    return coordinator


@pytest.mark.parametrize("url", ["/login/", "/admin/login/?next=/admin/"])
def test_a_right_password_is_refused_when_local_login_is_off(
    client, passwords_off, coordinator_with_password, url
):
    response = client.post(url, {"username": "coordinator", "password": PASSWORD})

    assert response.status_code == 403
    assert b"Passwords are switched off here: sign in with Example Corp." in response.content
    assert "_auth_user_id" not in client.session
    # Refused before the password is read: nothing for django-axes to count.
    assert not AccessAttempt.objects.exists()


def test_the_login_page_offers_only_the_provider_when_local_login_is_off(client, passwords_off):
    page = client.get("/login/").content.decode()

    assert "Sign in with Example Corp" in page
    assert 'name="password"' not in page


def test_a_session_made_with_a_password_ends_when_local_login_is_switched_off(
    client, settings, coordinator_with_password
):
    client.post("/login/", {"username": "coordinator", "password": PASSWORD})
    assert client.get("/").status_code == 200

    signin_settings(settings, app_settings("https://login.example-corp.test"), LOCAL_LOGIN=False)
    response = client.get("/cases/")

    assert response.status_code == 302
    assert response["Location"] == "/login/?next=%2Fcases%2F"
    assert "_auth_user_id" not in client.session
    assert b"Passwords are switched off here" in client.get(response["Location"]).content


def test_no_path_signs_anyone_in_with_a_password_when_local_login_is_off(
    passwords_off, coordinator_with_password
):
    request = RequestFactory().post("/accounts/reauthenticate/")

    assert authenticate(request, username="coordinator", password=PASSWORD) is None


def test_passwords_still_work_with_single_sign_on_beside_them(
    client, settings, coordinator_with_password
):
    signin_settings(settings, app_settings("https://login.example-corp.test"))

    response = client.post("/login/", {"username": "coordinator", "password": PASSWORD})

    assert response.status_code == 302 and response["Location"] == "/"


def test_it_refuses_to_start_with_local_login_off_and_no_provider(tmp_path):
    result = run_manage("check", LOCAL_LOGIN="false", VAR_DIR=str(tmp_path))

    assert result.returncode != 0
    assert "LOCAL_LOGIN=false needs single sign-on: set OIDC_ISSUER" in result.stderr


PROVIDER_ENV = {
    "OIDC_ISSUER": "https://login.example-corp.test/tenant",
    "OIDC_CLIENT_ID": "pool-patrol",
    "OIDC_CLIENT_SECRET": "s3cret",
    "OIDC_ROLE_MAP": json.dumps({"cn=auditors,ou=groups": "Auditors"}),
}


def use_env(monkeypatch, env: dict[str, str]) -> None:
    for name in [*PROVIDER_ENV, "OIDC_SCOPES", "OIDC_NAME", "OIDC_GROUPS_CLAIM", "LOCAL_LOGIN"]:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def test_it_reads_the_provider_from_the_environment(monkeypatch):
    use_env(monkeypatch, PROVIDER_ENV | {"OIDC_SCOPES": "openid,profile groups"})

    oidc = oidc_from_env(production=True)

    assert oidc is not None
    assert oidc.issuer == "https://login.example-corp.test/tenant"
    assert oidc.origin == "https://login.example-corp.test"
    assert oidc.scopes == ("openid", "profile", "groups")
    assert oidc.groups_claim == "groups"
    assert oidc.role_map == {"cn=auditors,ou=groups": ("Auditors",)}
    assert oidc.name == "single sign-on"


def test_without_an_issuer_there_is_no_single_sign_on_and_passwords_stay(monkeypatch):
    use_env(monkeypatch, {})

    assert oidc_from_env(production=False) is None
    assert local_login_from_env(None) is True


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"OIDC_CLIENT_SECRET": ""}, "OIDC_CLIENT_SECRET must be set too"),
        ({"OIDC_ROLE_MAP": ""}, "OIDC_ROLE_MAP must be set too"),
        ({"OIDC_ISSUER": "login.example-corp.test"}, "must be the provider's issuer URL"),
        ({"OIDC_ISSUER": "http://login.example-corp.test"}, "must be https:// when PRODUCTION"),
        ({"OIDC_SCOPES": "profile email"}, "must include openid"),
        ({"OIDC_ROLE_MAP": "auditors=Auditors"}, "OIDC_ROLE_MAP is not JSON"),
        ({"OIDC_ROLE_MAP": '["Auditors"]'}, "must be a JSON object"),
        ({"OIDC_ROLE_MAP": '{"admins": "Admins"}'}, "group 'admins' maps to 'Admins'"),
    ],
)
def test_it_refuses_a_provider_setting_that_does_not_parse(monkeypatch, env, message):
    use_env(monkeypatch, PROVIDER_ENV | env)

    with pytest.raises(ImproperlyConfigured, match=message):
        oidc_from_env(production=True)


def test_a_group_may_grant_several_roles_named_in_any_case():
    role_map = parse_role_map('{"pool-admins": ["auditors", "Coordinators", "AUDITORS"]}')

    assert role_map == {"pool-admins": ("Auditors", "Coordinators")}


@pytest.mark.parametrize(
    ("raw", "required"),
    [
        ("none", set()),
        ("", set()),
        ("auditors", {"Auditors"}),
        ("Auditors, coordinators", {"Auditors", "Coordinators"}),
        ("all", {"all"}),
    ],
)
def test_it_reads_who_needs_a_second_factor(monkeypatch, raw, required):
    monkeypatch.setenv("MFA_REQUIRED_FOR", raw)

    assert mfa_required_for_from_env() == required


@pytest.mark.parametrize("raw", ["admins", "auditors,riders", "all,auditors"])
def test_it_refuses_a_second_factor_rule_it_does_not_know(monkeypatch, raw):
    monkeypatch.setenv("MFA_REQUIRED_FOR", raw)

    with pytest.raises(ImproperlyConfigured, match="MFA_REQUIRED_FOR"):
        mfa_required_for_from_env()
