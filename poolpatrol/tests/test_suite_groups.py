"""`make test` runs the fast tests, then the ``slow_process`` ones; fast tests start no process."""

import multiprocessing
import subprocess
import sys

import pytest


def test_a_fast_test_that_starts_a_process_is_stopped_with_the_way_out():
    with pytest.raises(RuntimeError, match=r"mark it @pytest\.mark\.slow_process"):
        subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_a_fast_test_that_forks_is_stopped_too():
    process = multiprocessing.get_context("fork").Process(target=print)
    with pytest.raises(RuntimeError, match=r"mark it @pytest\.mark\.slow_process"):
        process.start()


@pytest.mark.slow_process
def test_a_test_marked_slow_process_may_start_one():
    result = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True)
    assert result.stdout.strip() == "42"
