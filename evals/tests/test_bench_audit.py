"""bench_audit runs end to end in its own process and scratch database."""

import pytest

from tests.qcluster_support import run_manage


@pytest.mark.evaluation
def test_it_benchmarks_a_small_program_in_a_scratch_database(tmp_path):
    result = run_manage("bench_audit", "--vanpools", "30", "--riders-per-vanpool", "3")
    assert result.returncode == 0, result.stderr
    assert "audited: 30 in" in result.stdout
    assert "model calls: 0" in result.stdout
