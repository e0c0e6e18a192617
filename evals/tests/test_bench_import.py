"""The roster import benchmark runs end to end in its own scratch database (a fresh process)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def bench_import(tmp_path: Path, *extra: str) -> str:
    env = {**os.environ, "VAR_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "bench_import", "--employees", "20", "--runs", "2", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def rows_written(output: str) -> int:
    found = re.search(r"history rows written: (\d+)", output)
    assert found, output
    return int(found.group(1))


@pytest.mark.evaluation
def test_it_times_an_import_of_every_employee_changed_and_counts_the_history_it_wrote(tmp_path):
    output = bench_import(tmp_path)
    assert "import of 20 changed employees: median" in output
    # Each import: 20 employees, a seat given up and a seat taken (two movers), leave.
    assert rows_written(output) >= 2 * (20 + 2 * 2)
    assert not (tmp_path / "db.sqlite3").exists()


@pytest.mark.evaluation
def test_without_history_it_runs_the_same_imports_and_records_nothing(tmp_path):
    output = bench_import(tmp_path, "--without-history")
    assert "import of 20 changed employees: median" in output
    assert rows_written(output) == 0
    assert "recording switched off" in output
