"""The case manager: audit one vanpool end to end and record what was decided.

Preload (a fixed number of queries) → ``audit.decide`` (writes nothing) → record
the findings, the evidence and the trace in one transaction, through the
lifecycle functions. All pass closes an open case as resolved; any
fail opens or updates the vanpool's one open case; any unknown sends the case
to a human with a ``decide_verification`` PendingAction instead of outreach
(``caseloop.rulings``, which also applies the reviewer's rulings).
An audit of exactly the same facts on the same date is recognised by its input
hash and changes nothing, because django-q2 may deliver the task twice.
"""

import datetime as dt
import gc
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents.contracts import SpecialistResult, VanpoolMonthEvidence
from agents.tracing import RunTrace, save_trace_trees
from audit.decide import ALL_CHECKS, VAN_CHECKS, Decision, decide, input_hashes
from audit.facts import VanpoolFacts, facts_json, preload_vanpools, with_rides
from caseloop.rulings import (
    AlreadyDecided,
    decide_verification,
    route_for_review,
    with_standing_rulings,
)
from cases.kinds import ReviewVanpool
from cases.lifecycle import (
    Actor,
    IllegalTransition,
    open_case,
    request_review,
    transition,
    update_findings,
)
from cases.models import Case, PendingAction, Verification
from poolpatrol.bulk_insert import insert_returning, saved_key
from poolpatrol.logcontext import log_context
from poolpatrol.privacy import withhold_home_points
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
    model_errors: int = 0  # failed model calls: the rules' result stood in
    tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    error: str = ""


def audit_vanpool(
    vanpool_id: str,
    *,
    audit_date: dt.date | None = None,
    checks: Sequence[str] = ALL_CHECKS,
    actor: Actor = AGENT,
) -> AuditOutcome:
    audit_date = audit_date or timezone.localdate()
    facts = preload_vanpools([vanpool_id], audit_date).get(vanpool_id)
    if facts is None:
        raise UnknownVanpool(f"no vanpool {vanpool_id!r}")
    return audit_preloaded(facts, audit_date=audit_date, checks=checks, actor=actor)


def audit_vanpools(
    vanpool_ids: Iterable[str],
    *,
    audit_date: dt.date | None = None,
    chunk_size: int | None = None,
    on_done: Callable[[AuditOutcome], None] | None = None,
) -> list[AuditOutcome]:
    """Audit many vanpools a chunk (``AUDIT_CHUNK_SIZE``) at a time.

    Each chunk is preloaded in a fixed number of queries, decided in memory,
    and written in one transaction: its verifications and traces in a few
    bulk inserts, each vanpool's case moves through the lifecycle in a
    savepoint of its own. One vanpool's failure is reported as an ``error``
    outcome; it does not stop (or roll back) the others.
    """
    ids = list(vanpool_ids)
    audit_date = audit_date or timezone.localdate()
    size = chunk_size or settings.AUDIT_CHUNK_SIZE
    outcomes: list[AuditOutcome] = []
    for start in range(0, len(ids), size):
        chunk = ids[start : start + size]
        try:
            with _cycle_collector_paused():
                preloaded = preload_vanpools(chunk, audit_date, rides=False)
                done = audit_chunk(chunk, preloaded, audit_date=audit_date)
        except Exception as exc:  # the chunk's transaction rolled back whole: say so per vanpool
            done = [_failed(vanpool_id, exc) for vanpool_id in chunk]
        for outcome in done:
            outcomes.append(outcome)
            if on_done:
                on_done(outcome)
    return outcomes


@contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while one chunk is audited; as it was after.

    A chunk makes hundreds of thousands of short-lived containers (rows, facts,
    evidence, unsaved models), freed by reference counting; each allocation
    burst set off collector passes over the whole process heap, a third of a
    bulk audit's CPU. A chunk is bounded (``AUDIT_CHUNK_SIZE``), so the few
    cycles it leaves are bounded too, and the collector takes them once it runs
    again.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def audit_chunk(
    vanpool_ids: Sequence[str],
    preloaded: dict[str, VanpoolFacts],
    *,
    audit_date: dt.date | None = None,
    checks: Sequence[str] = ALL_CHECKS,
    actor: Actor = AGENT,
) -> list[AuditOutcome]:
    """Audit preloaded vanpools together; outcomes in the order of ``vanpool_ids``."""
    audit_date = audit_date or timezone.localdate()
    outcomes: dict[str, AuditOutcome] = {}
    active = []
    for vanpool_id in vanpool_ids:
        facts = preloaded.get(vanpool_id)
        if facts is None:
            outcomes[vanpool_id] = AuditOutcome(vanpool_id, "error", error="no such vanpool")
        elif facts.status != "active":
            reason = f"vanpool is {facts.status}"
            outcomes[vanpool_id] = AuditOutcome(vanpool_id, "skipped", reason=reason)
        else:
            active.append(facts)
    # Encoded once a vanpool: the input hash, and the trace's input when it is decided.
    encoded = {facts.vanpool_id: facts_json(facts) for facts in active}
    hashes = {
        facts.vanpool_id: input_hashes(
            encoded[facts.vanpool_id], checks, audit_date, settings.LLM_BACKEND
        )
        for facts in active
    }
    audited = _audited_hashes([_vanpool_pk(facts) for facts in active], checks)
    open_cases = _open_cases([_vanpool_pk(facts) for facts in active])
    decided = []
    changed = [f for f in active if audited.get(_vanpool_pk(f)) != hashes[f.vanpool_id]]
    # Ride days and swipes are read only for the vanpools that will be decided.
    loaded = {facts.vanpool_id: facts for facts in with_rides(changed, audit_date)}
    for facts in active:
        if facts.vanpool_id not in loaded:
            # Exactly these facts were audited today: nothing is written (at-least-once tasks).
            case = open_cases.get(_vanpool_pk(facts))
            outcomes[facts.vanpool_id] = AuditOutcome(
                facts.vanpool_id, "unchanged", case_id=case.case_id if case else ""
            )
            continue
        facts = loaded[facts.vanpool_id]
        try:
            with log_context(vanpool_id=facts.vanpool_id):
                decided.append(
                    _decide(
                        facts,
                        encoded[facts.vanpool_id],
                        audit_date,
                        checks,
                        hashes[facts.vanpool_id],
                    )
                )
        except Exception as exc:  # one bad vanpool must not stop a bulk audit
            outcomes[facts.vanpool_id] = _failed(facts.vanpool_id, exc)
    for outcome in _record(decided, open_cases, audit_date, actor):
        outcomes[outcome.vanpool_id] = outcome
    return [outcomes[vanpool_id] for vanpool_id in vanpool_ids]


def audit_preloaded(
    facts: VanpoolFacts,
    *,
    audit_date: dt.date | None = None,
    checks: Sequence[str] = ALL_CHECKS,
    actor: Actor = AGENT,
) -> AuditOutcome:
    """One vanpool (a re-audit, the API, a task): the chunk path with a chunk of one.

    Unlike a bulk audit, an error is raised to the caller rather than reported.
    """
    [outcome] = audit_chunk(
        [facts.vanpool_id],
        {facts.vanpool_id: facts},
        audit_date=audit_date,
        checks=checks,
        actor=actor,
    )
    if outcome.status == "error":
        raise AuditFailed(outcome.error)
    return outcome


class AuditFailed(RuntimeError):
    """A single vanpool's audit failed; nothing of it was written."""


@dataclass
class _Decided:
    facts: VanpoolFacts
    hashes: dict[str, str]
    results: dict[str, SpecialistResult]
    decision: Decision
    root: RunTrace


def _decide(
    facts: VanpoolFacts,
    encoded: dict,
    audit_date: dt.date,
    checks: Sequence[str],
    hashes: dict[str, str],
) -> _Decided:
    root = RunTrace(
        agent=AGENT,
        backend=settings.LLM_BACKEND,
        input={
            "audit_date": audit_date.isoformat(),
            "checks": list(checks),
            # The facts as audited, but a rider's home point as its source:
            # the evidence keeps the distance; the point is for auditors' eyes
            # only, on the employee's record, not copied into every trace.
            "facts": withhold_home_points(encoded),
        },
    )
    results, decision = decide(facts, audit_date, checks, root)
    return _Decided(facts, hashes, results, decision, root)


def _failed(vanpool_id: str, exc: Exception) -> AuditOutcome:
    logger.error("audit of %s failed", vanpool_id, exc_info=exc)
    return AuditOutcome(vanpool_id, "error", error=f"{type(exc).__name__}: {exc}")


def _vanpool_pk(facts: VanpoolFacts) -> int:
    """The audited vanpool's row: facts audited and stored always came from the database."""
    assert facts.pk is not None, f"{facts.vanpool_id}: facts without a database row"
    return facts.pk


def _audited_hashes(vanpool_pks: list[int], checks: Sequence[str]) -> dict[int, dict[str, str]]:
    """Each vanpool's newest input hash per check, in one query."""
    latest = (
        Verification.objects.filter(vanpool_id__in=vanpool_pks, check_type__in=list(checks))
        .order_by("vanpool_id", "-created_at", "-id")
        .values_list("vanpool_id", "check_type", "input_hash")
    )
    newest: dict[int, dict[str, str]] = {}
    for vanpool_pk, check, stored_hash in latest:
        newest.setdefault(vanpool_pk, {}).setdefault(check, stored_hash)
    return newest


def _open_cases(vanpool_pks: list[int]) -> dict[int, Case]:
    rows = Case.objects.filter(vanpool_id__in=vanpool_pks).exclude(status=Status.CLOSED)
    return {case.vanpool_id: case for case in rows}


def _record(
    decided: list[_Decided], open_cases: dict[int, Case], audit_date: dt.date, actor: Actor
) -> list[AuditOutcome]:
    """Write a chunk's findings: each case in its own savepoint, the rest in bulk."""
    outcomes: list[AuditOutcome] = []
    verifications: list[Verification] = []
    trees: list[tuple[RunTrace, int | None, Case | None]] = []
    with transaction.atomic():
        for item in decided:
            try:
                with (
                    _own_savepoint(item, open_cases),
                    log_context(vanpool_id=item.facts.vanpool_id),
                ):
                    case, case_action, decision = _apply(item, open_cases, actor, audit_date)
            except Exception as exc:  # this vanpool's case writes are rolled back alone
                outcomes.append(_failed(item.facts.vanpool_id, exc))
                continue
            for trace, (check, result) in zip(
                item.root.children, item.results.items(), strict=True
            ):
                trace.verification = _verification(item, case, check, result, audit_date, trace)
                verifications.append(trace.verification)
            item.root.output = _root_output(decision, case, case_action)
            trees.append((item.root, item.facts.pk, case))
            if case is not None and _needs_outreach(case, case_action):
                enqueue_outreach(case.pk)
            outcomes.append(_outcome(item, decision, case, case_action))
        insert_returning(verifications)
        save_trace_trees(trees)
    return outcomes


def _own_savepoint(item: _Decided, open_cases: dict[int, Case]) -> AbstractContextManager:
    """A savepoint for a vanpool whose case will be written; none for a clean pass.

    Most vanpools pass and have no case: they write nothing of their own
    here, and two statements each (SAVEPOINT, RELEASE) would be most of a
    chunk's queries.
    """
    clean = item.decision.verdict == "pass" and not item.decision.unknown_checks
    if clean and _vanpool_pk(item.facts) not in open_cases:
        return nullcontext()
    return transaction.atomic()


def _apply(
    item: _Decided, open_cases: dict[int, Case], actor: Actor, audit_date: dt.date
) -> tuple[Case | None, CaseAction, Decision]:
    # A standing ruling changes the findings themselves, so the trace and
    # the outcome report the decision as applied.
    open_case_row = open_cases.get(_vanpool_pk(item.facts))
    decision = with_standing_rulings(open_case_row, item.decision)
    case, case_action = _apply_decision(item.facts, open_case_row, decision, actor, audit_date)
    if case is not None:
        case = _route_van_finding(case, decision, item.results, actor, audit_date)
    return case, case_action, decision


def _root_output(decision: Decision, case: Case | None, case_action: CaseAction) -> dict:
    return {
        "verdict": decision.verdict,
        "reason": decision.reason,
        "failed_checks": decision.failed_checks,
        "unknown_checks": decision.unknown_checks,
        "rider_flags": decision.rider_flags,
        "case_id": case.case_id if case else None,
        "case_action": case_action,
    }


def _outcome(
    item: _Decided, decision: Decision, case: Case | None, case_action: CaseAction
) -> AuditOutcome:
    statuses: dict[str, OutcomeStatus] = {"pass": "passed", "fail": "failed"}
    status: OutcomeStatus = statuses.get(decision.verdict, "unknown")
    if decision.unknown_checks and status == "failed":
        status = "unknown"
    logger.debug("audited: %s %s, case %s", status, decision.reason, case_action)
    root = item.root
    return AuditOutcome(
        item.facts.vanpool_id,
        status,
        reason=decision.reason,
        case_id=case.case_id if case else "",
        case_action=case_action,
        flagged=list(decision.rider_flags),
        model_calls=root.total_model_calls,
        model_errors=root.total_model_errors,
        tokens=root.total_tokens,
        cost_usd=root.total_cost,
    )


def _needs_outreach(case: Case, case_action: CaseAction) -> bool:
    """A failing case is written about; new findings reach newly flagged riders."""
    if case.status == Status.OPEN:
        return True
    return case.status == Status.PENDING_REPLY and case_action == "updated"


def _verification(
    item: _Decided,
    case: Case | None,
    check: str,
    result: SpecialistResult,
    audit_date: dt.date,
    trace: RunTrace,
) -> Verification:
    """The check's row, unsaved: a chunk's rows are inserted together."""
    return Verification(
        case_id=saved_key(case),
        vanpool_id=_vanpool_pk(item.facts),
        check_type=check,
        verdict=result.verdict,
        confidence=result.confidence,
        reasoning=result.reasoning,
        evidence=_evidence_json(result, trace),
        rider_flags=result.rider_verdicts(),
        **_deciding_backend(trace),
        audit_date=audit_date,
        input_hash=item.hashes[check],
    )


def _evidence_json(result: SpecialistResult, trace: RunTrace) -> list[dict]:
    """The result's evidence as JSON, dumped once.

    A check's trace holds the rules' result as dumped (``audit.resolve``); with
    no model run under it, that result is this one, and its evidence is reused
    rather than serialised again for every check of every vanpool.
    """
    output = trace.output if isinstance(trace.output, dict) else {}
    dumped = output.get("evidence")
    if dumped is not None and not trace.children and output.get("check") == result.check:
        return dumped
    return [evidence.model_dump(mode="json") for evidence in result.evidence]


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
    case = route_for_review(case, decision, actor, audit_date)
    return case, action


def _route_van_finding(
    case: Case,
    decision: Decision,
    results: dict[str, SpecialistResult],
    actor: Actor,
    audit_date: dt.date,
) -> Case:
    """A case about the van alone goes to its coordinator as a card; no rider is written to.

    Only when nothing else holds the case: a rider's failure is written to as
    usual (the van's finding is on the case page), and an unknown waits for its
    ruling first. One card per van and month; a newer month replaces it.
    """
    van_failed = [check for check in decision.failed_checks if check in VAN_CHECKS]
    riders_fail = any("fail" in checks.values() for checks in decision.rider_flags.values())
    if not van_failed or riders_fail or decision.unknown_checks or case.status == Status.CLOSED:
        return case
    result = results.get("vanpool_rules")
    month = next(
        (
            item
            for item in (result.evidence if result else [])
            if isinstance(item, VanpoolMonthEvidence)
        ),
        None,
    )
    if result is None or month is None:
        return case
    pending = PendingAction.objects.of(ReviewVanpool).filter(
        case=case, status=PendingAction.Status.PENDING
    )
    if any(action.ask_as(ReviewVanpool).month == month.month for action in pending):
        return case
    pending.update(
        status=PendingAction.Status.SUPERSEDED,
        decided_at=timezone.now(),
        note="a newer month's audit asked again",
    )
    ask = ReviewVanpool(
        vanpool_id=month.vanpool_id,
        month=month.month,
        rules=dict(month.rules),
        details=result.reasoning,
        audit_date=audit_date,
    )
    failed = ", ".join(rule for rule, verdict in month.rules.items() if verdict == "fail")
    note = f"the van's {month.month} fails §132(f) ({failed}): for its coordinator"
    _, held = request_review(case, ask, actor=actor, note=note)
    return held or case


__all__ = [
    "AlreadyDecided",
    "AuditOutcome",
    "IllegalTransition",
    "UnknownVanpool",
    "audit_preloaded",
    "audit_vanpool",
    "audit_vanpools",
    "decide_verification",
    "with_standing_rulings",
]
