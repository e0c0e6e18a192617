"""`make run` and `make test` share one environment, and a re-run keeps the demo logins.

Read from `make -n` (the commands make would run), with uv on PATH so no
bootstrap step is printed.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Starts make, to read its plan: `make test` runs it in its slow_process step.
pytestmark = [
    pytest.mark.slow_process,
    pytest.mark.skipif(not shutil.which("make"), reason="needs make"),
]


def planned(*args: str) -> list[str]:
    result = subprocess.run(
        ["make", "-n", "UV=uv", *args], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return result.stdout.splitlines()


def test_setup_keeps_the_dev_group_that_make_test_installs():
    (sync,) = [line for line in planned("setup") if " sync " in line]
    # --no-dev alone is exact: it would uninstall pytest & co. that make test re-installs.
    assert "--inexact" in sync.split()


@pytest.mark.parametrize("target", ["run", "test"])
def test_uv_run_does_not_sync_again(target):
    runs = [line for line in planned(target) if re.search(r"\buv run\b", line)]
    assert runs
    assert all("--no-sync" in line for line in runs), runs


def test_a_rerun_keeps_the_demo_passwords():
    (load,) = [line for line in planned("demo") if "load_demo" in line]
    assert "--reset-passwords" not in load


@pytest.mark.parametrize("value", ["1", "true"])
def test_new_demo_passwords_when_asked(value):
    (load,) = [line for line in planned("demo", f"RESET_PASSWORDS={value}") if "load_demo" in line]
    assert "--reset-passwords" in load
