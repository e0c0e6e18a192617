"""The supervisor: an independent check of a case's evidence package before a cancellation.

docs/design.md step 9. When a case reaches ``pre_cancel`` the supervisor validates
what a coordinator is about to act on and records a CaseReview. It only reads:
it never changes the case, its status, its findings or its actions.

1. Deterministic checks (no model): summary, evidence, consistency, timeline,
   membership, replies. Each returns issues {type, severity, description}.
2. Assessment of the reasoning: the rules engine always (evidence strength,
   contradictions such as a location flag within the distance limit, gaps);
   with ``LLM_BACKEND=openai`` a model as well, merged conservatively (the
   weaker justification, the union of findings). A model failure leaves the
   rules assessment and the deterministic checks to decide.
3. Score from 100: each issue costs once — a missing section 15, a
   consistency issue 20, otherwise by severity (high 10, medium 5, low 2) —
   and a weak justification 15; clamped to 0..100. Passed when the score is at
   least 70 and no issue is high-severity.
"""

import datetime as dt
import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from pydantic import BaseModel, ConfigDict

from agents import llm
from agents.tracing import RunTrace, save_trace_tree, timed, traced_structured
from cases.models import Case, CaseEvent, CaseReview, PendingAction, Verification
from outreach.models import Message
from vanpools.models import Rider

logger = logging.getLogger(__name__)

AGENT = "supervisor"
PROMPT_VERSION = "v1"
Severity = Literal["high", "medium", "low"]
Strength = Literal["weak", "adequate", "strong"]

PASS_SCORE = 70
SEVERITY_PENALTY: dict[str, int] = {"high": 10, "medium": 5, "low": 2}
TYPE_PENALTY: dict[str, int] = {"missing_section": 15, "consistency": 20}
WEAK_JUSTIFICATION_PENALTY = 15
# A summary shorter than this says too little for a cancellation.
SUMMARY_MIN_WORDS = 12
# The deadline is set as the letters are written, a moment before the outbox
# sends them; a letter held up longer than this shortened the rider's time.
SEND_GRACE = dt.timedelta(hours=1)
# A location fail this far beyond the limit is unmistakable; one closer is
# adequate, and closer still on a ZIP-centroid home is weak.
STRONG_DISTANCE_RATIO = 1.5
CENTROID_WEAK_RATIO = 1.2
STRONG_SHIFT_SHARE = 0.6
ADEQUATE_SHIFT_SHARE = 0.3
_RANK: dict[str, int] = {"weak": 0, "adequate": 1, "strong": 2}

CHECK_NAMES = ("summary", "evidence", "consistency", "timeline", "membership", "replies")


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


# --- What the supervisor reads -----------------------------------------------------------


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
        if action.kind != PendingAction.Kind.DECIDE_VERIFICATION or action.status != "approved":
            continue
        ruled = action.result.get("rulings", {})
        for employee_id, checks in action.payload.get("riders", {}).items():
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


def _evidence_for(verification: Verification | None, employee_id: str) -> list[dict]:
    if verification is None:
        return []
    return [item for item in verification.evidence if item.get("employee_id") == employee_id]


# --- Deterministic checks ------------------------------------------------------------------


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
            items = _evidence_for(verification, employee_id)
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


def _delivered(message: Message) -> bool:
    return (
        message.direction == Message.Direction.OUTBOUND
        and message.status == Message.Status.SENT
        and message.sent_at is not None
        and "bounced" not in message.flags
    )


def check_timeline(package: Package) -> list[Issue]:
    """Outreach, a deadline, the full waiting period and the re-audits the policy requires."""
    issues = []
    wait = dt.timedelta(days=settings.REPLY_WAIT_DAYS)
    first_delivered: list[dt.datetime] = []
    for employee_id in package.flagged:
        written = [
            m
            for m in package.messages
            if m.direction == Message.Direction.OUTBOUND
            and m.employee is not None
            and m.employee.employee_id == employee_id
        ]
        delivered = sorted(m.sent_at for m in written if _delivered(m) and m.sent_at is not None)
        if not written:
            issues.append(
                Issue(
                    "missing_section",
                    "high",
                    f"No email was ever written to {employee_id}.",
                    "timeline",
                )
            )
        elif not delivered:
            statuses = ", ".join(sorted({m.status for m in written}))
            issues.append(
                Issue(
                    "timeline",
                    "high",
                    f"No email to {employee_id} was delivered ({statuses}); a seat is not "
                    "cancelled without at least one.",
                    "timeline",
                )
            )
        else:
            first_delivered.append(delivered[0])
            waited = package.now - delivered[0]
            if waited + SEND_GRACE < wait:
                issues.append(
                    Issue(
                        "timeline",
                        "high",
                        f"{employee_id}'s first delivered email went out "
                        f"{timezone.localtime(delivered[0]):%Y-%m-%d %H:%M}; "
                        f"{_days(waited)} of the {settings.REPLY_WAIT_DAYS}-day waiting period "
                        "have passed.",
                        "timeline",
                    )
                )
    if not any(_sets_deadline(event) for event in package.events):
        issues.append(
            Issue(
                "missing_section", "high", "No reply deadline was ever set on the case.", "timeline"
            )
        )
    issues += _reaudit_issues(package, min(first_delivered, default=None))
    return issues


def _sets_deadline(event: CaseEvent) -> bool:
    entered_waiting = event.to_status == Case.Status.PENDING_REPLY and event.from_status not in (
        "",
        Case.Status.PENDING_REPLY,
    )
    return entered_waiting or bool(event.data.get("reply_deadline"))


def _reaudit_issues(package: Package, first_delivery: dt.datetime | None) -> list[Issue]:
    last = package.last_reaudit
    if last is None:
        return [
            Issue(
                "missing_section",
                "high",
                "The case was never re-audited after the outreach.",
                "timeline",
            )
        ]
    issues = []
    if first_delivery is not None and last.created_at < first_delivery:
        issues.append(
            Issue(
                "timeline",
                "high",
                "The last re-audit came before any email reached a flagged rider.",
                "timeline",
            )
        )
    at_deadline = last.data.get("trigger") == "timeout"
    at_limit = int(last.data.get("reaudit", 0)) > settings.MAX_REAUDITS
    if not (at_deadline or at_limit):
        issues.append(
            Issue(
                "timeline",
                "high",
                f"The last re-audit ({last.data.get('trigger', '?')}, "
                f"{last.data.get('reaudit', '?')} of {settings.MAX_REAUDITS} allowed) was "
                "neither the deadline re-audit nor past the re-audit limit.",
                "timeline",
            )
        )
    return issues


def _days(delta: dt.timedelta) -> str:
    return f"{delta.total_seconds() / 86400:.1f} days"


def check_membership(package: Package) -> list[Issue]:
    issues = []
    pending = {
        action.rider_id
        for action in package.actions
        if action.kind == PendingAction.Kind.CANCEL_MEMBERSHIP and action.status == "pending"
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


def check_replies(package: Package) -> list[Issue]:
    """Every reply since the last re-audit was classified and answered; none waits for a person."""
    since = package.last_reaudit.created_at if package.last_reaudit else None
    issues = []
    for message in package.messages:
        if message.direction != Message.Direction.INBOUND or message.kind != Message.Kind.REPLY:
            continue
        arrived = message.received_at or message.created_at
        problem = _waiting_for_a_person(package, message)
        if not problem and (since is None or arrived > since):
            problem = _reply_problem(package, message)
        if problem:
            who = message.employee.employee_id if message.employee else message.from_email
            issues.append(
                Issue(
                    "reply", "high", f"Reply {message.message_id} from {who} {problem}.", "replies"
                )
            )
    return issues


def _waiting_for_a_person(package: Package, message: Message) -> str:
    waiting = [a for a in package.actions if a.message_id == message.pk and a.status == "pending"]
    return f"waits for a person ({waiting[0].get_kind_display()})" if waiting else ""


def _reply_problem(package: Package, message: Message) -> str:
    if message.status == Message.Status.RECEIVED or not message.bucket:
        return "has not been classified"
    if message.bucket == Message.Bucket.QUESTION and not _answered(package, message):
        return "asked a question that was not answered"
    if message.bucket == Message.Bucket.ESCALATION and not any(
        a.message_id == message.pk and a.kind == PendingAction.Kind.REVIEW_EMAIL
        for a in package.actions
    ):
        return "escalated and no reply was drafted for review"
    if message.bucket in (Message.Bucket.ACKNOWLEDGMENT, Message.Bucket.UPDATE):
        return f"({message.bucket}) came after the last re-audit and was not acted on"
    return ""


def _answered(package: Package, message: Message) -> bool:
    key = f"{package.case.case_id}:answer:{message.message_id}"
    return any(
        m.direction == Message.Direction.OUTBOUND
        and (
            m.idempotency_key == key
            or (message.rfc_message_id and m.in_reply_to == message.rfc_message_id)
        )
        for m in package.messages
    )


CHECKS = {
    "summary": check_summary,
    "evidence": check_evidence,
    "consistency": check_consistency,
    "timeline": check_timeline,
    "membership": check_membership,
    "replies": check_replies,
}


def deterministic_issues(package: Package) -> dict[str, list[Issue]]:
    return {name: check(package) for name, check in CHECKS.items()}


# --- Assessment of the reasoning ---------------------------------------------------------


class Finding(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    description: str
    severity: Severity


class ReasoningAssessment(BaseModel):
    """What both backends answer about the reasoning (the model's structured output)."""

    model_config = ConfigDict(extra="forbid")
    justification: Strength
    reasoning: str
    contradictions: list[Finding]
    gaps: list[Finding]


def weaker(a: Strength, b: Strength) -> Strength:
    return a if _RANK[a] <= _RANK[b] else b


def assess_with_rules(package: Package) -> ReasoningAssessment:
    """Heuristics over evidence strength: margins, days mismatched, confidence, inputs."""
    strengths: list[Strength] = []
    contradictions: list[Finding] = []
    gaps: list[Finding] = []
    for employee_id, checks in package.flagged.items():
        for check in checks:
            verification = package.latest.get(check)
            strength = _judge(package, employee_id, check, verification, contradictions, gaps)
            strengths.append(_capped_by_confidence(verification, strength, employee_id, gaps))
    justification: Strength = min(strengths, key=_RANK.__getitem__, default="weak")
    reasoning = (
        f"Evidence for {len(strengths)} rider-check(s) on {package.case.case_id}: "
        f"{justification} overall; {len(contradictions)} contradiction(s), {len(gaps)} gap(s)."
    )
    return ReasoningAssessment(
        justification=justification,
        reasoning=reasoning,
        contradictions=contradictions,
        gaps=gaps,
    )


def _judge(
    package: Package,
    employee_id: str,
    check: str,
    verification: Verification | None,
    contradictions: list[Finding],
    gaps: list[Finding],
) -> Strength:
    items = _evidence_for(verification, employee_id)
    if check == "location":
        distance = next((i for i in items if i.get("type") == "distance_check"), None)
        if distance is not None:
            return _judge_distance(employee_id, distance, contradictions, gaps)
    if check == "shift":
        summary = next((i for i in items if i.get("type") == "shift_summary"), None)
        if summary is not None:
            return _judge_shift(employee_id, summary, contradictions, gaps)
    if (employee_id, check) in package.rulings:
        gaps.append(
            Finding(
                description=f"{employee_id}'s {check} failure rests on a reviewer's ruling; "
                "the rules could not measure it.",
                severity="medium",
            )
        )
        return "adequate"
    gaps.append(
        Finding(description=f"Nothing measures {employee_id}'s {check} failure.", severity="high")
    )
    return "weak"


def _judge_distance(
    employee_id: str, item: dict, contradictions: list[Finding], gaps: list[Finding]
) -> Strength:
    miles, limit = float(item.get("miles", 0)), float(item.get("threshold_miles", 0) or 0)
    if limit <= 0 or miles <= limit:
        contradictions.append(
            Finding(
                description=f"{employee_id} is flagged for location but lives {miles:g} commute "
                f"miles from the pickup, within the {limit:g}-mile limit.",
                severity="high",
            )
        )
        return "weak"
    ratio = miles / limit
    if ratio >= STRONG_DISTANCE_RATIO:
        return "strong"
    centroid = item.get("home_source") == "zip_centroid"
    gaps.append(
        Finding(
            description=f"{employee_id} lives {miles:g} miles from the pickup, close to the "
            f"{limit:g}-mile limit"
            + (f", measured from the centroid of ZIP {item.get('home_zip')}" if centroid else "")
            + ".",
            severity="medium" if centroid and ratio < CENTROID_WEAK_RATIO else "low",
        )
    )
    return "weak" if centroid and ratio < CENTROID_WEAK_RATIO else "adequate"


def _judge_shift(
    employee_id: str, item: dict, contradictions: list[Finding], gaps: list[Finding]
) -> Strength:
    compared, mismatched = int(item.get("days_compared", 0)), int(item.get("days_mismatched", 0))
    if item.get("van_schedule_source") == "majority_shift":
        gaps.append(
            Finding(
                description="The van's hours are inferred from its riders' majority shift, "
                "not a schedule of its own.",
                severity="low",
            )
        )
    if compared == 0 and item.get("off_van_days"):
        return "adequate"  # every day they work is a day the van does not run
    if compared == 0:
        gaps.append(
            Finding(
                description=f"No operating day could be compared for {employee_id}.",
                severity="medium",
            )
        )
        return "weak"
    if mismatched == 0:
        contradictions.append(
            Finding(
                description=f"{employee_id} is flagged for shift but matches the van on all "
                f"{compared} day(s) compared.",
                severity="high",
            )
        )
        return "weak"
    share = mismatched / compared
    if share >= STRONG_SHIFT_SHARE:
        return "strong"
    if share >= ADEQUATE_SHIFT_SHARE:
        return "adequate"
    gaps.append(
        Finding(
            description=f"{employee_id}'s shift misses the van on only {mismatched} of "
            f"{compared} day(s) compared.",
            severity="medium",
        )
    )
    return "weak"


def _capped_by_confidence(
    verification: Verification | None, strength: Strength, employee_id: str, gaps: list[Finding]
) -> Strength:
    if verification is None:
        return "weak"
    if verification.backend != "rules":
        gaps.append(
            Finding(
                description=f"A model ({verification.model or verification.backend}) read part "
                f"of the {verification.check_type} record behind {employee_id}'s flag.",
                severity="low",
            )
        )
    if verification.confidence <= 2:
        gaps.append(
            Finding(
                description=f"The {verification.check_type} verification's confidence is "
                f"{verification.confidence}/5.",
                severity="medium",
            )
        )
        return "weak"
    if verification.confidence == 3:
        return weaker(strength, "adequate")
    return strength


def _model_input(package: Package, found: dict[str, list[Issue]]) -> dict:
    case = package.case
    return {
        "case_id": case.case_id,
        "vanpool_id": case.vanpool.vanpool_id,
        "reason": case.reason,
        "failed_checks": case.failed_checks,
        "summary": case.meta.get("details", ""),
        "flagged_riders": package.flagged,
        "reviewer_rulings": {f"{e}:{c}": v for (e, c), v in package.rulings.items()},
        "verifications": {
            check: {
                "verdict": v.verdict,
                "confidence": v.confidence,
                "reasoning": v.reasoning,
                "evidence": v.evidence,
                "rider_flags": v.rider_flags,
                "audit_date": v.audit_date,
            }
            for check, v in package.latest.items()
        },
        # Notes and buckets only: reply bodies are untrusted and not needed here.
        "timeline": [
            {"at": e.created_at.isoformat(), "to": e.to_status, "note": e.note[:300]}
            for e in package.events
        ],
        "replies": [
            {"message_id": m.message_id, "bucket": m.bucket, "status": m.status}
            for m in package.messages
            if m.direction == Message.Direction.INBOUND
        ],
        "deterministic_findings": [i.as_dict() for issues in found.values() for i in issues],
    }


def assess_with_model(
    package: Package, found: dict[str, list[Issue]], client: "llm.OpenAIClient", parent: RunTrace
) -> ReasoningAssessment | None:
    """The model's assessment, or None (recorded on the trace) when it is unavailable."""
    prompt = llm.load_prompt(AGENT, PROMPT_VERSION)
    user = llm.data_block("evidence_package", _model_input(package, found))
    call = traced_structured(client, AGENT, prompt, user, ReasoningAssessment, parent)
    if call is None:
        logger.warning("supervisor model unavailable for %s", package.case.case_id)
        return None
    return call.parsed


def merge_assessments(
    rules: ReasoningAssessment, model: ReasoningAssessment | None
) -> ReasoningAssessment:
    """The weaker justification and every finding: a model never talks the rules up."""
    if model is None:
        return rules
    return ReasoningAssessment(
        justification=weaker(rules.justification, model.justification),
        reasoning=model.reasoning,
        contradictions=[*rules.contradictions, *model.contradictions],
        gaps=[*rules.gaps, *model.gaps],
    )


# --- Score ---------------------------------------------------------------------------------


def penalty(issue: Issue) -> int:
    return TYPE_PENALTY.get(issue.type) or SEVERITY_PENALTY[issue.severity]


def score_issues(issues: Iterable[Issue], justification: str) -> tuple[int, list[dict]]:
    """The score and its arithmetic, one line per deduction."""
    lines: list[dict[str, Any]] = [
        {"points": -penalty(issue), "for": f"{issue.type} ({issue.severity})"} for issue in issues
    ]
    if justification == "weak":
        lines.append({"points": -WEAK_JUSTIFICATION_PENALTY, "for": "weak justification"})
    total = 100 + sum(line["points"] for line in lines)
    return max(0, min(100, total)), lines


def is_passing(score: int, issues: Iterable[Issue]) -> bool:
    return score >= PASS_SCORE and not any(issue.severity == "high" for issue in issues)


# --- The review ----------------------------------------------------------------------------


def validate(case: Case, *, trigger_event: CaseEvent | None = None) -> CaseReview:
    """Validate ``case``'s evidence package and record a new CaseReview; the case is untouched.

    With ``trigger_event`` (a pre_cancel entry) the review is that entry's one
    review: if it exists already it is returned and nothing is written.
    """
    if trigger_event is not None:
        existing = CaseReview.objects.filter(trigger_event=trigger_event).first()
        if existing is not None:
            return existing
    backend = llm.get_backend()
    package = load_package(case)
    root = RunTrace(
        agent=AGENT,
        backend=settings.LLM_BACKEND,
        prompt_version="rules",
        input={
            "case_id": package.case.case_id,
            "status": package.case.status,
            "trigger_event": trigger_event.pk if trigger_event else None,
        },
    )
    with timed(root):
        found = deterministic_issues(package)
        model_answer = None
        if isinstance(backend, llm.OpenAIClient):
            model_answer = assess_with_model(package, found, backend, root)
        assessment = merge_assessments(assess_with_rules(package), model_answer)
    review = _record(package, found, assessment, model_answer, root, trigger_event)
    return review


def _assessment_issues(assessment: ReasoningAssessment) -> list[Issue]:
    return [
        Issue("contradiction", f.severity, f.description, "assessment")
        for f in assessment.contradictions
    ] + [Issue("gap", f.severity, f.description, "assessment") for f in assessment.gaps]


def _record(
    package: Package,
    found: dict[str, list[Issue]],
    assessment: ReasoningAssessment,
    model_answer: ReasoningAssessment | None,
    root: RunTrace,
    trigger_event: CaseEvent | None,
) -> CaseReview:
    issues = [issue for name in CHECK_NAMES for issue in found[name]]
    issues += _assessment_issues(assessment)
    score, arithmetic = score_issues(issues, assessment.justification)
    passed = is_passing(score, issues)
    model_trace = root.children[0] if root.children else None
    feedback = {
        "checks": {name: "fail" if found[name] else "pass" for name in CHECK_NAMES},
        "assessment": {
            "justification": assessment.justification,
            "reasoning": assessment.reasoning,
            "source": "rules+model" if model_answer else "rules",
        },
        "score_arithmetic": arithmetic,
        "flagged_riders": package.flagged,
        "model_error": model_trace.error if model_trace else "",
    }
    root.output = {"score": score, "passed": passed, "issues": len(issues)}
    try:
        with transaction.atomic():
            review = CaseReview.objects.create(
                case=package.case,
                trigger_event=trigger_event,
                score=score,
                passed=passed,
                issues=[issue.as_dict() for issue in issues],
                feedback=feedback,
                justification=assessment.justification,
                backend=settings.LLM_BACKEND,
                model=model_trace.model if model_trace else "",
                deterministic_only=model_answer is None,
            )
            save_trace_tree(root, vanpool_pk=package.case.vanpool_id, case=package.case)
    except IntegrityError:
        # Another worker reviewed this pre_cancel entry first: theirs stands.
        if trigger_event is None:
            raise
        return CaseReview.objects.get(trigger_event=trigger_event)
    logger.info(
        "case %s reviewed: %s/100, %s, %s issue(s)",
        package.case.case_id,
        score,
        "passed" if passed else "failed",
        len(issues),
    )
    return review


def latest_pre_cancel_event(case: Case) -> CaseEvent | None:
    """The event that moved ``case`` into pre_cancel most recently."""
    return (
        CaseEvent.objects.filter(case=case, to_status=Case.Status.PRE_CANCEL)
        .exclude(from_status=Case.Status.PRE_CANCEL)
        .order_by("-created_at", "-id")
        .first()
    )


def review_pre_cancel(event_pk: int) -> CaseReview | None:
    """The task's service: one review per pre_cancel entry; running it twice writes nothing new."""
    event = CaseEvent.objects.select_related("case").get(pk=event_pk)
    existing = CaseReview.objects.filter(trigger_event=event).first()
    if existing is not None:
        return existing
    if event.case.status != Case.Status.PRE_CANCEL:
        logger.info("no review: %s has left pre_cancel", event.case.case_id)
        return None
    return validate(event.case, trigger_event=event)


def review_for_decision(case: Case) -> CaseReview:
    """The review of ``case``'s current pre_cancel entry, made now if the task has not run yet."""
    event = latest_pre_cancel_event(case)
    if event is None:
        return latest_review(case) or validate(case)
    return validate(case, trigger_event=event)


# --- Queries for the dashboard -------------------------------------------------------------


def latest_review(case: Case | int) -> CaseReview | None:
    """The newest review of one case (one query), or None."""
    case_pk = case if isinstance(case, int) else case.pk
    return CaseReview.objects.filter(case_id=case_pk).order_by("-validated_at", "-id").first()


def latest_reviews_for(cases: Iterable[Case | int]) -> dict[int, CaseReview]:
    """case pk → its newest review, for a page of cases, in one query.

    Cases never reviewed are absent from the dict.
    """
    pks = [case if isinstance(case, int) else case.pk for case in cases]
    if not pks:
        return {}
    newest = (
        CaseReview.objects.filter(case_id=OuterRef("case_id"))
        .order_by("-validated_at", "-id")
        .values("pk")[:1]
    )
    reviews = CaseReview.objects.filter(case_id__in=pks, pk=Subquery(newest))
    return {review.case_id: review for review in reviews}


__all__ = [
    "CaseReview",
    "Issue",
    "ReasoningAssessment",
    "latest_pre_cancel_event",
    "latest_review",
    "latest_reviews_for",
    "review_for_decision",
    "review_pre_cancel",
    "score_issues",
    "validate",
]
