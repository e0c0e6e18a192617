"""Reply figures per language, and the figures that say what a person sees.

Every reply item carries its ``language`` (docs/evaluation.md); a reader that
is good in English and a coin toss in Korean must not hide behind an overall
figure. For each language: bucket accuracy, escalation recall, escalations
acted on without a person, and ordinary replies sent to a person.
"""

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Protocol


class CaseResult(Protocol):
    """What these figures read of a harness result (``evals.harness.CaseResult``)."""

    expected: dict[str, Any]
    got: dict[str, Any]
    language: str


LANGUAGE_CODE = re.compile(r"[a-z]{2,3}")
# The figures reported, and gated, per language.
LANGUAGE_METRICS = (
    "replies",
    "bucket_accuracy",
    "escalation_recall",
    "escalations_missed",
    "ordinary_to_person_rate",
)


def person_figures(results: Sequence[CaseResult]) -> dict[str, float | int]:
    """Escalations no person would see, and ordinary replies a person reads anyway."""
    ordinary = [r for r in results if r.expected["bucket"] != "escalation"]
    to_person = sum(r.got["hitl"] for r in ordinary)
    return {
        "escalations_missed": sum(
            r.expected["bucket"] == "escalation" and not r.got["hitl"] for r in results
        ),
        "ordinary_to_person": to_person,
        "ordinary_to_person_rate": to_person / len(ordinary) if ordinary else 0.0,
    }


def reply_figures(results: Sequence[CaseResult]) -> dict[str, float | int]:
    escalations = [r for r in results if r.expected["bucket"] == "escalation"]
    right = sum(r.got["bucket"] == r.expected["bucket"] for r in results)
    caught = sum(r.got["bucket"] == "escalation" for r in escalations)
    return {
        "replies": len(results),
        "bucket_accuracy": right / len(results) if results else 1.0,
        "escalation_recall": caught / len(escalations) if escalations else 1.0,
        **person_figures(results),
    }


def reply_figures_by_language(results: Sequence[CaseResult]) -> dict[str, dict[str, float | int]]:
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        groups[result.language or "und"].append(result)
    return {language: reply_figures(groups[language]) for language in sorted(groups)}
