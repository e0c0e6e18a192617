"""What the supervisor reads: a case's evidence package, loaded once, and the issue it raises."""

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from django.utils import timezone

from cases.kinds import DecideVerification
from cases.models import Case, CaseEvent, PendingAction, Verification
from outreach.models import Message
from vanpools.models import Rider

AGENT = "supervisor"
Severity = Literal["high", "medium", "low"]


@dataclass(frozen=True)
class Issue:
    # missing_section | consistency | evidence | summary | timeline | membership
    # | reply | contradiction | gap
    type: str
    severity: Severity
    description: str
    check: str = ""  # the deterministic check or assessment that raised it

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Package:
    """The evidence package, loaded once (a fixed number of queries)."""

    case: Case
    now: dt.datetime
    flagged: dict[str, list[str]]  # employee_id → failed checks
    latest: dict[str, Verification]  # check → newest verification on the case
    rulings: dict[tuple[str, str], str]  # (employee_id, check) → a reviewer's pass|fail
    events: list[CaseEvent]
    messages: list[Message]
    riders: dict[str, Rider]  # employee_id → the seat on the case's vanpool
    actions: list[PendingAction]
    reaudits: list[CaseEvent] = field(default_factory=list)

    @property
    def last_reaudit(self) -> CaseEvent | None:
        return self.reaudits[-1] if self.reaudits else None


def load_package(case: Case, now: dt.datetime | None = None) -> Package:
    case = Case.objects.select_related("vanpool").get(pk=case.pk)
    flags = case.meta.get("rider_flags", {})
    flagged = {
        emp: sorted(check for check, verdict in checks.items() if verdict == "fail")
        for emp, checks in sorted(flags.items())
        if "fail" in checks.values()
    }
    latest: dict[str, Verification] = {}
    for verification in case.verifications.order_by("-created_at", "-id"):
        latest.setdefault(verification.check_type, verification)
    actions = list(PendingAction.objects.filter(case=case).order_by("created_at", "id"))
    events = list(case.events.order_by("created_at", "id"))
    package = Package(
        case=case,
        now=now or timezone.now(),
        flagged=flagged,
        latest=latest,
        rulings=_rulings(actions, latest),
        events=events,
        messages=list(
            Message.objects.filter(thread__case=case)
            .select_related("employee")
            .order_by("created_at", "id")
        ),
        riders={
            rider.employee.employee_id: rider
            for rider in Rider.objects.filter(
                vanpool_id=case.vanpool_id, employee__employee_id__in=list(flagged)
            )
            .select_related("employee")
            .order_by("-status")  # "cancelled" < "active": an active seat wins below
        },
        actions=actions,
        reaudits=[event for event in events if "reaudit" in event.data],
    )
    return package


def _rulings(
    actions: list[PendingAction], latest: dict[str, Verification]
) -> dict[tuple[str, str], str]:
    """A reviewer's pass/fail for riders the rules left unknown, newer than the verification."""
    rulings: dict[tuple[str, str], str] = {}
    for action in actions:
        if not action.is_a(DecideVerification) or action.status != "approved":
            continue
        ruled = action.result.get("rulings", {})
        for employee_id, checks in action.ask_as(DecideVerification).riders.items():
            for check in checks:
                verification = latest.get(check)
                if (
                    verification
                    and action.decided_at
                    and action.decided_at < verification.created_at
                ):
                    continue  # a newer audit measured it since
                if employee_id in ruled:
                    rulings[(employee_id, check)] = ruled[employee_id]
    return rulings


def rider_verdict(package: Package, employee_id: str, check: str) -> str:
    """What the newest record says about one rider on one check (a ruling fills an unknown)."""
    verification = package.latest.get(check)
    verdict = verification.rider_flags.get(employee_id, "") if verification else ""
    if verdict in ("", "unknown") and (employee_id, check) in package.rulings:
        return package.rulings[(employee_id, check)]
    return verdict


def evidence_for(verification: Verification | None, employee_id: str) -> list[dict[str, Any]]:
    if verification is None:
        return []
    return [item for item in verification.evidence if item.get("employee_id") == employee_id]
