import fcntl
import os
import shutil
import subprocess
from pathlib import Path
from unittest import mock

import pytest
import time_machine
from django.core.cache import cache

from tests.factories import UserFactory
from tests.oidc_support import running_provider
from tests.qcluster_support import manage, process_env


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests last, after pytest-django's own ordering.

    Playwright keeps an event loop running in the main thread from its first
    test to the end of the session, and Django refuses synchronous ORM calls
    under a running loop; only the browser package allows them.
    """
    items.sort(key=lambda item: "/tests/browser/" in item.nodeid)


class StartsAProcess(RuntimeError):
    """A fast test started a process or a live server; it belongs in the slow_process group."""


@pytest.fixture(autouse=True)
def _no_processes_in_the_fast_group(request: pytest.FixtureRequest):
    """Only tests marked ``slow_process`` may start a process or a live server.

    `make test` runs the fast tests first and the ``slow_process`` ones as their
    own step (docs/performance.md, Test suite); a process started from an
    unmarked test would hold up the fast group, so it fails here with the way out.
    The browser tests and the ``evaluation`` and ``model_server`` tests are steps
    and targets of their own, which start servers and processes by design.
    """
    node = request.node
    if "/tests/browser/" in node.nodeid or any(
        node.get_closest_marker(name) for name in ("slow_process", "evaluation", "model_server")
    ):
        yield
        return
    if "live_server" in request.fixturenames:
        pytest.fail("this test uses live_server: mark it @pytest.mark.slow_process")

    def refuse(*args: object, **kwargs: object) -> None:
        raise StartsAProcess("this test starts a process: mark it @pytest.mark.slow_process")

    with (
        mock.patch.object(subprocess.Popen, "_execute_child", refuse),
        mock.patch.object(os, "fork", refuse),
    ):
        yield


# Every test runs at one fixed moment unless it travels on purpose.
FROZEN_NOW = "2026-11-23T09:00:00-08:00"


@pytest.fixture(autouse=True)
def _frozen_time():
    with time_machine.travel(FROZEN_NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture(autouse=True)
def _fresh_cache():
    # The API's throttles count in the cache and time is frozen, so counts
    # would never expire: every test starts from an empty cache.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def run(django_capture_on_commit_callbacks):
    """Call ``fn`` and then run what it queued on commit (django-q2 is sync in tests)."""

    def call(fn, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return call


@pytest.fixture
def auditor(db):
    return UserFactory(username="auditor", is_staff=True, groups=["Auditors"])


@pytest.fixture
def coordinator(db):
    return UserFactory(username="coordinator", is_staff=True, groups=["Coordinators"])


@pytest.fixture
def outsider(db):
    """Logged in, but neither staff nor in a group: must be refused everywhere."""
    return UserFactory(username="outsider")


@pytest.fixture(scope="session")
def _migrated_database_file(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """One embedded database migrated by `manage.py migrate` for the whole run.

    pytest-xdist's workers share the parent of their temporary folders: the
    first to take the lock migrates, the others wait and use its file.
    """
    base = tmp_path_factory.getbasetemp()
    root = base if worker_id == "master" else base.parent
    folder = root / "migrated"
    with (root / "migrated.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "done").exists():
            folder.mkdir(exist_ok=True)
            manage(process_env(folder), "migrate", "--no-input")
            (folder / "done").touch()
    return folder / "db.sqlite3"


@pytest.fixture
def migrated_var_dir(tmp_path: Path, _migrated_database_file: Path) -> Path:
    """A VAR_DIR whose embedded database is already migrated, for tests that run
    manage.py in other processes: a copy, so each test starts from the same file
    without replaying every migration (about 4 s) itself."""
    shutil.copy(_migrated_database_file, tmp_path / "db.sqlite3")
    return tmp_path


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory: pytest.TempPathFactory):
    """A real OpenID Connect provider on loopback (tests/oidc_provider), one per test process."""
    with running_provider(tmp_path_factory.mktemp("oidc-provider")) as provider:
        yield provider
