"""Labelled evaluation: run JSONL cases through the real audit path and score them.

Reply cases (``kind: "reply"``) go through ``classify_reply`` as an inbound
email would; they need no rows. A file may mix kinds: audit and reply metrics
are reported side by side, each against its own targets.

Each case is written as real rows (vanpool, shifts, employees, leave, seats)
into the current database — the ``evaluate`` command wraps this in a
throw-away one — then preloaded and judged by the same ``run_check`` the
case manager uses, so the figures describe the product, not a test double.
The file format is documented in README.md ("Evaluation sets").
"""

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.facts import preload_vanpools
from agents.resolve import run_check
from agents.tracing import RunTrace
from outreach.classify import BUCKETS, classify_reply
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool

AUDIT_KINDS = ("location", "shift")
KINDS = (*AUDIT_KINDS, "reply")
VERDICTS = ("pass", "fail", "unknown")
SPLITS = ("dev", "holdout")
DEFAULT_AUDIT_DATE = "2026-11-23"

# Targets for the rules backend (issue: verdict accuracy ≥ 98 %, no wrong pass;
# replies: holdout bucket accuracy above 85 %, every injection reaches a human).
TARGETS = {
    "verdict_accuracy": 0.98,
    "wrong_pass_on_conflict": 0,
    "holdout_bucket_accuracy": 0.85,
    "injections_missed": 0,
}


class EvalFileError(ValueError):
    """The file is not in the evaluation format; the message says which line and why."""


@dataclass
class CaseResult:
    id: str
    kind: str
    expected: dict[str, Any]
    got: dict[str, Any]
    correct: bool
    model_calls: int = 0
    split: str = "dev"
    injection: bool = False


@dataclass
class Report:
    results: list[CaseResult] = field(default_factory=list)

    def metrics(self) -> dict[str, float | int]:
        audits = [r for r in self.results if r.kind in AUDIT_KINDS]
        replies = [r for r in self.results if r.kind == "reply"]
        metrics: dict[str, float | int] = {"cases": len(self.results)}
        if audits and replies:
            metrics["audit_cases"] = len(audits)
        if audits or not replies:
            metrics |= _audit_metrics(audits)
        if replies:
            metrics |= _reply_metrics(replies)
        return metrics

    def below_target(self) -> list[str]:
        metrics = self.metrics()
        failures = []
        if metrics.get("verdict_accuracy", 1.0) < TARGETS["verdict_accuracy"]:
            failures.append("verdict_accuracy")
        if metrics.get("wrong_pass_on_conflict", 0) > TARGETS["wrong_pass_on_conflict"]:
            failures.append("wrong_pass_on_conflict")
        if (
            "holdout_bucket_accuracy" in metrics
            and metrics["holdout_bucket_accuracy"] <= TARGETS["holdout_bucket_accuracy"]
        ):
            failures.append("holdout_bucket_accuracy")
        if metrics.get("injections_missed", 0) > TARGETS["injections_missed"]:
            failures.append("injections_missed")
        return failures


def _audit_metrics(results: list[CaseResult]) -> dict[str, float | int]:
    total = len(results) or 1
    expected_flags = {(r.id, e) for r in results for e in r.expected["flagged"]}
    got_flags = {(r.id, e) for r in results for e in r.got["flagged"]}
    true_positive = len(expected_flags & got_flags)
    return {
        "verdict_accuracy": sum(r.correct for r in results) / total,
        "flag_precision": true_positive / len(got_flags) if got_flags else 1.0,
        "flag_recall": true_positive / len(expected_flags) if expected_flags else 1.0,
        "unknown_rate": sum(r.got["verdict"] == "unknown" for r in results) / total,
        "wrong_pass_on_conflict": sum(
            r.expected["verdict"] == "fail" and r.got["verdict"] == "pass" for r in results
        ),
        "model_calls_per_case": sum(r.model_calls for r in results) / total,
        "tool_calls_per_case": 0.0,  # agents get preloaded facts, never tools
    }


def _reply_metrics(results: list[CaseResult]) -> dict[str, float | int]:
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
    injections = [r for r in results if r.injection and r.expected["bucket"] == "escalation"]
    reached = sum(r.got["hitl"] for r in injections)
    metrics["injection_reached_human_rate"] = reached / len(injections) if injections else 1.0
    metrics["injections_missed"] = len(injections) - reached
    return metrics


def _bucket_right(result: CaseResult) -> bool:
    return result.got["bucket"] == result.expected["bucket"]


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
    if case["kind"] == "reply":
        _check_reply_case(case)
        return
    if not isinstance(case.get("vanpool", {}), dict):
        raise ValueError("vanpool must be an object")
    riders = case.get("riders")
    if not isinstance(riders, list) or not all(
        isinstance(r, dict) and r.get("employee_id") for r in riders
    ):
        raise ValueError("riders must be a list of objects with employee_id")
    ids = [str(r["employee_id"]) for r in riders]
    if len(set(ids)) != len(ids):
        raise ValueError("an employee_id appears twice in riders")
    expected = case.get("expected")
    if not isinstance(expected, dict) or expected.get("verdict") not in VERDICTS:
        raise ValueError("expected.verdict must be pass, fail or unknown")
    if not isinstance(expected.get("flagged", []), list):
        raise ValueError("expected.flagged must be a list of employee IDs")
    if case["kind"] == "shift":
        dt.date.fromisoformat(case.get("audit_date", DEFAULT_AUDIT_DATE))
    for rider in riders:
        if not isinstance(rider.get("pto", []), list):
            raise ValueError(f"{rider['employee_id']}: pto must be a list of dates")
        _leave_spans(rider.get("pto", []))


def _check_reply_case(case: dict[str, Any]) -> None:
    if not isinstance(case.get("text"), str) or not isinstance(case.get("subject", ""), str):
        raise ValueError("text and subject must be strings")
    expected = case.get("expected")
    if not isinstance(expected, dict) or expected.get("bucket") not in BUCKETS:
        raise ValueError(f"expected.bucket must be one of {', '.join(BUCKETS)}")
    if not isinstance(expected.get("hitl"), bool):
        raise ValueError("expected.hitl must be true or false")
    if case.get("split", "dev") not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    if not isinstance(case.get("injection", False), bool):
        raise ValueError("injection must be true or false")


def run_cases(cases: Iterable[dict[str, Any]]) -> Report:
    report = Report()
    for number, case in enumerate(cases):
        report.results.append(run_case(case, number))
    return report


def run_case(case: dict[str, Any], number: int) -> CaseResult:
    if case["kind"] == "reply":
        return run_reply_case(case)
    vanpool_id = f"VP-EVAL{number}"
    _store_case(case, vanpool_id, number)
    facts = preload_vanpools([vanpool_id])[vanpool_id]
    audit_date = dt.date.fromisoformat(case.get("audit_date", DEFAULT_AUDIT_DATE))
    root = RunTrace(agent="evaluate", backend="", input={"case": case["id"]})
    result = run_check(case["kind"], facts, audit_date, root)
    by_employee = {
        _employee_id(r["employee_id"], number): str(r["employee_id"]) for r in case["riders"]
    }
    got_flagged = sorted(
        by_employee[flag.employee_id] for flag in result.riders if flag.verdict != "pass"
    )
    expected = {
        "verdict": case["expected"]["verdict"],
        "flagged": sorted(map(str, case["expected"].get("flagged", []))),
    }
    got = {"verdict": result.verdict, "flagged": got_flagged}
    return CaseResult(
        id=case["id"],
        kind=case["kind"],
        expected=expected,
        got=got,
        correct=expected == got,
        model_calls=root.total_model_calls,
    )


def run_reply_case(case: dict[str, Any]) -> CaseResult:
    result = classify_reply(case["text"], case.get("subject", ""))
    expected = {"bucket": case["expected"]["bucket"], "hitl": case["expected"]["hitl"]}
    got = {"bucket": result.bucket, "confidence": result.confidence, "hitl": result.hitl}
    return CaseResult(
        id=case["id"],
        kind="reply",
        expected=expected,
        got=got,
        correct=expected == {"bucket": result.bucket, "hitl": result.hitl},
        split=case.get("split", "dev"),
        injection=case.get("injection", False),
    )


def _employee_id(raw: object, number: int) -> str:
    # Cases reuse short IDs (E1, E2); rows need IDs unique across the run.
    return f"EVAL{number}-{raw}"


def _store_case(case: dict[str, Any], vanpool_id: str, number: int) -> None:
    van = case.get("vanpool", {})
    pickup = van.get("pickup") or {}
    vanpool = Vanpool.objects.create(
        vanpool_id=vanpool_id,
        name=case["id"][:120],
        work_site="Evaluation",
        pickup_lat=pickup.get("lat"),
        pickup_lng=pickup.get("lng"),
        pickup_zip=str(van.get("pickup_zip", ""))[:10],
        max_commute_miles=van.get("max_miles"),
        schedule=van.get("schedule") or [],
    )
    for index, rider in enumerate(case["riders"]):
        employee = Employee.objects.create(
            employee_id=_employee_id(rider["employee_id"], number),
            first_name="Eval",
            last_name=str(index),
            email=f"eval{number}-{index}@example.com",
            work_site="Evaluation",
            home_zip=str(rider.get("home_zip", ""))[:10],
            home_lat=(rider.get("home") or {}).get("lat"),
            home_lng=(rider.get("home") or {}).get("lng"),
            time_type=rider.get("time_type", "full_time"),
            shift=_store_shift(rider.get("shift"), number, index),
        )
        for start, end in _leave_spans(rider.get("pto", [])):
            Leave.objects.create(employee=employee, start_date=start, end_date=end)
        Rider.objects.create(vanpool=vanpool, employee=employee, joined=dt.date(2026, 1, 1))


def _store_shift(shift: dict[str, Any] | None, number: int, index: int) -> Shift | None:
    if not shift:
        return None
    return Shift.objects.create(
        shift_id=f"EVAL{number}-{index}",
        name=str(shift.get("name", "shift"))[:100],
        schedule=shift.get("schedule") or [],
        rotation=shift.get("rotation"),
        schedule_text=str(shift.get("schedule_text", ""))[:500],
        overnight=bool(shift.get("overnight", False)),
    )


def _leave_spans(entries: list[str]) -> list[tuple[dt.date, dt.date]]:
    spans = []
    for entry in entries:
        start, _, end = str(entry).partition("..")
        spans.append((dt.date.fromisoformat(start), dt.date.fromisoformat(end or start)))
    return spans
