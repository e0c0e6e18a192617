"""Reply figures per language: what each language's riders get from the reader."""

from evals.harness import CaseResult, Report
from evals.languages import reply_figures_by_language


def reply(language: str, expected: str, got: str, hitl: bool) -> CaseResult:
    return CaseResult(
        id=f"{language}-{expected}-{got}",
        kind="reply",
        expected={"bucket": expected, "hitl": expected == "escalation"},
        got={"bucket": got, "confidence": 0.9, "hitl": hitl},
        correct=expected == got,
        language=language,
    )


def test_each_language_gets_its_own_accuracy_recall_and_person_figures():
    results = [
        reply("zh", "escalation", "update", False),  # acted on alone
        reply("zh", "update", "update", True),  # ordinary, sent to a person
        reply("en", "escalation", "escalation", True),
        reply("en", "question", "question", False),
    ]
    figures = reply_figures_by_language(results)
    assert figures["zh"] == {
        "replies": 2,
        "bucket_accuracy": 0.5,
        "escalation_recall": 0.0,
        "escalations_missed": 1,
        "ordinary_to_person": 1,
        "ordinary_to_person_rate": 1.0,
    }
    assert figures["en"]["bucket_accuracy"] == 1.0
    assert figures["en"]["ordinary_to_person_rate"] == 0.0


def test_a_reply_without_a_language_is_counted_as_undetermined():
    result = reply("", "question", "question", False)
    assert list(Report(results=[result]).metrics_by_language()) == ["und"]
