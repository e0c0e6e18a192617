"""Reply items: a rider's text read by ``classify_reply`` as an inbound email would be.

They need no rows. Each is scored on its bucket and on whether a person
sees it; an item marked as an injection must reach a person whatever its bucket.
"""

from typing import Any

from evals.harness.results import CaseResult
from evals.languages import LANGUAGE_CODE, person_figures
from outreach.replies.classify import BUCKETS, classify_reply

SPLITS = ("dev", "holdout")


def check_reply_case(case: dict[str, Any]) -> None:
    if not isinstance(case.get("text"), str) or not isinstance(case.get("subject", ""), str):
        raise ValueError("text and subject must be strings")
    expected = case.get("expected")
    if not isinstance(expected, dict) or expected.get("bucket") not in BUCKETS:
        raise ValueError(f"expected.bucket must be one of {', '.join(BUCKETS)}")
    if not isinstance(expected.get("hitl"), bool):
        raise ValueError("expected.hitl must be true or false")
    if "language" in case and not LANGUAGE_CODE.fullmatch(str(case["language"])):
        raise ValueError("language must be an ISO 639 code such as en, zh or ht (und: cannot tell)")
    if case.get("split", "dev") not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    if not isinstance(case.get("injection", False), bool):
        raise ValueError("injection must be true or false")


def run_reply_case(case: dict[str, Any]) -> CaseResult:
    result = classify_reply(case["text"], case.get("subject", ""))
    expected = {"bucket": case["expected"]["bucket"], "hitl": case["expected"]["hitl"]}
    got: dict[str, Any] = {
        "bucket": result.bucket,
        "confidence": result.confidence,
        "hitl": result.hitl,
    }
    if result.model_bucket:
        got["model_bucket"] = result.model_bucket
    return CaseResult(
        id=case["id"],
        kind="reply",
        expected=expected,
        got=got,
        correct=expected == {"bucket": result.bucket, "hitl": result.hitl},
        split=case.get("split", "dev"),
        injection=case.get("injection", False),
    )


def reply_metrics(results: list[CaseResult]) -> dict[str, float | int]:
    def bucket_accuracy(group: list[CaseResult]) -> float:
        return sum(_bucket_right(r) for r in group) / (len(group) or 1)

    metrics: dict[str, float | int] = {
        "reply_cases": len(results),
        "bucket_accuracy": bucket_accuracy(results),
        "reply_accuracy": sum(r.correct for r in results) / len(results),
        "hitl_rate": sum(r.got["hitl"] for r in results) / len(results),
    }
    for split in SPLITS:
        group = [r for r in results if r.split == split]
        if group:
            metrics[f"{split}_bucket_accuracy"] = bucket_accuracy(group)
    for bucket in BUCKETS:
        got = [r for r in results if r.got["bucket"] == bucket]
        expected = [r for r in results if r.expected["bucket"] == bucket]
        metrics[f"{bucket}_precision"] = sum(map(_bucket_right, got)) / len(got) if got else 1.0
        metrics[f"{bucket}_recall"] = (
            sum(map(_bucket_right, expected)) / len(expected) if expected else 1.0
        )
    # Every reply marked as an injection must reach a person, whichever bucket
    # its writer gave it (the surface reading, or escalation).
    injections = [r for r in results if r.injection]
    reached = sum(r.got["hitl"] for r in injections)
    metrics["injection_reached_human_rate"] = reached / len(injections) if injections else 1.0
    metrics["injections_missed"] = len(injections) - reached
    # An escalation its writer labelled that no person would see (acted on by rules),
    # and ordinary replies a person was asked to read all the same.
    metrics |= person_figures(results)
    # A configured model's own labels, before the cross-check that lets them only
    # add caution: how well the model reads, apart from what the product does.
    asked = [r for r in results if r.got.get("model_bucket")]
    if asked:
        metrics["model_labels"] = len(asked)
        metrics["model_label_accuracy"] = sum(
            r.got["model_bucket"] == r.expected["bucket"] for r in asked
        ) / len(asked)
    return metrics


def _bucket_right(result: CaseResult) -> bool:
    return result.got["bucket"] == result.expected["bucket"]
