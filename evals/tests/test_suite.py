"""The suite's bounds per language: each check names its file and language."""

from pathlib import Path

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
