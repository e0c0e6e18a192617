"""Lifecycle scenarios in `manage.py evaluate`: scripted cases on a frozen, advancing clock."""

import datetime as dt
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from evals.harness import FrozenClock, latency_percentiles, parse_offset, read_cases, run_cases

ROOT = Path(__file__).resolve().parents[2]
LIFECYCLE = ROOT / "evals" / "data" / "lifecycle" / "coverage.jsonl"
DAY = "Mon-Fri 07:00-16:00"


def scenario(events, expected, *, riders=None, sid="s-1", shifts=None):
    return {
        "kind": "lifecycle",
        "id": sid,
        "program": {
            "vanpool": {"id": "VP-901", "pickup_zip": "94587", "schedule": DAY},
            "shifts": shifts or {"DAY": DAY},
            "riders": riders
            or [
                {"employee_id": "EMP-1", "home_zip": "94587", "shift": "DAY"},
                {"employee_id": "EMP-2", "home_zip": "90026", "shift": "DAY"},
            ],
        },
        "events": events,
        "expected": expected,
    }


def write(tmp_path, *cases):
    path = tmp_path / "lifecycle.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in cases))
    return path


def run(tmp_path, *cases):
    return run_cases(read_cases(write(tmp_path, *cases)))


CANCELLED = {"status": "closed", "outcome": "cancelled", "human_decisions": 1}


# The loop commits and runs its follow-on tasks on commit: real transactions.
@pytest.mark.django_db(transaction=True)
def test_a_silent_rider_ends_in_an_approved_cancellation(tmp_path):
    events = [
        {"at": "+0d", "do": "audit"},
        {"at": "+7d", "do": "sweep"},
        {
            "at": "+8d",
            "do": "decide",
            "action": "cancel_membership",
            "decision": "approve",
            "employee": "EMP-2",
            "note": "confirmed",
        },
    ]
    report = run(tmp_path, scenario(events, {**CANCELLED, "cancelled": ["EMP-2"]}))
    [result] = report.results
    assert result.correct, result.got
    assert result.got["emails_sent"] == 2  # the first letter and the cancellation
    assert result.got["proposed"] == ["EMP-2"]
    metrics = report.metrics()
    assert metrics["cancel_precision"] == 1.0
    assert metrics["automation_rate"] == 0.0
    assert metrics["human_decisions_per_case"] == 1.0
    assert metrics["model_calls_per_case"] == 0.0
    assert metrics["faithfulness_rate"] == 1.0


@pytest.mark.django_db(transaction=True)
def test_automation_is_read_over_the_arrival_sample_and_coverage_walks_are_shown_apart(tmp_path):
    clean_riders = [{"employee_id": "EMP-1", "home_zip": "94587", "shift": "DAY"}]
    clean = scenario(
        [{"at": "+0d", "do": "audit"}],
        {"status": "none", "human_decisions": 0},
        riders=clean_riders,
        sid="clean",
    )
    waiting = {
        **scenario(
            [{"at": "+0d", "do": "audit"}, {"at": "+7d", "do": "sweep"}],
            {
                "status": "pre_cancel",
                "human_decisions": 0,
                "proposed": ["EMP-2"],
            },
            sid="walk",
        ),
        "mix": "coverage",
    }
    report = run(tmp_path, clean, waiting)
    assert [r.correct for r in report.results] == [True, True]
    assert [r.mix for r in report.results] == ["arrival", "coverage"]
    metrics = report.metrics()
    assert metrics["lifecycle_accuracy"] == 1.0  # accuracy counts both
    assert metrics["arrival_cases"] == 1
    assert metrics["automation_rate"] == 1.0
    assert metrics["automation_rate_all"] == 0.5
    only_walks = run(tmp_path, waiting).metrics()
    assert "automation_rate" not in only_walks  # no sample of arrivals: no rate to hold
    assert only_walks["automation_rate_all"] == 0.0
    assert report.below_target() == []


@pytest.mark.django_db(transaction=True)
def test_a_fix_and_a_reply_close_the_case_and_each_scenario_starts_empty(tmp_path):
    fixed = [
        {"at": "+0d", "do": "audit"},
        {"at": "+1d", "do": "reply", "from": "EMP-2", "text": "How is the distance measured?"},
        {"at": "+2d", "do": "record_change", "employee": "EMP-2", "home_zip": "94536"},
        {"at": "+2d", "do": "reply", "from": "EMP-2", "text": "I moved and updated my address."},
    ]
    resolved = {"status": "closed", "outcome": "resolved", "human_decisions": 0, "cancelled": []}
    clean = scenario(
        [{"at": "+0d", "do": "audit"}],
        {"status": "none", "human_decisions": 0},
        sid="clean",
        riders=[{"employee_id": "EMP-2", "home_zip": "94587", "shift": "DAY"}],
    )
    first, second = run(
        tmp_path, scenario(fixed, {**resolved, "buckets": ["question", "update"]}), clean
    ).results
    assert first.correct, first.got
    assert first.got["reaudits"] == 1
    assert [c.what for c in first.checked if c.what.startswith("answer")] == ["answer to EMP-2"]
    assert second.correct, second.got  # EMP-2 exists again: the database was emptied
    assert second.got["emails_sent"] == 0


@pytest.mark.django_db(transaction=True)
def test_a_wrong_expectation_and_a_decision_nobody_asked_for_are_reported(tmp_path):
    events = [
        {"at": "+0d", "do": "audit"},
        {"at": "+1d", "do": "decide", "action": "cancel_membership", "decision": "approve"},
    ]
    expected = {"status": "closed", "outcome": "resolved", "human_decisions": 0}
    [result] = run(tmp_path, scenario(events, expected)).results
    assert not result.correct
    assert result.got["status"] == "pending_reply"
    assert result.got["errors"] == ["no pending cancel_membership to approve"]


@pytest.mark.django_db(transaction=True)
def test_a_stale_approval_must_be_refused(tmp_path):
    events = [
        {"at": "+0d", "do": "audit"},
        {"at": "+7d", "do": "sweep"},
        {"at": "+8d", "do": "reply", "from": "EMP-2", "text": "Please don't cancel my seat!"},
        {
            "at": "+9d",
            "do": "decide",
            "action": "cancel_membership",
            "decision": "approve",
            "employee": "EMP-2",
            "expect_refused": True,
        },
    ]
    expected = {"status": "hitl_review", "human_decisions": 0, "proposed": ["EMP-2"]}
    [result] = run(tmp_path, scenario(events, expected)).results
    assert result.correct, result.got
    assert result.got["cancelled"] == []


def test_the_clock_only_moves_forward_and_is_what_the_code_reads():
    start = dt.datetime.fromisoformat("2026-11-23T09:00:00-08:00")
    with FrozenClock(start) as clock:
        clock.move_to(start + parse_offset("+7d1h"))
        assert timezone.now() == start + dt.timedelta(days=7, hours=1)
        clock.move_to(start)
        assert timezone.localdate() == dt.date(2026, 11, 30)
    assert timezone.now() != start + dt.timedelta(days=7, hours=1)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"events": [{"at": "+2d", "do": "audit"}, {"at": "+1d", "do": "sweep"}]},
            "only moves forward",
        ),
        ({"events": [{"at": "tomorrow", "do": "audit"}]}, "write an offset like"),
        (
            {"events": [{"at": "+1d", "do": "reply", "from": "EMP-9", "text": "hi"}]},
            "reply from must be a rider",
        ),
        (
            {
                "events": [
                    {
                        "at": "+1d",
                        "do": "decide",
                        "action": "cancel_membership",
                        "decision": "approve",
                        "override": True,
                    }
                ]
            },
            "needs an override_reason",
        ),
        ({"expected": {"status": "closed", "human_decisions": 0}}, "outcome is given exactly"),
        ({"expected": {"status": "done", "human_decisions": 0}}, "expected.status must be"),
        ({"mix": "typical"}, "line 1: mix must be one of arrival, coverage"),
    ],
)
def test_a_bad_scenario_is_refused_with_its_line(tmp_path, change, message):
    case = scenario([{"at": "+0d", "do": "audit"}], {"status": "none", "human_decisions": 0})
    with pytest.raises(CommandError, match=message):
        call_command("evaluate", str(write(tmp_path, {**case, **change})))


@pytest.mark.parametrize(
    ("pto", "message"),
    [
        ("2026-11-2", r"line 1: EMP-1: pto entry '2026-11-2' is not a date"),
        (["2026-11-30..2026-11-23"], "ends before it starts"),
        ({"from": "2026-11-23"}, "pto must be a date, a 'start..end' range, or a list"),
    ],
)
def test_bad_leave_in_a_scenario_names_the_rider_and_the_entry(tmp_path, pto, message):
    riders = [{"employee_id": "EMP-1", "home_zip": "94587", "shift": "DAY", "pto": pto}]
    expected = {"status": "none", "human_decisions": 0}
    case = scenario([{"at": "+0d", "do": "audit"}], expected, riders=riders)
    with pytest.raises(CommandError, match=message):
        call_command("evaluate", str(write(tmp_path, case)))


@pytest.mark.django_db(transaction=True)
def test_leave_may_be_one_range_written_without_a_list(tmp_path):
    night = {"employee_id": "EMP-2", "home_zip": "94587", "shift": "NIGHT"}
    riders = [{"employee_id": "EMP-1", "home_zip": "94587", "shift": "DAY"}, night]
    shifts = {"DAY": DAY, "NIGHT": "Mon-Fri 22:00-06:30"}
    expected = {"status": "none", "human_decisions": 0}
    away = {**night, "pto": "2026-11-23..2026-11-29"}  # the whole audit window
    working, on_leave = run(
        tmp_path,
        scenario([{"at": "+0d", "do": "audit"}], expected, riders=riders, shifts=shifts),
        scenario(
            [{"at": "+0d", "do": "audit"}],
            expected,
            riders=[riders[0], away],
            shifts=shifts,
            sid="s-2",
        ),
    ).results
    assert (working.got["status"], on_leave.got["status"]) == ("pending_reply", "none")


def test_the_coverage_walks_cover_every_path_of_the_case_loop():
    # Their scores against targets run in CI's evaluate step (evaluate --suite).
    cases = read_cases(LIFECYCLE)
    assert len(cases) >= 40
    # The project's own walks keep their old, descriptive ids as legacy_id.
    ids = " ".join(case.get("legacy_id", case["id"]) for case in cases)
    for kind in (
        "clean",
        "misuse",
        "silent-fix",
        "update",
        "question",
        "escalation",
        "injection",
        "auto-reply",
        "bounce",
        "novel",
        "reaudit-limit",
        "pending-cancel",
    ):
        assert kind in ids, kind


@pytest.mark.parametrize(
    ("latencies", "expected"),
    [
        ([], {}),
        ([300], {"model_call_p50_ms": 300, "model_call_p95_ms": 300}),
        (list(range(1, 101)), {"model_call_p50_ms": 50, "model_call_p95_ms": 95}),
        ([900, 100, 500, 300, 700], {"model_call_p50_ms": 500, "model_call_p95_ms": 900}),
    ],
    ids=["no-calls", "one-call", "hundred", "unsorted"],
)
def test_model_call_latency_is_reported_as_p50_and_p95(latencies, expected):
    assert latency_percentiles(latencies) == expected
