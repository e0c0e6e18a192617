"""One rider's outcome, and a vanpool's result built from them, for the per-rider checks.

Ridership and parking judge each rider on their own and say so in one sentence
each; the vanpool's verdict combines them the contract's way (any fail fails,
else any unknown is unknown) and its confidence follows the other checks: a
fail as sure as its clearest failing rider, a pass only as sure as its least
sure one.
"""

from dataclasses import dataclass, field

from agents.contracts import (
    CheckName,
    Evidence,
    NoDataEvidence,
    RiderFlag,
    SpecialistResult,
    Verdict,
    combine_verdicts,
)


@dataclass(frozen=True)
class RiderOutcome:
    employee_id: str
    verdict: Verdict
    confidence: int
    sentence: str  # the rider's flag reason, and their sentence in the reasoning
    evidence: list[Evidence] = field(default_factory=list)


def no_data(
    employee_id: str, missing: str, detail: str, sentence: str, confidence: int = 2
) -> RiderOutcome:
    """A rider the data does not let the rules judge: ``unknown``, shown as a gap."""
    evidence = NoDataEvidence(employee_id=employee_id, missing=missing, detail=detail)
    return RiderOutcome(employee_id, "unknown", confidence, sentence, [evidence])


def vanpool_result(
    check: CheckName, outcomes: list[RiderOutcome], opening: str
) -> SpecialistResult:
    flags = [
        RiderFlag(employee_id=outcome.employee_id, verdict=outcome.verdict, reason=outcome.sentence)
        for outcome in outcomes
    ]
    verdict = combine_verdicts([flag.verdict for flag in flags])
    deciding = [outcome.confidence for outcome in outcomes if outcome.verdict == verdict]
    confidence = (max(deciding) if verdict == "fail" else min(deciding)) if deciding else 5
    return SpecialistResult(
        check=check,
        verdict=verdict,
        confidence=confidence,
        reasoning=_reasoning(opening, outcomes),
        evidence=[item for outcome in outcomes for item in outcome.evidence],
        riders=flags,
    )


def _reasoning(opening: str, outcomes: list[RiderOutcome]) -> str:
    if not outcomes:
        return f"{opening} No active riders to check."
    problems = [outcome.sentence for outcome in outcomes if outcome.verdict != "pass"]
    passed = [outcome.employee_id for outcome in outcomes if outcome.verdict == "pass"]
    parts = [opening, *problems]
    if passed:
        parts.append(f"Pass: {', '.join(passed)}.")
    return " ".join(parts)
