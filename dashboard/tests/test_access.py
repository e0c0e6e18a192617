"""Who gets into the dashboard, and the headers and lockout that guard it."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

PAGES = ["review-queue", "case-list", "vanpool-list", "program"]


@pytest.mark.parametrize("name", PAGES)
def test_anonymous_visitors_are_sent_to_the_login_page(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")


@pytest.mark.parametrize("name", PAGES)
def test_logged_in_outsiders_are_refused(client, outsider, name):
    client.force_login(outsider)
    assert client.get(reverse(name)).status_code == 403


@pytest.mark.parametrize("name", PAGES)
def test_coordinators_and_auditors_get_in(client, coordinator, auditor, name):
    for user in (coordinator, auditor):
        client.force_login(user)
        assert client.get(reverse(name)).status_code == 200


def test_pages_carry_the_security_headers(client, coordinator):
    client.force_login(coordinator)
    response = client.get(reverse("review-queue"))
    csp = response["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp
    assert (
        "script-src 'self'" in csp
        and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    )
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"


def test_the_csrf_token_rides_on_body_for_htmx(client, coordinator):
    client.force_login(coordinator)
    html = client.get(reverse("review-queue")).content.decode()
    assert '<body hx-headers=\'{"X-CSRFToken": "' in html
    assert "/static/django-htmx/" in html or "htmx" in html


def test_the_login_page_logs_a_coordinator_in_and_lands_on_the_queue(client, coordinator):
    coordinator.set_password("a-long-enough-password")
    coordinator.save()
    response = client.post(
        reverse("login"), {"username": "coordinator", "password": "a-long-enough-password"}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("review-queue")


def test_repeated_failed_logins_lock_the_account_for_a_while(client, coordinator, settings):
    coordinator.set_password("a-long-enough-password")
    coordinator.save()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(reverse("login"), {"username": "coordinator", "password": "wrong"})

    response = client.post(
        reverse("login"), {"username": "coordinator", "password": "a-long-enough-password"}
    )

    assert response.status_code == 429
    assert b"Too many failed logins" in response.content
    assert "_auth_user_id" not in client.session
