"""The audit's decision: facts in, a verdict with per-rider flags out.

Pure: it reads the preloaded facts, runs the checks (rules, and a model only
where the backend is configured and the rules cannot decide) and combines
their results. It writes nothing; ``caseloop.audits`` records what it decides.
"""

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.contracts import SpecialistResult, combine_verdicts
from agents.tracing import RunTrace, timed
from audit.facts import VanpoolFacts
from audit.resolve import gap_riders, run_checks
from cases.models import Case

ALL_CHECKS: tuple[str, ...] = ("location", "shift", "ridership", "parking", "vanpool_rules")
# A finding about the van itself: it goes to the coordinator, never to riders.
VAN_CHECKS: tuple[str, ...] = ("vanpool_rules",)
# Part of every input hash: bump it when a rule changes, so facts audited under
# the old rules are audited again instead of being recognised as unchanged.
RULES_VERSION = "2026-11-23"


@dataclass
class Decision:
    verdict: str
    reason: str  # a Case.Reason value, or "" when everything passed
    failed_checks: list[str]
    unknown_checks: list[str]
    rider_flags: dict[str, dict[str, str]]  # only riders with a non-pass verdict
    details: str
    # employee_id → check → the fact the rules could not use (schedule text, ZIP…):
    # a reviewer's ruling on it stands while it is unchanged.
    unknown_inputs: dict[str, dict[str, str]] = field(default_factory=dict)
    # check → riders ("" for the van) the data does not let the rules judge: shown
    # to people as gaps on the case and program pages, never sent for a ruling.
    gaps: dict[str, list[str]] = field(default_factory=dict)


def input_hash(facts: dict[str, Any], check: str, audit_date: dt.date, backend: str) -> str:
    payload = {
        "facts": facts,
        "check": check,
        "audit_date": audit_date.isoformat(),
        "backend": backend,
        "rules_version": RULES_VERSION,
    }
    encoded = json.dumps(payload, sort_keys=True).encode()
    return hashlib.sha256(encoded).hexdigest()


def input_hashes(
    facts: dict[str, Any], checks: Sequence[str], audit_date: dt.date, backend: str
) -> dict[str, str]:
    """``input_hash`` for several checks, the facts encoded once.

    The JSON is spliced in the order ``json.dumps(sort_keys=True)`` writes
    the keys, so each hash is byte for byte ``input_hash``'s: hashes stored
    before stay comparable. Encoding the facts was most of an unchanged
    re-audit's time.
    """
    facts_text = json.dumps(facts, sort_keys=True)
    tail = f', "facts": {facts_text}, "rules_version": {json.dumps(RULES_VERSION)}}}'
    hashes = {}
    for check in checks:
        head = json.dumps(
            {"audit_date": audit_date.isoformat(), "backend": backend, "check": check},
            sort_keys=True,
        )
        hashes[check] = hashlib.sha256((head[:-1] + tail).encode()).hexdigest()
    return hashes


_SINGLE_REASONS = {
    "location": Case.Reason.LOCATION,
    "shift": Case.Reason.SHIFT,
    "ridership": Case.Reason.RIDERSHIP,
    "parking": Case.Reason.PARKING,
    "vanpool_rules": Case.Reason.VANPOOL_RULES,
}


def reason_for(failed_checks: Sequence[str]) -> str:
    failed = set(failed_checks)
    if failed == {"location", "shift"}:
        return Case.Reason.BOTH
    if len(failed) > 1:
        return Case.Reason.MULTIPLE
    if failed:
        return _SINGLE_REASONS[failed.pop()]
    return Case.Reason.UNKNOWN


def synthesize(results: dict[str, SpecialistResult]) -> Decision:
    gaps = {check: sorted(gap_riders(result)) for check, result in results.items()}
    gaps = {check: riders for check, riders in gaps.items() if riders}
    failed = [check for check, result in results.items() if result.verdict == "fail"]
    unknown = [
        check
        for check, result in results.items()
        if any(
            flag.verdict == "unknown" and flag.employee_id not in gaps.get(check, ())
            for flag in result.riders
        )
        or (result.verdict == "unknown" and not result.riders and "" not in gaps.get(check, ()))
    ]
    flags: dict[str, dict[str, str]] = {}
    for check, result in results.items():
        for flag in result.riders:
            if flag.verdict == "fail" or (
                flag.verdict == "unknown" and flag.employee_id not in gaps.get(check, ())
            ):
                flags.setdefault(flag.employee_id, {})[check] = flag.verdict
    # A check that is unknown only for want of data neither passes nor holds the case.
    verdict = combine_verdicts(
        [
            "pass" if result.verdict == "unknown" and check not in unknown else result.verdict
            for check, result in results.items()
        ]
    )
    details = " ".join(
        result.reasoning
        for check, result in results.items()
        if result.verdict == "fail" or check in unknown
    )
    inputs: dict[str, dict[str, str]] = {}
    for check, result in results.items():
        for item in result.evidence:
            if item.type == "unknown_input" and flags.get(item.employee_id, {}).get(check):
                inputs.setdefault(item.employee_id, {})[check] = item.value
    return Decision(
        verdict=verdict,
        reason=reason_for(failed) if verdict != "pass" else "",
        failed_checks=failed,
        unknown_checks=unknown,
        rider_flags=dict(sorted(flags.items())),
        details=details,
        unknown_inputs=inputs,
        gaps=gaps,
    )


def decide(
    facts: VanpoolFacts, audit_date: dt.date, checks: Sequence[str], root: RunTrace
) -> tuple[dict[str, SpecialistResult], Decision]:
    """Run each check on the facts and combine the results (timed on ``root``)."""
    with timed(root):
        results = run_checks(list(checks), facts, audit_date, root)
        return results, synthesize(results)
