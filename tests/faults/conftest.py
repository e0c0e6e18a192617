"""The fault suite: one test per named scenario (docs/reliability.md), `make faults` alone.

Every test here carries the ``faults`` marker, so ``pytest -m faults`` picks
them out; they also run with the rest of the suite, on SQLite and on
PostgreSQL in CI.
"""

from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.faults)
