"""The client's address behind trusted proxies: for the login lockout and the API throttle."""

import ipaddress
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from rest_framework.test import APIClient

from poolpatrol.client_address import resolve, trusted_networks
from poolpatrol.env import env_networks

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple"  # tests.factories.UserFactory's
PROXY = "10.0.0.5"


def networks(*entries: str) -> tuple:
    return trusted_networks(entries)


@pytest.mark.parametrize(
    ("remote", "forwarded", "trusted", "hops", "client"),
    [
        # Nothing trusted: the header is anyone's words.
        ("10.0.0.5", "203.0.113.7", (), 0, "10.0.0.5"),
        # The proxy appended the client; what the client wrote to its left is ignored.
        ("10.0.0.5", "203.0.113.7", (PROXY,), 0, "203.0.113.7"),
        ("10.0.0.5", "198.51.100.1, 203.0.113.7", (PROXY,), 0, "203.0.113.7"),
        # Two proxies, both in a trusted range.
        ("10.0.0.5", "203.0.113.7, 10.9.0.1", ("10.0.0.0/8",), 0, "203.0.113.7"),
        # Straight to the app, past the proxy: the forged header is not believed.
        ("198.51.100.9", "203.0.113.7", (PROXY,), 0, "198.51.100.9"),
        # By count: the hop-th entry from the right, whatever came before it.
        ("10.0.0.5", "198.51.100.1, 203.0.113.7", (), 1, "203.0.113.7"),
        ("10.0.0.5", "198.51.100.1, 203.0.113.7, 172.16.0.1", (), 2, "203.0.113.7"),
        ("10.0.0.5", "203.0.113.7", (), 2, "203.0.113.7"),
        ("10.0.0.5", "", (), 1, "10.0.0.5"),
        # An entry no proxy would write stops the walk at the last believable address.
        ("10.0.0.5", "203.0.113.7, unknown", (PROXY,), 0, "10.0.0.5"),
        ("10.0.0.5", "not-an-address, 203.0.113.7", (PROXY,), 0, "203.0.113.7"),
        # How proxies write addresses: with ports, in brackets, IPv4 mapped into IPv6.
        ("10.0.0.5", "203.0.113.7:51234", (PROXY,), 0, "203.0.113.7"),
        ("10.0.0.5", "[2001:db8::7]:443", (PROXY,), 0, "2001:db8::7"),
        ("::ffff:10.0.0.5", "2001:db8::7", (PROXY,), 0, "2001:db8::7"),
        ("10.0.0.5", "::ffff:203.0.113.7", (PROXY,), 0, "203.0.113.7"),
    ],
)
def test_it_takes_the_first_address_left_of_the_trusted_proxies(
    remote, forwarded, trusted, hops, client
):
    found = resolve(remote, forwarded, trusted=networks(*trusted), hops=hops)

    assert found == ipaddress.ip_address(client)


def test_it_has_no_address_for_a_connection_without_one():
    assert resolve("", "203.0.113.7", trusted=networks(PROXY), hops=0) is None


def test_it_refuses_a_trusted_proxy_that_is_not_an_address(monkeypatch):
    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.5, proxy.internal")

    with pytest.raises(ImproperlyConfigured, match=r"TRUSTED_PROXIES: 'proxy\.internal'"):
        env_networks("TRUSTED_PROXIES")


def test_it_takes_addresses_and_networks_as_trusted_proxies(monkeypatch):
    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.5, 10.1.0.0/16, ::1")

    assert env_networks("TRUSTED_PROXIES") == ["10.0.0.5", "10.1.0.0/16", "::1"]


@pytest.mark.slow_process
def test_it_refuses_to_start_with_both_an_address_list_and_a_count(tmp_path):
    env = os.environ | {
        "TRUSTED_PROXIES": PROXY,
        "TRUSTED_PROXY_COUNT": "1",
        "VAR_DIR": str(tmp_path),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "set TRUSTED_PROXIES or TRUSTED_PROXY_COUNT, not both" in result.stderr


# --- what uses it ---------------------------------------------------------------------------


def through_proxy(client_ip: str, forged: str = "") -> dict[str, str]:
    """What the app sees of a request the proxy passed on: the proxy's own address, and
    X-Forwarded-For with whatever the client sent and the client's address appended."""
    forwarded = f"{forged}, {client_ip}" if forged else client_ip
    return {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": forwarded}


def login(client: Client, password: str, **meta: str) -> int:
    return client.post("/login/", {"username": "coordinator", "password": password}, **meta)


@pytest.mark.django_db
def test_it_locks_out_only_the_client_behind_the_proxy_who_failed(coordinator, settings):
    settings.TRUSTED_PROXIES = [PROXY]
    attacker, rider_desk = Client(), Client()
    answers = [
        login(attacker, "wrong", **through_proxy("203.0.113.66")).status_code
        for _ in range(settings.AXES_FAILURE_LIMIT)
    ]

    real = login(rider_desk, PASSWORD, **through_proxy("198.51.100.20"))

    assert answers[-1] == 429
    assert real.status_code == 302
    assert rider_desk.session["_auth_user_id"] == str(coordinator.pk)
    assert login(Client(), PASSWORD, **through_proxy("203.0.113.66")).status_code == 429


@pytest.mark.django_db
def test_it_keeps_a_forged_forwarded_for_from_dodging_or_framing(coordinator, settings):
    settings.TRUSTED_PROXIES = [PROXY]
    attacker = Client()
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        # Each try claims to come from the real user's address, then from a new one.
        forged = "198.51.100.20" if attempt % 2 else f"192.0.2.{attempt}"
        login(attacker, "wrong", **through_proxy("203.0.113.66", forged=forged))

    dodge = login(Client(), PASSWORD, **through_proxy("203.0.113.66", forged="192.0.2.200"))
    real = login(Client(), PASSWORD, **through_proxy("198.51.100.20"))

    assert dodge.status_code == 429
    assert real.status_code == 302


@pytest.mark.django_db
def test_it_gives_each_anonymous_api_client_behind_the_proxy_its_own_budget(settings):
    settings.TRUSTED_PROXIES = [PROXY]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "100/minute", "anon": "2/minute"},
    }
    cache.clear()
    api = APIClient()

    first = [
        api.get("/api/", **through_proxy("203.0.113.66", forged=f"192.0.2.{n}")).status_code
        for n in range(3)
    ]
    other = api.get("/api/", **through_proxy("198.51.100.20")).status_code

    assert first == [200, 200, 429]  # a new forged header each time is no new budget
    assert other == 200
