"""Production mode is checked in a fresh interpreter: settings load once per process."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Starts manage.py check in fresh interpreters: `make test` runs it in its slow_process step.
pytestmark = pytest.mark.slow_process

ROOT = Path(__file__).resolve().parents[2]
GOOD_KEY = "k" * 20 + "-production-secret-" + "z" * 20


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    unset = {"SECRET_KEY", "ALLOWED_HOSTS", "WEBHOOK_SECRET"}
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"ALLOWED_HOSTS": "pool.example"}, "needs SECRET_KEY"),
        ({"SECRET_KEY": GOOD_KEY}, "needs ALLOWED_HOSTS"),
        (
            {"SECRET_KEY": GOOD_KEY, "ALLOWED_HOSTS": "pool.example", "DEBUG": "1"},
            "DEBUG must be off",
        ),
        ({"SECRET_KEY": GOOD_KEY, "ALLOWED_HOSTS": "pool.example"}, "needs WEBHOOK_SECRET"),
    ],
)
def test_it_refuses_to_start_in_production_without_its_settings(env, message, tmp_path):
    result = run_manage("check", PRODUCTION="true", VAR_DIR=str(tmp_path), **env)
    assert result.returncode != 0
    assert message in result.stderr


def test_it_passes_the_deploy_check_with_production_settings(tmp_path):
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        PRODUCTION="true",
        SECRET_KEY=GOOD_KEY,
        ALLOWED_HOSTS="pool.example",
        WEBHOOK_SECRET="esp:" + "w" * 32,
        VAR_DIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_it_refuses_a_typo_in_a_setting(tmp_path):
    result = run_manage("check", DEFAULT_MAX_COMMUTE_MILES="fifty", VAR_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "DEFAULT_MAX_COMMUTE_MILES='fifty' is not an integer" in result.stderr
