"""Location and shift items: one check on one vanpool, judged by the product's own code.

An item is written as real rows (vanpool, shifts, employees, leave, seats)
into the current database — the ``evaluate`` command wraps this in a
throw-away one — then preloaded and judged by the same ``run_check`` the
case manager uses, so the figures describe the product, not a test double.
"""

import datetime as dt
from typing import Any

from agents.tracing import RunTrace
from audit.facts import facts_json, preload_vanpools
from audit.resolve import run_check
from evals.harness.evidence import checked, specialist_evidence
from evals.harness.records import check_pto, leave_spans, point, stored_zip
from evals.harness.results import CaseResult
from vanpools.geo import zip_as_given
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool

AUDIT_KINDS = ("location", "shift")
VERDICTS = ("pass", "fail", "unknown")
DEFAULT_AUDIT_DATE = "2026-11-23"


def check_audit_case(case: dict[str, Any]) -> None:
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
    point(case["vanpool"].get("pickup"), "vanpool.pickup")
    for rider in riders:
        check_pto(rider)
        point(rider.get("home"), f"{rider['employee_id']}: home")


def run_audit_case(case: dict[str, Any], number: int) -> CaseResult:
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
    evidence = specialist_evidence(
        result.evidence, facts_json(facts), audit_date, [f.employee_id for f in result.riders]
    )
    return CaseResult(
        id=case["id"],
        kind=case["kind"],
        expected=expected,
        got=got,
        correct=expected == got,
        checked=[checked(f"{case['kind']} reasoning", result.reasoning, evidence)],
    )


def audit_metrics(results: list[CaseResult]) -> dict[str, float | int]:
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
    }


def _employee_id(raw: object, number: int) -> str:
    # Cases reuse short IDs (E1, E2); rows need IDs unique across the run.
    return f"EVAL{number}-{raw}"


def _store_case(case: dict[str, Any], vanpool_id: str, number: int) -> None:
    van = case.get("vanpool", {})
    pickup_lat, pickup_lng = point(van.get("pickup"), "vanpool.pickup")
    vanpool = Vanpool.objects.create(
        vanpool_id=vanpool_id,
        name=case["id"][:120],
        work_site="Evaluation",
        pickup_lat=pickup_lat,
        pickup_lng=pickup_lng,
        pickup_zip=stored_zip(van.get("pickup_zip", "")),
        max_commute_miles=van.get("max_miles"),
        schedule=van.get("schedule") or [],
    )
    for index, rider in enumerate(case["riders"]):
        home_lat, home_lng = point(rider.get("home"), "home")
        employee = Employee.objects.create(
            employee_id=_employee_id(rider["employee_id"], number),
            first_name="Eval",
            last_name=str(index),
            email=f"eval{number}-{index}@example.com",
            work_site="Evaluation",
            home_zip=stored_zip(rider.get("home_zip", "")),
            home_zip_as_given=zip_as_given(str(rider.get("home_zip") or "")),
            home_lat=home_lat,
            home_lng=home_lng,
            time_type=rider.get("time_type", "full_time"),
            shift=_store_shift(rider.get("shift"), number, index),
        )
        for start, end in leave_spans(rider.get("pto", [])):
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
