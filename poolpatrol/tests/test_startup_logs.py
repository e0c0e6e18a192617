"""Each startup line and log line prints once, in our format.

Logging is configured once per process from settings, so each check runs
manage.py in a fresh interpreter with DEBUG on, as `make run` does.
"""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.qcluster_support import ROOT, process_env

# Starts manage.py and runserver in processes: `make test` runs it in its slow_process step.
pytestmark = pytest.mark.slow_process


def debug_env(var_dir: Path) -> dict[str, str]:
    return process_env(var_dir, DEBUG="true", LOG_LEVEL="info", PYTHONUNBUFFERED="1")


def test_django_log_lines_print_once(tmp_path):
    # Django's own console handler on "django" printed each line a second time.
    code = (
        "import logging\n"
        "logging.getLogger('django.utils.autoreload').info('probe-autoreload')\n"
        "logging.getLogger('django.request').error('probe-request')\n"
        "logging.getLogger('django.server').warning('probe-server')\n"
        "logging.getLogger('django-q').info('probe-q')\n"
        "logging.getLogger('poolpatrol').info('probe-ours')\n"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env=debug_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    for probe in ("autoreload", "request", "server", "q", "ours"):
        lines = [line for line in output.splitlines() if f"probe-{probe}" in line]
        assert len(lines) == 1, output
        assert lines[0].split()[2] in {"INFO", "WARNING", "ERROR"}, lines  # our format
    # A command that serves no logins does not announce django-axes.
    assert "AXES: BEGIN" not in output


def test_runserver_says_each_startup_line_once(migrated_var_dir):
    env = debug_env(migrated_var_dir)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = migrated_var_dir / "runserver.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the autoreloader's watcher and its server: one group
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
        time.sleep(0.5)  # the request's log line
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    output = log.read_text()
    assert output.count("AXES: BEGIN") == 1, output
    assert output.count("Watching for file changes") == 1, output
    assert output.count("Starting development server") == 1, output
    assert output.count("GET /health 200") == 1, output
