"""Logging in to the dashboard in a real browser."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_a_coordinator_logs_in_and_lands_on_the_review_queue(
    page, live_server, log_in, coordinator, screenshots
):
    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url
    screenshots(page, "login")

    log_in(page, coordinator)

    assert page.get_by_role("link", name="Review queue").is_visible()
    assert page.locator("nav [aria-current=page]").inner_text() == "Review queue"


def test_a_wrong_password_says_so_and_stays_on_the_login_page(page, live_server, coordinator):
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", coordinator.username)
    page.fill("#id_password", "not-the-password")
    page.click("button[type=submit]")

    assert page.get_by_role("alert").is_visible()
    assert "/login/" in page.url
