import pytest
import time_machine
from django.core.cache import cache

from tests.factories import UserFactory


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests last, after pytest-django's own ordering.

    Playwright keeps an event loop running in the main thread from its first
    test to the end of the session, and Django refuses synchronous ORM calls
    under a running loop; only the browser package allows them.
    """
    items.sort(key=lambda item: "/tests/browser/" in item.nodeid)


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
