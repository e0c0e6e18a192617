"""bench_race: against a gunicorn of its own, no seat is cancelled over a reply that came first."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.qcluster_support import process_env

ROOT = Path(__file__).resolve().parents[2]
SECRET = "bench:race-secret"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def server(migrated_var_dir: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """gunicorn with 2 workers on the embedded database, as the docs run it; (url, env)."""
    env = process_env(migrated_var_dir, WEBHOOK_SECRET=SECRET, DEBUG="false")
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-w", "2", "-b", f"127.0.0.1:{port}",
         "poolpatrol.wsgi"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(url, process)
        yield url, env
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def _wait_for(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            errors = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"gunicorn exited: {errors}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError("gunicorn did not answer /health within 60 s")


@pytest.mark.evaluation
def test_it_races_approvals_against_replies_and_counts_none_cancelled_over_a_reply(server):
    url, env = server
    result = subprocess.run(
        [sys.executable, "manage.py", "bench_race", "--url", url, "--secret", SECRET,
         "--tries", "3"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert "cancellations against a newer or quarantined reply: 0 of 3" in result.stdout
    ended = re.search(r"actions: (.*); answers 5xx: 0 \(sqlite;", result.stdout)
    assert ended, result.stdout
    # Each try ended approved (the approval went first), pending (refused: a reply or a
    # quarantined message came first, unread) or superseded; which is luck, the sum is not.
    counts = [part.split() for part in ended[1].split(", ")]
    assert {status for status, _ in counts} <= {"approved", "pending", "superseded"}
    assert sum(int(n) for _, n in counts) == 3


@pytest.mark.parametrize(
    ("option", "value"), [("--tries", "0"), ("--tries", "501"), ("--url", "http://10.0.0.1:80")]
)
def test_unbounded_or_remote_races_are_refused(option, value):
    with pytest.raises(CommandError, match=option):
        call_command("bench_race", "--secret", "a:b", option, value)
