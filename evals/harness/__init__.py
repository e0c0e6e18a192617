"""Labelled evaluation: run JSONL items through the real code and score them.

One module per kind of item, each with its own format check, run and
metrics: ``audits`` (location and shift checks on stored rows), ``replies``
(a rider's text through ``classify_reply``) and ``lifecycle`` (a whole case
scripted on a frozen clock; its format in ``lifecycle_format``, its email in
``lifecycle_mail``). A file may mix kinds: ``runner`` sends each item to its
kind, and ``report`` puts the kinds' metrics side by side, each against its
own targets.

Every item is metered at the model client's one choke point
(``OpenAIClient.structured``, ``metering``): calls, tokens, cost and latency,
whichever agent made them. Every specialist reasoning and every answer to a
rider is checked for faithfulness (``evidence``); an optional judge model
scores clarity (``judge``). The file format and the shipped sets are
documented in docs/evaluation.md.
"""

from evals.harness.evidence import policy_evidence
from evals.harness.judge import judge_model
from evals.harness.lifecycle import FrozenClock
from evals.harness.lifecycle_format import parse_offset
from evals.harness.report import EXACT, STRICTLY_ABOVE, TARGETS, Report, latency_percentiles
from evals.harness.results import CaseResult, EvalFileError
from evals.harness.runner import read_cases, run_cases

__all__ = [
    "EXACT",
    "STRICTLY_ABOVE",
    "TARGETS",
    "CaseResult",
    "EvalFileError",
    "FrozenClock",
    "Report",
    "judge_model",
    "latency_percentiles",
    "parse_offset",
    "policy_evidence",
    "read_cases",
    "run_cases",
]
