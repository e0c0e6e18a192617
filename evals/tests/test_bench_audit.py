"""bench_audit runs end to end in its own process and scratch database."""

import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.qcluster_support import run_manage


@pytest.mark.evaluation
def test_it_benchmarks_a_small_program_in_a_scratch_database(tmp_path):
    result = run_manage("bench_audit", "--vanpools", "30", "--riders-per-vanpool", "3")
    assert result.returncode == 0, result.stderr
    assert "audited: 30 in" in result.stdout
    assert "model calls: 0" in result.stdout


@pytest.mark.evaluation
def test_an_unchanged_roster_audited_again_is_reported_with_no_rows_written():
    result = run_manage("bench_audit", "--vanpools", "30", "--riders-per-vanpool", "3", "--rerun")
    assert result.returncode == 0, result.stderr
    assert re.search(
        r"re-audit unchanged: 30 in [\d.]+ s = \d+ audits/s \([\d.]+ s of CPU = \d+ per "
        r"CPU-second\), rows written 0 ",
        result.stdout,
    )


@pytest.mark.evaluation
def test_two_workers_give_the_same_results_as_one_process():
    result = run_manage("bench_audit", "--vanpools", "40", "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert re.search(
        r"workers: 2, audited: 40 in [\d.]+ s = \d+ audits/s, same results as one process: yes, "
        r"duplicate cases: 0",
        result.stdout,
    ), result.stdout
    assert "largest worker process" in result.stdout


def test_a_worker_count_out_of_range_is_refused_before_anything_is_built():
    with pytest.raises(CommandError, match="--workers must be between 1 and 32"):
        call_command("bench_audit", "--workers", "33")


@pytest.mark.evaluation
def test_with_trips_the_new_checks_judge_and_an_unchanged_rerun_writes_nothing():
    result = run_manage(
        "bench_audit", "--vanpools", "30", "--riders-per-vanpool", "4", "--trips", "22",
        "--rerun", "--report",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "22 workdays of trips (2," in result.stdout or "22 workdays of trips (" in result.stdout
    assert re.search(r"rows written 0 ", result.stdout), result.stdout
    assert re.search(r"monthly report 2026-10: 30 vans in [\d.]+ s", result.stdout), result.stdout


def test_a_trip_log_longer_than_sixty_workdays_is_refused():
    with pytest.raises(CommandError, match="--trips must be between 0 and 60 workdays"):
        call_command("bench_audit", "--trips", "61")


@pytest.mark.evaluation
@pytest.mark.parametrize("shape", ["trips", "ride_days"])
def test_a_record_file_imported_again_writes_nothing_and_the_imports_peak_is_their_own(shape):
    result = run_manage("bench_import_records", "--rows", "500", "--shape", shape)
    assert result.returncode == 0, result.stderr
    assert re.search(r"first import: .* rows written [1-9][\d,]*", result.stdout), result.stdout
    assert re.search(r"same file again: .* rows written 0\n", result.stdout), result.stdout
    assert re.search(
        r"peak memory \(RSS\) of the imports: \d+ MiB \(\d+ MiB in use before them\); "
        r"of the whole process: \d+ MiB",
        result.stdout,
    ), result.stdout
