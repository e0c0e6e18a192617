"""The reader benchmark reads labelled replies and reports speed and memory."""

import pytest
from django.core.management import CommandError, call_command


def test_it_reports_the_median_p95_and_the_memory_the_reader_takes(capsys):
    call_command("bench_reader", "--limit", "3")
    out = capsys.readouterr().out
    assert "3 readings of 3 replies" in out
    assert "wall: median" in out and "cpu: median" in out and "p95" in out
    assert "process grew" in out


def test_it_refuses_when_there_is_nothing_to_read():
    with pytest.raises(CommandError, match="no replies to read"):
        call_command("bench_reader", "--runs", "0")
