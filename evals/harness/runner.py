"""Read a JSONL file of items of any kind, check every line, and run them in order.

Each kind brings its own check of the format and its own run: an item is
sent to the one its ``kind`` names. Every item is metered at the model
client and timed; synthetic scenarios export no telemetry.
"""

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agents import telemetry
from evals.harness.audits import AUDIT_KINDS, check_audit_case, run_audit_case
from evals.harness.judge import judge_model, score_clarity
from evals.harness.lifecycle import run_lifecycle_case
from evals.harness.lifecycle_format import check_lifecycle_case
from evals.harness.metering import metered
from evals.harness.replies import check_reply_case, run_reply_case
from evals.harness.report import Report
from evals.harness.results import CaseResult, EvalFileError
from evals.harness.specialists import (
    SPECIALIST_KINDS,
    check_specialist_case,
    run_specialist_result,
)

KINDS = (*AUDIT_KINDS, *SPECIALIST_KINDS, "reply", "lifecycle")
# Each kind's check of an item's own fields (after the ones every kind shares).
CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    **dict.fromkeys(AUDIT_KINDS, check_audit_case),
    **dict.fromkeys(SPECIALIST_KINDS, check_specialist_case),
    "reply": check_reply_case,
    "lifecycle": check_lifecycle_case,
}
# Each kind's run; ``number`` keeps an audit item's rows apart from the others'.
RUNS: dict[str, Callable[[dict[str, Any], int], CaseResult]] = {
    **dict.fromkeys(AUDIT_KINDS, run_audit_case),
    **dict.fromkeys(SPECIALIST_KINDS, run_specialist_result),
    "reply": lambda case, number: run_reply_case(case),
    "lifecycle": lambda case, number: run_lifecycle_case(case),
}


def read_cases(path: Path) -> list[dict[str, Any]]:
    """Parse and validate every line first: a bad file is reported, never half-run."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise EvalFileError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise EvalFileError(f"{path}: not UTF-8 text") from None
    cases, errors, seen = [], [], set()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            case = json.loads(line)
            _check_case(case)
            _check_provenance(case)
        except (json.JSONDecodeError, ValueError, TypeError, KeyError) as exc:
            errors.append(f"line {number}: {exc}")
            continue
        if case["id"] in seen:
            errors.append(f"line {number}: id {case['id']!r} is used twice")
        seen.add(case["id"])
        cases.append(case)
    if errors:
        raise EvalFileError("\n".join(errors))
    if not cases:
        raise EvalFileError(f"{path}: no cases")
    return cases


def _check_case(case: Any) -> None:
    if not isinstance(case, dict):
        raise ValueError("each line must be a JSON object")
    if case.get("kind") not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    if not isinstance(case.get("id"), str) or not case["id"]:
        raise ValueError("id must be a non-empty string")
    CHECKS[case["kind"]](case)


def _check_provenance(case: dict[str, Any]) -> None:
    """Optional fields every kind may carry; the harness keeps them on the result."""
    for name in ("source", "legacy_id"):
        if name in case and (not isinstance(case[name], str) or not case[name].strip()):
            raise ValueError(f"{name} must be a non-empty string")
    if not isinstance(case.get("first_run", False), bool):
        raise ValueError("first_run must be true or false")


def run_cases(
    cases: Iterable[dict[str, Any]], *, on_done: Callable[[CaseResult], None] | None = None
) -> Report:
    report = Report()
    for number, case in enumerate(cases):
        # Synthetic scenarios are not the program's runs: nothing is exported.
        with metered() as usage, telemetry.suppressed():
            started = time.perf_counter()
            result = run_case(case, number)
        result.usage = usage
        result.source = case.get("source", "")
        result.first_run = case.get("first_run")
        result.legacy_id = case.get("legacy_id", "")
        result.language = case.get("language", "")
        result.wall_ms = round((time.perf_counter() - started) * 1000)
        report.results.append(result)
        if on_done:
            on_done(result)
    judge = judge_model()
    if judge:
        score_clarity(report, judge)
    return report


def run_case(case: dict[str, Any], number: int) -> CaseResult:
    return RUNS[case["kind"]](case, number)
