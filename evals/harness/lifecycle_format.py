"""The lifecycle scenario format: a program, timed events and the expected end, checked.

The whole file is checked before anything runs (``read_cases``), so a bad
scenario is reported by its line, never half-run.
"""

import datetime as dt
import re
from typing import Any

from cases.kinds import PAYLOADS, CancelMembership
from evals.harness.records import check_pto, point, shift_fields, weekly

LIFECYCLE_START = "2026-11-23T09:00:00-08:00"  # a Monday morning, Pacific
# A lifecycle scenario is either part of a sample weighted the way cases arrive
# in a quarter ("arrival", the default), or written to walk one path each
# ("coverage"). Accuracy counts both; a rate such as automation means something
# only over a sample of arrivals, so its target is read there (both are printed).
MIXES = ("arrival", "coverage")
EVENT_KINDS = ("audit", "reply", "bounce", "sweep", "record_change", "decide")
DECISIONS = ("approve", "reject")
ACTION_KINDS = tuple(payload.kind for payload in PAYLOADS)
FINAL_STATUSES = ("none", "open", "pending_reply", "hitl_review", "pre_cancel", "closed")
OUTCOMES = ("", "resolved", "cancelled", "dismissed")
_OFFSET = re.compile(r"^\+(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$")


def parse_offset(text: object) -> dt.timedelta:
    """ "+9d", "+2h", "+7d1h", "+0d" → a timedelta from the scenario's start."""
    match = _OFFSET.match(str(text))
    if match is None or not any(match.groups()):
        raise ValueError(f"at {text!r}: write an offset like +0d, +2d, +36h or +7d1h")
    days, hours, minutes = (int(part or 0) for part in match.groups())
    return dt.timedelta(days=days, hours=hours, minutes=minutes)


def check_lifecycle_case(case: dict[str, Any]) -> None:
    if case.get("mix", "arrival") not in MIXES:
        raise ValueError(f"mix must be one of {', '.join(MIXES)}")
    program = case.get("program")
    if not isinstance(program, dict) or not isinstance(program.get("vanpool"), dict):
        raise ValueError("program.vanpool must be an object")
    vanpool_id = program["vanpool"].get("id")
    if not isinstance(vanpool_id, str) or not vanpool_id.startswith("VP-"):
        raise ValueError("program.vanpool.id must be a vanpool ID like VP-301")
    shifts = program.get("shifts", {})
    if not isinstance(shifts, dict):
        raise ValueError("program.shifts must map shift IDs to schedules")
    for shift_id, shift in shifts.items():
        shift_fields(shift_id, shift)
    if program["vanpool"].get("schedule"):
        weekly(program["vanpool"]["schedule"], "program.vanpool.schedule")
    point(program["vanpool"].get("pickup"), "program.vanpool.pickup")
    riders = program.get("riders")
    if not isinstance(riders, list) or not riders:
        raise ValueError("program.riders must be a non-empty list")
    ids = []
    for rider in riders:
        if not isinstance(rider, dict) or not str(rider.get("employee_id", "")).strip():
            raise ValueError("each rider needs an employee_id")
        if rider.get("shift") and rider["shift"] not in shifts:
            raise ValueError(f"{rider['employee_id']}: shift {rider['shift']!r} is not in shifts")
        if "home_zip" not in rider:
            raise ValueError(f"{rider['employee_id']}: home_zip is required")
        point(rider.get("home"), f"{rider['employee_id']}: home")
        check_pto(rider)
        ids.append(rider["employee_id"])
    if len(set(ids)) != len(ids):
        raise ValueError("an employee_id appears twice in program.riders")
    events = case.get("events")
    if not isinstance(events, list) or not events:
        raise ValueError("events must be a non-empty list")
    previous = dt.timedelta(0)
    for index, event in enumerate(events):
        _check_event(event, index, set(ids), shifts)
        offset = parse_offset(event["at"])
        if offset < previous:
            raise ValueError(f"events[{index}]: the clock only moves forward ({event['at']})")
        previous = offset
    _check_lifecycle_expected(case.get("expected"), set(ids))


def _check_event(event: Any, index: int, riders: set[str], shifts: dict) -> None:
    where = f"events[{index}]"
    if not isinstance(event, dict) or event.get("do") not in EVENT_KINDS:
        raise ValueError(f"{where}: do must be one of {', '.join(EVENT_KINDS)}")
    if "at" not in event:
        raise ValueError(f"{where}: at is required (+0d, +2d, …)")
    kind = event["do"]
    if kind == "reply":
        if event.get("from") not in riders and "from_email" not in event:
            raise ValueError(f"{where}: reply from must be a rider's employee_id")
        if not isinstance(event.get("text"), str):
            raise ValueError(f"{where}: reply text must be a string")
        if not isinstance(event.get("headers", {}), dict):
            raise ValueError(f"{where}: headers must be an object")
    if kind in ("bounce", "record_change") and event.get("employee") not in riders:
        raise ValueError(f"{where}: employee must be a rider's employee_id")
    if kind == "record_change":
        changes = set(event) - {"at", "do", "employee", "note"}
        unknown = changes - {"home_zip", "home", "shift", "time_type", "pto", "email"}
        if unknown or not changes:
            raise ValueError(
                f"{where}: record_change takes home_zip, home, shift, time_type, pto or email"
            )
        if event.get("shift") and event["shift"] not in shifts:
            raise ValueError(f"{where}: shift {event['shift']!r} is not in program.shifts")
        point(event.get("home"), f"{where}: home")
    if kind == "decide":
        if event.get("action") not in ACTION_KINDS:
            raise ValueError(f"{where}: action must be one of {', '.join(ACTION_KINDS)}")
        if event.get("decision") not in DECISIONS:
            raise ValueError(f"{where}: decision must be approve or reject")
        if event.get("employee") is not None and event["employee"] not in riders:
            raise ValueError(f"{where}: employee must be a rider's employee_id")
        if not isinstance(event.get("edits", {}), dict):
            raise ValueError(f"{where}: edits must be an object")
        if event.get("override") and not str(event.get("override_reason", "")).strip():
            raise ValueError(f"{where}: an override needs an override_reason")


def _check_lifecycle_expected(expected: Any, riders: set[str]) -> None:
    if not isinstance(expected, dict):
        raise ValueError("expected must be an object")
    if expected.get("status") not in FINAL_STATUSES:
        raise ValueError(f"expected.status must be one of {', '.join(FINAL_STATUSES)}")
    if expected.get("outcome", "") not in OUTCOMES:
        raise ValueError("expected.outcome must be resolved, cancelled, dismissed or empty")
    if (expected["status"] == "closed") != bool(expected.get("outcome")):
        raise ValueError("expected.outcome is given exactly when expected.status is closed")
    if not isinstance(expected.get("human_decisions"), int):
        raise ValueError("expected.human_decisions must be a number")
    for name in ("cancelled", "proposed"):
        value = expected.get(name, [])
        if not isinstance(value, list) or not set(value) <= riders:
            raise ValueError(f"expected.{name} must list riders' employee_ids")
    if "emails_sent" in expected and not isinstance(expected["emails_sent"], int):
        raise ValueError("expected.emails_sent must be a number")
    if "buckets" in expected and not isinstance(expected["buckets"], list):
        raise ValueError("expected.buckets must be a list")


def expected_lifecycle(case: dict[str, Any]) -> dict[str, Any]:
    """The scenario's expected end in the shape ``observe`` reports (defaults filled in)."""
    expected = dict(case["expected"])
    decided = {
        e["employee"]
        for e in case["events"]
        if e["do"] == "decide" and e["action"] == CancelMembership.kind and e.get("employee")
    }
    result = {
        "status": expected["status"],
        "outcome": expected.get("outcome", ""),
        "human_decisions": expected["human_decisions"],
        "cancelled": sorted(expected.get("cancelled", [])),
        "proposed": sorted(set(expected.get("proposed", [])) | set(expected.get("cancelled", []))),
    }
    if "proposed" not in expected:
        result["proposed"] = sorted(set(result["proposed"]) | decided)
    for optional in ("emails_sent", "buckets"):
        if optional in expected:
            result[optional] = expected[optional]
    return result
