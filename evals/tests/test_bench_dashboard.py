"""The dashboard benchmark runs end to end in its own scratch database (a fresh process)."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"review-queue", "case-list", "case-detail", "vanpool-detail", "program"}


@pytest.mark.evaluation
def test_it_times_every_page_at_a_tiny_size_without_touching_real_data(tmp_path):
    env = {**os.environ, "VAR_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "bench_dashboard",
            "--cases",
            "30",
            "--actions",
            "10",
            "--riders",
            "48",
            "--runs",
            "2",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # --decided defaults to --actions: decided actions feed the program page's time to decide.
    assert lines[0].startswith("30 cases, 10 pending actions, 10 decided, 48 riders")
    rows = {line.split()[0]: line.split()[1:4] for line in lines[2:9]}
    assert set(rows) >= PAGES
    assert all(float(median) > 0 and int(queries) > 0 for median, _, queries in rows.values())
    real_db = tmp_path / "db.sqlite3"
    tables = sqlite3.connect(real_db).execute("select name from sqlite_master").fetchall()
    assert tables == []


def test_the_goal_is_150_ms_up_to_10_000_cases_and_300_ms_beyond():
    from evals.management.commands.bench_dashboard import goal_ms

    assert (goal_ms(30), goal_ms(10_000), goal_ms(10_001), goal_ms(100_000)) == (150, 150, 300, 300)
