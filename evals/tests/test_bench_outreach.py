"""The outreach benchmark runs end to end in a scratch database and proves its own retries."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.evaluation
def test_it_sends_receives_and_acts_once_each_on_a_small_program(tmp_path):
    env = {**os.environ, "VAR_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "bench_outreach", "--cases", "3"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "audit + outreach: 3 cases, 3 emails" in out
    assert "again: 0 more emails" in out
    assert out.count("status {200: 3}") == 2
    assert "inbound rows: 3 after the first, 3 after the redelivery" in out
    assert "reply loop: 3 replies" in out and "3 emails" in out
    assert "again: {'skipped': 3}, 0 emails" in out


def test_it_refuses_an_empty_program():
    with pytest.raises(CommandError, match="--cases must be at least 1"):
        call_command("bench_outreach", "--cases", "0")
