"""A throw-away database for benchmarks and evaluations.

Commands that build synthetic programs must never touch the real data, so they
run inside a fresh database made the way the test runner makes one (migrated,
then dropped). On SQLite it is a file, not memory, so figures match the
embedded default's real I/O.
"""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection


@contextmanager
def scratch_database() -> Iterator[str]:
    """Switch the default connection to a new, migrated database; drop it after."""
    original_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict.setdefault("TEST", {})
    # Tables straight from the models, not by replaying every migration: the
    # scratch data is synthetic and needs no data migrations (groups, schedules).
    test_settings["MIGRATE"] = False
    with tempfile.TemporaryDirectory(prefix="poolpatrol-scratch-") as folder:
        if connection.vendor == "sqlite":
            test_settings["NAME"] = str(Path(folder) / "scratch.sqlite3")
        name = connection.creation.create_test_db(
            verbosity=0, autoclobber=True, serialize=False, keepdb=False
        )
        try:
            yield name
        finally:
            connection.creation.destroy_test_db(original_name, verbosity=0)
