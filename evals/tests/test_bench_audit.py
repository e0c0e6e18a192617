"""bench_audit runs end to end in its own process and scratch database."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env | {"LOG_LEVEL": "warning"},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.evaluation
def test_it_benchmarks_a_small_program_in_a_scratch_database(tmp_path):
    result = run_manage("bench_audit", "--vanpools", "30", "--riders-per-vanpool", "3")
    assert result.returncode == 0, result.stderr
    assert "audited: 30 in" in result.stdout
    assert "model calls: 0" in result.stdout
