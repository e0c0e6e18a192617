"""Checks of what the case says: its summary, its evidence, their consistency, who it names.

The findings a coordinator acts on must explain themselves, cite their
records, agree with the newest verifications, and name riders who still hold
a seat.
"""

from caseloop.supervisor.package import Issue, Package, evidence_for, rider_verdict
from cases.kinds import CancelMembership
from vanpools.models import Rider

# A summary shorter than this says too little for a cancellation.
SUMMARY_MIN_WORDS = 12


def check_summary(package: Package) -> list[Issue]:
    summary = str(package.case.meta.get("details", "")).strip()
    if not summary:
        return [Issue("missing_section", "medium", "The case has no written summary.", "summary")]
    issues = []
    if len(summary.split()) < SUMMARY_MIN_WORDS:
        issues.append(
            Issue(
                "summary",
                "medium",
                f"The summary is too short to explain a cancellation ({len(summary.split())} "
                f"words): {summary[:120]!r}.",
                "summary",
            )
        )
    unnamed = [emp for emp in package.flagged if emp not in summary]
    if unnamed:
        issues.append(
            Issue(
                "summary",
                "medium",
                f"The summary does not name the flagged rider(s) {', '.join(unnamed)}.",
                "summary",
            )
        )
    return issues


def check_evidence(package: Package) -> list[Issue]:
    failed = package.case.failed_checks
    if not failed or not package.flagged:
        return [
            Issue(
                "missing_section",
                "high",
                "The case names no failed check or no flagged rider to cancel.",
                "evidence",
            )
        ]
    issues = []
    for check in failed:
        verification = package.latest.get(check)
        if verification is None:
            issues.append(
                Issue(
                    "missing_section",
                    "high",
                    f"The {check} check failed but the case holds no {check} verification.",
                    "evidence",
                )
            )
            continue
        for employee_id, checks in package.flagged.items():
            if check not in checks:
                continue
            items = evidence_for(verification, employee_id)
            if not items:
                issues.append(
                    Issue(
                        "missing_section",
                        "high",
                        f"No {check} evidence for {employee_id} in verification {verification.pk}.",
                        "evidence",
                    )
                )
            elif not all(item.get("cites") for item in items):
                issues.append(
                    Issue(
                        "evidence",
                        "high",
                        f"{employee_id}'s {check} evidence cites no record it came from.",
                        "evidence",
                    )
                )
    return issues


def check_consistency(package: Package) -> list[Issue]:
    """``failed_checks`` and each rider's flags must agree with the newest verifications."""
    issues = []
    recorded = set(package.case.failed_checks)
    for check, verification in sorted(package.latest.items()):
        riders = set(verification.rider_flags) | {e for e, c in package.rulings if c == check}
        failing = any(rider_verdict(package, emp, check) == "fail" for emp in riders)
        if check in recorded and not failing:
            issues.append(
                Issue(
                    "consistency",
                    "high",
                    f"The case lists {check} as failed, but the latest {check} verification "
                    f"({verification.audit_date or verification.created_at:%Y-%m-%d}) has no "
                    f"failing rider ({verification.verdict}).",
                    "consistency",
                )
            )
        elif check not in recorded and failing:
            issues.append(
                Issue(
                    "consistency",
                    "medium",
                    f"The latest {check} verification fails a rider, but the case does not "
                    f"list {check} among its failed checks.",
                    "consistency",
                )
            )
    for employee_id, checks in package.flagged.items():
        for check in checks:
            if check not in package.latest:
                continue  # the evidence check reports the missing verification
            verdict = rider_verdict(package, employee_id, check)
            if verdict != "fail":
                issues.append(
                    Issue(
                        "consistency",
                        "high",
                        f"{employee_id} is flagged for {check}, but the latest {check} "
                        f"verification says {verdict or 'nothing about them'}.",
                        "consistency",
                    )
                )
    return issues


def check_membership(package: Package) -> list[Issue]:
    issues = []
    pending = {
        action.rider_id
        for action in package.actions
        if action.is_a(CancelMembership) and action.status == "pending"
    }
    for employee_id in package.flagged:
        rider = package.riders.get(employee_id)
        if rider is not None and rider.status == Rider.Status.ACTIVE:
            continue
        vanpool_id = package.case.vanpool.vanpool_id
        state = (
            f"{employee_id} has no seat on {vanpool_id}"
            if rider is None
            else f"{employee_id}'s seat on {vanpool_id} is {rider.status}"
        )
        if rider is not None and rider.pk in pending:
            issues.append(
                Issue(
                    "membership",
                    "high",
                    f"A cancellation waits, but {state}: not an active member.",
                    "membership",
                )
            )
        else:
            issues.append(
                Issue(
                    "membership",
                    "medium",
                    f"{state}: the findings name someone who is no longer an active member.",
                    "membership",
                )
            )
    return issues
