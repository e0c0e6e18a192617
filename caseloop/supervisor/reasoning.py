"""Assessment of the reasoning: how strongly the evidence justifies each flag.

The rules always judge (distance margins, days mismatched, confidence, the
inputs behind a verdict); a model, when configured, judges as well, and the two
are merged so that a model never talks the rules up.
"""

import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agents import llm
from agents.prompting import data_block, load_prompt
from agents.tracing import RunTrace, traced_structured
from caseloop.supervisor.package import AGENT, Issue, Package, Severity, evidence_for
from cases.models import Verification
from outreach.models import Message

logger = logging.getLogger(__name__)

PROMPT_VERSION = "v1"
Strength = Literal["weak", "adequate", "strong"]

# A location fail this far beyond the limit is unmistakable; one closer is
# adequate, and closer still on a ZIP-centroid home is weak.
STRONG_DISTANCE_RATIO = 1.5
CENTROID_WEAK_RATIO = 1.2
STRONG_SHIFT_SHARE = 0.6
ADEQUATE_SHIFT_SHARE = 0.3
_RANK: dict[str, int] = {"weak": 0, "adequate": 1, "strong": 2}


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
    items = evidence_for(verification, employee_id)
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
    employee_id: str, item: dict[str, Any], contradictions: list[Finding], gaps: list[Finding]
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
    employee_id: str, item: dict[str, Any], contradictions: list[Finding], gaps: list[Finding]
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


def _model_input(package: Package, found: dict[str, list[Issue]]) -> dict[str, Any]:
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
    prompt = load_prompt(AGENT, PROMPT_VERSION)
    user = data_block("evidence_package", _model_input(package, found))
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
