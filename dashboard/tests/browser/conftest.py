"""Real Chromium (Debian's /usr/bin/chromium) driving the live dashboard.

Screenshots of every page a test visits are saved under
``var/screenshots/`` (or ``$SCREENSHOT_DIR``) as test artifacts, at the
desktop and phone widths the issue asks for.

The live server needs real transactions: mark tests
``pytest.mark.django_db(transaction=True, serialized_rollback=True)``; the
second makes pytest-django snapshot the migrated database when it creates it,
and each browser test starts from that snapshot (see below).
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
def _migrated_state(django_db_setup):
    """The test database as migrations left it, serialized when it was created.

    Taken before Playwright's event loop starts in this thread: Django refuses
    ORM calls from inside a running loop (session fixtures are set up before
    the package-scoped switch above), and once the loop runs, ``connections``
    hands this thread new connection objects (asgiref keeps them per context)
    that do not carry the snapshot.
    """
    from django.db import connections

    return {
        alias: connections[alias]._test_serialized_contents
        for alias in connections
        if hasattr(connections[alias], "_test_serialized_contents")
    }


@pytest.fixture(scope="session")
def playwright(_migrated_state, playwright):
    return playwright


@pytest.fixture(autouse=True)
def _start_from_the_migrated_database(_migrated_state, transactional_db):
    """Each browser test starts from exactly the migrated database, whatever ran before.

    Other transactional tests end with a flush that empties the rows data
    migrations made (the Coordinators and Auditors groups) and re-creates
    content types and permissions under new ids, so Django's own serialized
    rollback cannot load its snapshot on top. Empty everything, then load it.
    """
    from django.core.management import call_command
    from django.db import connections

    if not _migrated_state:
        pytest.fail("Browser tests need pytest.mark.django_db(serialized_rollback=True).")
    for alias, contents in _migrated_state.items():
        call_command(
            "flush", database=alias, interactive=False, inhibit_post_migrate=True, verbosity=0
        )
        connections[alias].creation.deserialize_db_from_string(contents)


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
