"""Throttling: a budget per user (and so per token), 429 with Retry-After past it."""

import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from poolpatrol.env import env_rate

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def tiny_rates(settings):
    # DRF's own throttles would keep the rates they read at import; ours read
    # the current settings, so overriding them here is enough.
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "2/minute", "anon": "1/minute"},
    }
    cache.clear()
    yield
    cache.clear()


def logged_in(user):
    client = APIClient()
    client.force_login(user)
    return client


def test_past_the_budget_it_is_a_429_with_retry_after(coordinator):
    client = logged_in(coordinator)
    assert [client.get("/api/vanpools").status_code for _ in range(2)] == [200, 200]
    response = client.get("/api/vanpools")
    assert response.status_code == 429
    assert response["Retry-After"] == "60"
    error = response.json()["error"]
    assert error["code"] == "throttled"
    assert "Expected available in 60 seconds" in error["message"]


def test_each_user_has_their_own_budget(coordinator, auditor):
    first, second = logged_in(coordinator), logged_in(auditor)
    for _ in range(2):
        first.get("/api/cases")
    assert first.get("/api/cases").status_code == 429
    assert second.get("/api/cases").status_code == 200


def test_a_token_and_a_session_of_one_user_share_the_budget(auditor):
    session = logged_in(auditor)
    token = APIClient()
    token.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=auditor).key}")
    assert session.get("/api/employees").status_code == 200
    assert token.get("/api/employees").status_code == 200
    assert token.get("/api/employees").status_code == 429


def test_the_budget_frees_up_after_the_window(coordinator, _frozen_time):
    client = logged_in(coordinator)
    for _ in range(3):
        client.get("/api/pending-actions")
    _frozen_time.shift(61)
    assert client.get("/api/pending-actions").status_code == 200


@pytest.mark.parametrize("rate", ["1000/hour", "5/s", "60/minute", "10000/day"])
def test_well_formed_rates_are_taken(monkeypatch, rate):
    monkeypatch.setenv("API_THROTTLE_USER", rate)
    assert env_rate("API_THROTTLE_USER", "1/day") == rate


@pytest.mark.parametrize("rate", ["lots", "1000", "0/hour", "10/fortnight", "-5/minute"])
def test_a_malformed_rate_stops_the_start_up(monkeypatch, rate):
    monkeypatch.setenv("API_THROTTLE_USER", rate)
    with pytest.raises(ImproperlyConfigured, match="API_THROTTLE_USER"):
        env_rate("API_THROTTLE_USER", "1000/hour")
