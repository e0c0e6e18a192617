"""A run's results, its metrics by kind, and the harness's built-in targets."""

import math
from dataclasses import dataclass, field
from decimal import Decimal

from evals.harness.audits import AUDIT_KINDS, audit_metrics
from evals.harness.lifecycle import lifecycle_metrics
from evals.harness.replies import reply_metrics
from evals.harness.results import CaseResult
from evals.harness.specialists import SPECIALIST_KINDS, specialist_metrics
from evals.languages import reply_figures_by_language

# Targets for the rules backend (issue: verdict accuracy ≥ 98 %, no wrong pass;
# replies: holdout bucket accuracy above 85 %, every injection reaches a human;
# lifecycle: a cancellation proposed only where one is due, and more than 60 %
# of scenarios settled with no human decision).
TARGETS = {
    "verdict_accuracy": 0.98,
    "wrong_pass_on_conflict": 0,
    "holdout_bucket_accuracy": 0.85,
    "injections_missed": 0,
    "cancel_precision": 1.0,
    "automation_rate": 0.60,
    # Ridership, parking, vanpool rules: a rider who rides enough is never
    # flagged, and none whose data shows a failure passes.
    "wrong_fail": 0,
    "wrong_pass": 0,
}
# Shown as "> target" rather than "≥ target".
STRICTLY_ABOVE = ("holdout_bucket_accuracy", "automation_rate")
# Counts whose target is an exact number (none missed, none wrong).
EXACT = ("wrong_pass_on_conflict", "injections_missed", "wrong_fail", "wrong_pass")


@dataclass
class Report:
    results: list[CaseResult] = field(default_factory=list)

    def metrics(self) -> dict[str, float | int]:
        audits = [r for r in self.results if r.kind in AUDIT_KINDS]
        specialists = [r for r in self.results if r.kind in SPECIALIST_KINDS]
        replies = [r for r in self.results if r.kind == "reply"]
        lifecycles = [r for r in self.results if r.kind == "lifecycle"]
        metrics: dict[str, float | int] = {"cases": len(self.results)}
        if audits and (replies or lifecycles or specialists):
            metrics["audit_cases"] = len(audits)
        if audits or not (replies or lifecycles or specialists):
            metrics |= audit_metrics(audits)
        if specialists:
            metrics |= specialist_metrics([(r.expected, r.got, r.correct) for r in specialists])
        if replies:
            metrics |= reply_metrics(replies)
        if lifecycles:
            metrics |= lifecycle_metrics(lifecycles)
        metrics |= _usage_metrics(self.results)
        return metrics

    def metrics_by_language(self) -> dict[str, dict[str, float | int]]:
        """Each language's reply figures (``evals/languages.py``)."""
        return reply_figures_by_language([r for r in self.results if r.kind == "reply"])

    def below_target(self) -> list[str]:
        metrics = self.metrics()
        failures = []
        for name, target in TARGETS.items():
            if name not in metrics:
                continue
            value = metrics[name]
            if name in EXACT:
                missed = value > target
            elif name in STRICTLY_ABOVE:
                missed = value <= target
            else:
                missed = value < target
            if missed:
                failures.append(name)
        return failures


def _usage_metrics(results: list[CaseResult]) -> dict[str, float | int]:
    total = len(results) or 1
    checked = [c for r in results for c in r.checked]
    metrics: dict[str, float | int] = {
        "model_calls_per_case": sum(r.usage.model_calls for r in results) / total,
        # Failed calls: the rules (or a person) stood in, so the figures are not the model's.
        "model_errors": sum(r.usage.model_errors for r in results),
        "tool_calls_per_case": 0.0,  # agents get preloaded facts, never tools
        "tokens_per_case": sum(r.usage.tokens for r in results) / total,
        "cost_usd_per_case": float(sum((r.usage.cost_usd for r in results), Decimal(0)) / total),
        "model_latency_ms_per_case": sum(r.usage.latency_ms for r in results) / total,
        **latency_percentiles([ms for r in results for ms in r.usage.call_latencies_ms]),
        "wall_ms_per_case": sum(r.wall_ms for r in results) / total,
    }
    if checked:
        metrics["texts_checked"] = len(checked)
        metrics["faithfulness_rate"] = sum(c.faithful for c in checked) / len(checked)
    scored = [c.clarity for c in checked if c.clarity is not None]
    if scored:
        metrics["clarity_mean"] = sum(scored) / len(scored)
    return metrics


def latency_percentiles(latencies_ms: list[int]) -> dict[str, int]:
    """p50 and p95 of single model calls (nearest rank), when there were any."""
    if not latencies_ms:
        return {}
    ordered = sorted(latencies_ms)

    def rank(share: float) -> int:
        return ordered[max(0, math.ceil(share * len(ordered)) - 1)]

    return {"model_call_p50_ms": rank(0.50), "model_call_p95_ms": rank(0.95)}
