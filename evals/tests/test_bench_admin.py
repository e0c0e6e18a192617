"""The benchmark runs end to end in its own scratch database (a fresh process)."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.evaluation
def test_it_reports_constant_changelist_queries_without_touching_real_data(tmp_path):
    env = {**os.environ, "VAR_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "bench_admin", "--small", "2", "--large", "5", "--runs", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    # Every registered model, header and footer lines aside.
    rows = [line.split() for line in result.stdout.splitlines()[1:-1]]
    assert {row[0] for row in rows} >= {"Vanpool", "Employee", "Case", "Message", "AgentRun"}
    assert all(row[1] == row[2] for row in rows), result.stdout
    assert "<- grows" not in result.stdout
    # The real (embedded) database was never migrated or written.
    real_db = tmp_path / "db.sqlite3"
    tables = sqlite3.connect(real_db).execute("select name from sqlite_master").fetchall()
    assert tables == []
