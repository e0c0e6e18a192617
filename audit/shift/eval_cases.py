"""One line of a shift evaluation set (evals/data/shift/*.jsonl) as the facts a check reads."""

import datetime as dt
from typing import Any

from audit.facts import LeaveSpan, RiderFacts, ShiftFacts, VanpoolFacts

DEFAULT_CASE_AUDIT_DATE = "2026-11-23"


def shift_case_facts(case: dict[str, Any]) -> tuple[VanpoolFacts, dt.date]:
    """Facts and audit date for one line of a shift evaluation set (evals/data/shift/*.jsonl)."""
    van = case.get("vanpool") or {}
    facts = VanpoolFacts(
        vanpool_id=str(van.get("vanpool_id") or case.get("id") or "VP-EVAL"),
        schedule=van.get("schedule") or [],
        riders=tuple(
            _case_rider(rider, index) for index, rider in enumerate(case.get("riders", []))
        ),
    )
    return facts, dt.date.fromisoformat(case.get("audit_date") or DEFAULT_CASE_AUDIT_DATE)


def _case_rider(rider: dict[str, Any], index: int) -> RiderFacts:
    leave = [LeaveSpan(*_case_span(entry), "pto") for entry in rider.get("pto", [])]
    leave += [LeaveSpan(*_case_span(entry), "leave") for entry in rider.get("leave", [])]
    return RiderFacts(
        employee_id=str(rider["employee_id"]),
        home_zip=str(rider.get("home_zip", "")),
        shift=_case_shift(rider.get("shift"), index),
        time_type=str(rider.get("time_type", "full_time")),
        status=str(rider.get("status", "active")),
        leave=tuple(leave),
    )


def _case_shift(shift: dict[str, Any] | None, index: int) -> ShiftFacts | None:
    if not shift:
        return None
    return ShiftFacts(
        shift_id=str(shift.get("shift_id") or shift.get("name") or f"SHIFT-{index}"),
        name=str(shift.get("name", "")),
        schedule=shift.get("schedule") or None,
        rotation=shift.get("rotation") or None,
        text=str(shift.get("schedule_text") or ""),
        overnight=bool(shift.get("overnight", False)),
    )


def _case_span(entry: str) -> tuple[dt.date, dt.date]:
    start, _, end = str(entry).partition("..")
    return dt.date.fromisoformat(start), dt.date.fromisoformat(end or start)
