"""The case manager: audit one vanpool end to end and record what was decided.

Preload (a fixed number of queries) → ``audit.decide`` (writes nothing) → record
the findings, the evidence and the trace in one transaction, through the
lifecycle functions. All pass closes an open case as resolved; any
fail opens or updates the vanpool's one open case; any unknown sends the case
to a human with a ``decide_verification`` PendingAction instead of outreach.
An audit of exactly the same facts on the same date is recognised by its input
hash and changes nothing, because django-q2 may deliver the task twice.
"""

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from agents.contracts import SpecialistResult
from agents.tracing import RunTrace, save_trace_tree
from audit.decide import ALL_CHECKS, Decision, decide, input_hash, reason_for
from audit.facts import VanpoolFacts, facts_json, preload_vanpools
from cases.lifecycle import (
    Actor,
    IllegalTransition,
    open_case,
    request_review,
    transition,
    update_findings,
)
from cases.models import Case, PendingAction, Verification
from poolpatrol.logcontext import log_context
from poolpatrol.queue import enqueue_outreach
from vanpools.models import Vanpool

logger = logging.getLogger(__name__)

AGENT = "case_manager"

Status = Case.Status
OutcomeStatus = Literal["passed", "failed", "unknown", "skipped", "unchanged", "error"]
CaseAction = Literal["opened", "updated", "closed", "none"]


class UnknownVanpool(LookupError):
    pass


@dataclass
class AuditOutcome:
    vanpool_id: str
    status: OutcomeStatus
    reason: str = ""
    case_id: str = ""
    case_action: CaseAction = "none"
    flagged: list[str] = field(default_factory=list)
    model_calls: int = 0
    tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    error: str = ""


def with_standing_rulings(case: Case | None, decision: Decision) -> Decision:
    """Apply a reviewer's earlier ruling to a rider the rules still cannot decide.

    A person ruled on exactly this fact (the same unusable schedule text or
    ZIP) before; asking them again at every re-audit would be noise. A ruling
    stands only while that fact is unchanged: a new value is a new question.
    """
    if case is None or not any(
        "unknown" in checks.values() for checks in decision.rider_flags.values()
    ):
        return decision
    ruled = PendingAction.objects.filter(
        case=case, kind=PendingAction.Kind.DECIDE_VERIFICATION, status=PendingAction.Status.APPROVED
    ).order_by("-decided_at", "-id")
    standing: dict[tuple[str, str], str] = {}
    for action in ruled:
        rulings = (action.result or {}).get("rulings", {})
        asked_inputs = action.payload.get("inputs", {})
        for employee_id, checks in action.payload.get("riders", {}).items():
            for check in checks:
                same_fact = asked_inputs.get(employee_id, {}).get(check) == (
                    decision.unknown_inputs.get(employee_id, {}).get(check)
                )
                if (
                    employee_id in rulings
                    and same_fact
                    and check in asked_inputs.get(employee_id, {})
                ):
                    standing.setdefault((employee_id, check), rulings[employee_id])
    flags = {emp: dict(checks) for emp, checks in decision.rider_flags.items()}
    used = []
    for (employee_id, check), ruling in standing.items():
        if flags.get(employee_id, {}).get(check) == "unknown":
            used.append(f"{employee_id} {check} {ruling}")
            if ruling == "pass":
                del flags[employee_id][check]
            else:
                flags[employee_id][check] = ruling
    if not used:
        return decision
    flags = {emp: checks for emp, checks in flags.items() if checks}
    rider_unknown = {
        c for checks in decision.rider_flags.values() for c, v in checks.items() if v == "unknown"
    }
    check_level_unknown = set(decision.unknown_checks) - rider_unknown
    unknown = sorted(
        check_level_unknown
        | {c for checks in flags.values() for c, v in checks.items() if v == "unknown"}
    )
    failed = sorted(
        set(decision.failed_checks)
        | {c for checks in flags.values() for c, v in checks.items() if v == "fail"}
    )
    verdict = "fail" if failed else "unknown" if unknown else "pass"
    return Decision(
        verdict=verdict,
        reason=reason_for(failed) if verdict != "pass" else "",
        failed_checks=failed,
        unknown_checks=unknown,
        rider_flags=dict(sorted(flags.items())),
        details=f"{decision.details} Standing reviewer rulings: {', '.join(sorted(used))}.".strip(),
        unknown_inputs=decision.unknown_inputs,
    )


def audit_vanpool(
    vanpool_id: str,
    *,
    audit_date: dt.date | None = None,
    checks: Sequence[str] = ALL_CHECKS,
    actor: Actor = AGENT,
) -> AuditOutcome:
    facts = preload_vanpools([vanpool_id]).get(vanpool_id)
    if facts is None:
        raise UnknownVanpool(f"no vanpool {vanpool_id!r}")
    return audit_preloaded(facts, audit_date=audit_date, checks=checks, actor=actor)


def audit_vanpools(
    vanpool_ids: Iterable[str],
    *,
    audit_date: dt.date | None = None,
    chunk_size: int = 500,
    on_done: Callable[[AuditOutcome], None] | None = None,
) -> list[AuditOutcome]:
    """Audit many vanpools, preloading them a chunk at a time.

    One vanpool's failure is logged and reported as an ``error`` outcome; it
    does not stop the others.
    """
    ids = list(vanpool_ids)
    outcomes: list[AuditOutcome] = []
    for start in range(0, len(ids), chunk_size):
        chunk = ids[start : start + chunk_size]
        preloaded = preload_vanpools(chunk)
        for vanpool_id in chunk:
            outcome = _audit_one_safely(vanpool_id, preloaded.get(vanpool_id), audit_date)
            outcomes.append(outcome)
            if on_done:
                on_done(outcome)
    return outcomes


def _audit_one_safely(
    vanpool_id: str, facts: VanpoolFacts | None, audit_date: dt.date | None
) -> AuditOutcome:
    if facts is None:
        return AuditOutcome(vanpool_id, "error", error="no such vanpool")
    try:
        return audit_preloaded(facts, audit_date=audit_date)
    except Exception as exc:  # one bad vanpool must not stop a bulk audit
        logger.exception("audit of %s failed", vanpool_id)
        return AuditOutcome(vanpool_id, "error", error=f"{type(exc).__name__}: {exc}")


def audit_preloaded(
    facts: VanpoolFacts,
    *,
    audit_date: dt.date | None = None,
    checks: Sequence[str] = ALL_CHECKS,
    actor: Actor = AGENT,
) -> AuditOutcome:
    with log_context(vanpool_id=facts.vanpool_id):
        if facts.status != "active":
            logger.debug("skipped: vanpool is %s", facts.status)
            return AuditOutcome(facts.vanpool_id, "skipped", reason=f"vanpool is {facts.status}")
        audit_date = audit_date or timezone.localdate()
        backend = settings.LLM_BACKEND
        facts_data = facts_json(facts)
        hashes = {check: input_hash(facts_data, check, audit_date, backend) for check in checks}
        if _already_audited(facts, hashes):
            return _unchanged_outcome(facts)
        root = RunTrace(
            agent=AGENT,
            backend=backend,
            input={
                "audit_date": audit_date.isoformat(),
                "checks": list(checks),
                "facts": facts_data,
            },
        )
        results, decision = decide(facts, audit_date, checks, root)
        return _record(facts, audit_date, results, hashes, decision, root, actor)


def _vanpool_pk(facts: VanpoolFacts) -> int:
    """The audited vanpool's row: facts audited and stored always came from the database."""
    assert facts.pk is not None, f"{facts.vanpool_id}: facts without a database row"
    return facts.pk


def _already_audited(facts: VanpoolFacts, hashes: dict[str, str]) -> bool:
    latest = (
        Verification.objects.filter(vanpool_id=_vanpool_pk(facts), check_type__in=list(hashes))
        .order_by("-created_at", "-id")
        .values_list("check_type", "input_hash")[: len(hashes) * 2]
    )
    newest: dict[str, str] = {}
    for check, stored_hash in latest:
        newest.setdefault(check, stored_hash)
    return newest == hashes


def _unchanged_outcome(facts: VanpoolFacts) -> AuditOutcome:
    case = Case.objects.filter(vanpool_id=_vanpool_pk(facts)).exclude(status=Status.CLOSED).first()
    status: OutcomeStatus = "unchanged"
    logger.debug("unchanged: these facts were already audited today")
    return AuditOutcome(facts.vanpool_id, status, case_id=case.case_id if case else "")


def _record(
    facts: VanpoolFacts,
    audit_date: dt.date,
    results: dict[str, SpecialistResult],
    hashes: dict[str, str],
    decision: Decision,
    root: RunTrace,
    actor: Actor,
) -> AuditOutcome:
    with transaction.atomic():
        open_case_row = (
            Case.objects.filter(vanpool_id=_vanpool_pk(facts)).exclude(status=Status.CLOSED).first()
        )
        # A standing ruling changes the findings themselves, so the trace and
        # the outcome below report the decision as applied.
        decision = with_standing_rulings(open_case_row, decision)
        case, case_action = _apply_decision(facts, open_case_row, decision, actor, audit_date)
        for trace, (check, result) in zip(root.children, results.items(), strict=True):
            trace.verification = _store_verification(
                facts, case, check, result, hashes[check], audit_date, trace
            )
        root.output = {
            "verdict": decision.verdict,
            "reason": decision.reason,
            "failed_checks": decision.failed_checks,
            "unknown_checks": decision.unknown_checks,
            "rider_flags": decision.rider_flags,
            "case_id": case.case_id if case else None,
            "case_action": case_action,
        }
        save_trace_tree(root, vanpool_pk=facts.pk, case=case)
        if case is not None and _needs_outreach(case, case_action):
            enqueue_outreach(case.pk)
    statuses: dict[str, OutcomeStatus] = {"pass": "passed", "fail": "failed"}
    status: OutcomeStatus = statuses.get(decision.verdict, "unknown")
    if decision.unknown_checks and status == "failed":
        status = "unknown"
    logger.debug("audited: %s %s, case %s", status, decision.reason, case_action)
    return AuditOutcome(
        facts.vanpool_id,
        status,
        reason=decision.reason,
        case_id=case.case_id if case else "",
        case_action=case_action,
        flagged=list(decision.rider_flags),
        model_calls=root.total_model_calls,
        tokens=root.total_tokens,
        cost_usd=root.total_cost,
    )


def _needs_outreach(case: Case, case_action: CaseAction) -> bool:
    """A failing case is written about; new findings reach newly flagged riders."""
    if case.status == Status.OPEN:
        return True
    return case.status == Status.PENDING_REPLY and case_action == "updated"


def _store_verification(
    facts: VanpoolFacts,
    case: Case | None,
    check: str,
    result: SpecialistResult,
    hash_: str,
    audit_date: dt.date,
    trace: RunTrace,
) -> Verification:
    return Verification.objects.create(
        case=case,
        vanpool_id=_vanpool_pk(facts),
        check_type=check,
        verdict=result.verdict,
        confidence=result.confidence,
        reasoning=result.reasoning,
        evidence=[item.model_dump(mode="json") for item in result.evidence],
        rider_flags=result.rider_verdicts(),
        **_deciding_backend(trace),
        audit_date=audit_date,
        input_hash=hash_,
    )


def _deciding_backend(trace: RunTrace) -> dict[str, str]:
    """The model's name when its judgement was merged in, else the rules engine."""
    for child in trace.children:
        if child.backend != "rules" and not child.error:
            return {"backend": child.backend, "model": child.model}
    return {"backend": trace.backend, "model": trace.model}


def _apply_decision(
    facts: VanpoolFacts,
    open_case_row: Case | None,
    decision: Decision,
    actor: Actor,
    audit_date: dt.date,
) -> tuple[Case | None, CaseAction]:
    if decision.verdict == "pass" and not decision.unknown_checks:
        if open_case_row is None:
            return None, "none"
        closed = transition(
            open_case_row,
            Status.CLOSED,
            actor=actor,
            outcome=Case.Outcome.RESOLVED,
            note=f"re-audit on {audit_date} passed every check",
        )
        return closed, "closed"
    if open_case_row is None:
        case, _ = open_case(
            Vanpool.objects.get(pk=_vanpool_pk(facts)),
            actor=actor,
            reason=decision.reason,
            failed_checks=decision.failed_checks,
            details=decision.details,
            extra_meta={"rider_flags": decision.rider_flags},
        )
        action: CaseAction = "opened"
    else:
        case, changed = update_findings(
            open_case_row,
            actor=actor,
            reason=decision.reason,
            failed_checks=decision.failed_checks,
            details=decision.details,
            rider_flags=decision.rider_flags,
        )
        action = "updated" if changed else "none"
    case = _route_for_review(case, decision, actor, audit_date)
    return case, action


def _route_for_review(case: Case, decision: Decision, actor: Actor, audit_date: dt.date) -> Case:
    """Unknowns go to a human before any outreach; a settled case leaves review."""
    pending = PendingAction.objects.filter(
        case=case, kind=PendingAction.Kind.DECIDE_VERIFICATION, status=PendingAction.Status.PENDING
    )
    if decision.unknown_checks:
        riders = {
            employee_id: {
                check: verdict for check, verdict in checks.items() if verdict == "unknown"
            }
            for employee_id, checks in decision.rider_flags.items()
            if "unknown" in checks.values()
        }
        payload = {
            "checks": decision.unknown_checks,
            "riders": riders,
            "audit_date": audit_date.isoformat(),
            "details": decision.details,
            "inputs": {
                employee_id: {
                    check: value
                    for check, value in decision.unknown_inputs.get(employee_id, {}).items()
                    if check in checks
                }
                for employee_id, checks in riders.items()
            },
        }
        if not pending.filter(payload=payload).exists():
            pending.update(
                status=PendingAction.Status.SUPERSEDED,
                decided_at=timezone.now(),
                note="a newer audit asked again",
            )
            _, held = request_review(
                case,
                PendingAction.Kind.DECIDE_VERIFICATION,
                payload=payload,
                actor=actor,
                note="the rules could not decide: " + ", ".join(decision.unknown_checks),
            )
            return held or case
        if case.status != Status.HITL_REVIEW:
            case = transition(
                case,
                Status.HITL_REVIEW,
                actor=actor,
                note="the rules could not decide: " + ", ".join(decision.unknown_checks),
            )
        return case
    if pending.exists():
        pending.update(
            status=PendingAction.Status.SUPERSEDED,
            decided_at=timezone.now(),
            note="a newer audit decided every rider",
        )
        if case.status == Status.HITL_REVIEW:
            case = transition(
                case, Status.OPEN, actor=actor, note="every rider now decided by the rules"
            )
    return case


class AlreadyDecided(Exception):
    """The action is no longer pending (decided, superseded or expired)."""


def decide_verification(
    action: PendingAction,
    rulings: dict[str, str],
    *,
    by: AbstractBaseUser,
    note: str = "",
) -> Case:
    """A reviewer rules pass or fail for each undecided rider; the case moves on.

    All pass (and nothing else failing) closes the case resolved; any fail
    leaves it open with the ruling in its findings, ready for outreach.
    """
    expected = set(action.payload.get("riders", {}))
    bad = {emp: v for emp, v in rulings.items() if v not in ("pass", "fail")}
    if bad or set(rulings) != expected:
        raise ValueError(
            f"rule pass or fail for exactly these riders: {', '.join(sorted(expected))}"
        )
    with transaction.atomic():
        claimed = PendingAction.objects.filter(
            pk=action.pk, status=PendingAction.Status.PENDING
        ).update(
            status=PendingAction.Status.APPROVED,
            decided_by=by,
            decided_at=timezone.now(),
            note=note,
        )
        if claimed != 1:
            raise AlreadyDecided("this review was already decided or replaced")
        if action.case_id is None:  # as Case.objects.get(pk=None) would
            raise Case.DoesNotExist("Case matching query does not exist.")
        case = Case.objects.get(pk=action.case_id)
        flags = _apply_rulings(case.meta.get("rider_flags", {}), action.payload["riders"], rulings)
        failed = sorted(
            {check for checks in flags.values() for check, v in checks.items() if v == "fail"}
        )
        ruling_note = "reviewer ruled " + ", ".join(
            f"{emp} {v}" for emp, v in sorted(rulings.items())
        )
        if failed:
            case, _ = update_findings(
                case,
                actor=by,
                reason=reason_for(failed),
                failed_checks=failed,
                details=f"{case.meta.get('details', '')} {ruling_note}.".strip(),
                rider_flags=flags,
            )
            if case.status == Status.HITL_REVIEW:
                case = transition(case, Status.OPEN, actor=by, note=ruling_note)
        else:
            case = transition(
                case, Status.CLOSED, actor=by, outcome=Case.Outcome.RESOLVED, note=ruling_note
            )
        PendingAction.objects.filter(pk=action.pk).update(
            executed_at=timezone.now(), result={"rulings": rulings, "case_status": case.status}
        )
    return case


def _apply_rulings(
    flags: dict[str, dict[str, str]], asked: dict[str, dict[str, str]], rulings: dict[str, str]
) -> dict[str, dict[str, str]]:
    merged = {emp: dict(checks) for emp, checks in flags.items()}
    for employee_id, checks in asked.items():
        for check in checks:
            merged.setdefault(employee_id, {})[check] = rulings[employee_id]
    # Riders ruled to pass on every check are no longer flagged.
    return {emp: checks for emp, checks in merged.items() if set(checks.values()) != {"pass"}}


__all__ = [
    "AlreadyDecided",
    "AuditOutcome",
    "IllegalTransition",
    "UnknownVanpool",
    "audit_preloaded",
    "audit_vanpool",
    "audit_vanpools",
    "decide_verification",
]
