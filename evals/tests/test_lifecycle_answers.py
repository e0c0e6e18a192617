"""Lifecycle scenarios with riders answering on the answer page (evaluate_answers)."""

import json
from pathlib import Path

import pytest

from evals.harness import read_cases, run_cases
from evals.harness.lifecycle_answers import read_answer_mix, uses_the_page, with_answers
from evals.tests.test_harness import scenario, write

ROOT = Path(__file__).resolve().parents[2]
MIX = ROOT / "evals" / "data" / "lifecycle" / "answer-mix.toml"
RESOLVED = {"status": "closed", "outcome": "resolved", "human_decisions": 0}


def test_the_shipped_mix_states_its_file_shares_and_choices():
    mix = read_answer_mix(MIX)
    assert mix.file.exists() and mix.shares == (0.0, 0.5, 0.8)
    assert set(mix.choices) == {"update", "acknowledgment", "question", "escalation"}


def test_the_riders_on_the_page_at_a_share_are_among_those_at_a_larger_one():
    riders = [(f"case-{n}", f"EMP-{n}") for n in range(400)]
    at_half = {r for r in riders if uses_the_page(*r, 0.5)}
    at_most = {r for r in riders if uses_the_page(*r, 0.8)}
    assert at_half < at_most
    assert 0.4 < len(at_half) / 400 < 0.6 and not any(uses_the_page(*r, 0.0) for r in riders)


def test_a_labelled_reply_becomes_the_choice_that_says_it_and_others_stay_as_written():
    case = scenario(
        [
            {"at": "+0d", "do": "audit"},
            {"at": "+1d", "do": "reply", "from": "EMP-2", "text": "Which ZIP do you have?"},
            {"at": "+2d", "do": "bounce", "employee": "EMP-2"},
            {"at": "+3d", "do": "reply", "from_email": "x@example.com", "text": "hi"},
        ],
        {**RESOLVED, "buckets": ["question", "bounce", "update"]},
    )
    events = with_answers(case, 1.0, read_answer_mix(MIX).choices)["events"]
    assert [e["do"] for e in events] == ["audit", "answer", "bounce", "reply"]
    assert events[1]["choice"] == "question" and events[1]["text"] == "Which ZIP do you have?"
    assert with_answers(case, 0.0, {"question": "question"})["events"] == case["events"]


@pytest.mark.django_db(transaction=True)
def test_an_answer_event_goes_through_the_page_and_a_fixed_record_closes_the_case(tmp_path):
    case = scenario(
        [
            {"at": "+0d", "do": "audit"},
            {"at": "+1d", "do": "record_change", "employee": "EMP-2", "home_zip": "94587"},
            {"at": "+1d", "do": "answer", "from": "EMP-2", "choice": "updated"},
        ],
        {**RESOLVED, "buckets": ["update"]},
    )
    report = run_cases(read_cases(write(tmp_path, case)))
    result = report.results[0]
    assert result.correct, json.dumps(result.got)
    assert result.got["answered"] == 1


def test_an_answer_event_is_checked_like_any_other(tmp_path):
    bad = scenario(
        [{"at": "+0d", "do": "audit"}, {"at": "+1d", "do": "answer", "from": "EMP-2"}],
        RESOLVED,
    )
    with pytest.raises(Exception, match="choice must be updated or one of"):
        read_cases(write(tmp_path, bad))
