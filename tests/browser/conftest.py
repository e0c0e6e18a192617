"""Real Chromium (Debian's /usr/bin/chromium) driving the live dashboard.

Screenshots of every page a test visits are saved under
``var/screenshots/`` (or ``$SCREENSHOT_DIR``) as test artifacts, at the
desktop and phone widths the issue asks for.
"""

import os
from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
PASSWORD = "browser-test-password"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="package", autouse=True)
def _orm_beside_playwright():
    # Playwright's sync API runs an event loop in this thread; the ORM calls the
    # tests make between page actions are still synchronous and safe. Set for
    # this package only, so it never leaks into other tests' subprocesses.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: install it (apt-get install -y chromium) "
            "or set CHROMIUM_PATH; `make test` and .ci/run install it on Debian."
        )
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": DESKTOP}


@pytest.fixture
def screenshots():
    """Save a full-page screenshot: ``shot(page, "queue")`` → var/screenshots/queue.png."""
    folder = Path(os.environ.get("SCREENSHOT_DIR", settings.VAR_DIR / "screenshots"))
    folder.mkdir(parents=True, exist_ok=True)

    def shot(page, name: str, *, phone: bool = True) -> None:
        page.screenshot(path=str(folder / f"{name}-1280.png"), full_page=True)
        if phone:
            page.set_viewport_size(PHONE)
            page.screenshot(path=str(folder / f"{name}-390.png"), full_page=True)
            page.set_viewport_size(DESKTOP)

    return shot


@pytest.fixture
def log_in(live_server):
    """Log ``user`` in through the real login form (django-axes and all)."""

    def go(page, user) -> None:
        user.set_password(PASSWORD)
        user.save()
        page.goto(f"{live_server.url}/login/")
        page.fill("#id_username", user.username)
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")

    return go
