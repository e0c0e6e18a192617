"""A real `manage.py qcluster` in its own process, and /health asked from another.

Settings load once per process, so both run in fresh interpreters, as a
worker and a web process would.
"""

import os
import subprocess
import sys
from pathlib import Path

from poolpatrol.qcluster import running_qcluster

__all__ = ["clusters_seen", "manage", "process_env", "run_manage", "running_qcluster"]

ROOT = Path(__file__).resolve().parent.parent


def process_env(var_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    return env | {"VAR_DIR": str(var_dir), "LOG_LEVEL": "warning", "Q_WORKERS": "1"} | extra


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def clusters_seen(env: dict[str, str], wait: float = 0) -> int:
    """What /health counts as "clusters", from a web process: the first count above 0
    within `wait` seconds (asked every half second), else 0."""
    code = (
        "import time\n"
        "from poolpatrol.health import queue_status\n"
        f"deadline = time.monotonic() + {wait}\n"
        "while not (seen := queue_status()['clusters']) and time.monotonic() < deadline:\n"
        "    time.sleep(0.5)\n"
        "print(seen)\n"
    )
    return int(manage(env, "shell", "--no-imports", "-c", code).splitlines()[-1])


def run_manage(*args: str) -> subprocess.CompletedProcess[str]:
    """`manage.py ARGS` in a fresh interpreter on the embedded default; the result, not asserted."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env | {"LOG_LEVEL": "warning"},
        capture_output=True,
        text=True,
        timeout=300,
    )
