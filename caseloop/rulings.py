"""A person rules on the riders the rules could not decide: asked, ruled, and standing.

An audit whose rules leave a rider's check unknown asks a reviewer with a
``decide_verification`` action (``route_for_review``) instead of writing to the
rider; the reviewer rules pass or fail per rider (``decide_verification``), and
a ruling stands at later audits while the fact it ruled on is unchanged
(``with_standing_rulings``). ``caseloop.audits`` calls the first and the last.
"""

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Literal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from audit.decide import Decision, reason_for
from cases.kinds import DecideVerification
from cases.lifecycle import Actor, request_review, transition, update_findings
from cases.models import Case, PendingAction

Status = Case.Status


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
    ruled = (
        PendingAction.objects.of(DecideVerification)
        .filter(case=case, status=PendingAction.Status.APPROVED)
        .order_by("-decided_at", "-id")
    )
    standing: dict[tuple[str, str], str] = {}
    for action in ruled:
        rulings = (action.result or {}).get("rulings", {})
        asked = action.ask_as(DecideVerification)
        asked_inputs = asked.inputs
        for employee_id, checks in asked.riders.items():
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


def route_for_review(case: Case, decision: Decision, actor: Actor, audit_date: dt.date) -> Case:
    """Unknowns go to a human before any outreach; a settled case leaves review."""
    pending = PendingAction.objects.of(DecideVerification).filter(
        case=case, status=PendingAction.Status.PENDING
    )
    if decision.unknown_checks:
        riders: dict[str, dict[str, Literal["unknown"]]] = {
            employee_id: {
                check: "unknown" for check, verdict in checks.items() if verdict == "unknown"
            }
            for employee_id, checks in decision.rider_flags.items()
            if "unknown" in checks.values()
        }
        ask = DecideVerification(
            checks=decision.unknown_checks,
            riders=riders,
            audit_date=audit_date,
            details=decision.details,
            inputs={
                employee_id: {
                    check: value
                    for check, value in decision.unknown_inputs.get(employee_id, {}).items()
                    if check in checks
                }
                for employee_id, checks in riders.items()
            },
        )
        if not pending.filter(payload=ask.stored()).exists():
            pending.update(
                status=PendingAction.Status.SUPERSEDED,
                decided_at=timezone.now(),
                note="a newer audit asked again",
            )
            _, held = request_review(
                case,
                ask,
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
    asked = action.ask_as(DecideVerification)
    expected = set(asked.riders)
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
        flags = _apply_rulings(case.meta.get("rider_flags", {}), asked.riders, rulings)
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
    flags: dict[str, dict[str, str]], asked: Mapping[str, Iterable[str]], rulings: dict[str, str]
) -> dict[str, dict[str, str]]:
    merged = {emp: dict(checks) for emp, checks in flags.items()}
    for employee_id, checks in asked.items():
        for check in checks:
            merged.setdefault(employee_id, {})[check] = rulings[employee_id]
    # Riders ruled to pass on every check are no longer flagged.
    return {emp: checks for emp, checks in merged.items() if set(checks.values()) != {"pass"}}
