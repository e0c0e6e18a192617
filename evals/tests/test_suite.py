"""The suite's bounds per language: each check names its file and language."""

from pathlib import Path

import pytest

from evals.suite import FileTarget, check_languages

TARGET = FileTarget(
    "replies.languages-holdout",
    Path("replies/languages-holdout.jsonl"),
    {"bucket_accuracy": 0.8},
    {},
    languages={
        "zh": ({"bucket_accuracy": 0.85}, {"escalations_missed": 0}),
        "ko": ({"bucket_accuracy": 0.7}, {}),
    },
)


def test_a_language_check_is_named_by_its_file_and_language():
    checks = check_languages(
        TARGET,
        {
            "zh": {"bucket_accuracy": 0.9, "escalations_missed": 1},
            "ko": {"bucket_accuracy": 0.75},
        },
    )
    assert [(c.target.name, c.metric, c.met) for c in checks] == [
        ("replies.languages-holdout[zh]", "bucket_accuracy", True),
        ("replies.languages-holdout[zh]", "escalations_missed", False),
        ("replies.languages-holdout[ko]", "bucket_accuracy", True),
    ]


def test_a_language_with_no_replies_fails_its_bounds():
    checks = check_languages(TARGET, {"zh": {"bucket_accuracy": 0.9, "escalations_missed": 0}})
    ko = [c for c in checks if c.target.name.endswith("[ko]")]
    assert ko and not any(c.met for c in ko) and ko[0].value is None


def test_the_readers_overall_bounds_come_from_the_targets_file(tmp_path):
    from evals.suite import SuiteError, read_reader_bounds

    (tmp_path / "targets.toml").write_text(
        "[reader.held-out]\nmin = { bucket_accuracy = 0.9 }\n"
        "max = { escalations_acted_on_alone = 0 }\n",
        encoding="utf-8",
    )
    assert read_reader_bounds(tmp_path) == (
        {"bucket_accuracy": 0.9},
        {"escalations_acted_on_alone": 0},
    )
    (tmp_path / "targets.toml").write_text("[reader.held-out]\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"reader\.held-out"):
        read_reader_bounds(tmp_path)


def test_the_committed_targets_bound_the_reader_overall():
    from evals.suite import read_reader_bounds

    floors, ceilings = read_reader_bounds()
    assert floors["bucket_accuracy"] >= 0.9 and "escalations_acted_on_alone" in ceilings
