"""A ``manage.py qcluster`` in a process of its own, stopped with its workers afterwards.

For the benchmark that fans an audit out to real workers and for the tests
that need a real cluster; production starts clusters from the Procfile.
"""

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def running_qcluster(env: dict[str, str]) -> Iterator[subprocess.Popen]:
    """Start a cluster with ``env``; on the way out, TERM it (KILL its group if it hangs)."""
    cluster = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield cluster
    finally:
        cluster.send_signal(signal.SIGTERM)
        try:
            cluster.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait(timeout=10)


def current_database_url() -> str:
    """The database this process uses (a scratch or test one included), as a worker's URL."""
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
