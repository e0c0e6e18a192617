"""Run specialist checks: the rules always, a model only where rules can't decide.

The rules engine decides what code can decide (distances, shift overlaps).
With ``LLM_BACKEND=openai`` a model is asked only when the rules left a rider
``unknown`` (an unparseable schedule, an odd input), so a clear-cut audit
costs zero model calls. The model's answer is cross-checked against the rules:
where the rules had a verdict and the model disagrees, the rider becomes
``unknown`` for a human — never a silent override; where the rules had none,
the model's verdict is a proposal the person sees, never a pass or fail that
acts — with one exception the rules can check: a shift the model read, with
confidence, into a working week that the rules then compare with the van's
own schedule and find fits. Any model failure falls back to the rules result
and is recorded on the trace.
"""

import dataclasses
import datetime as dt
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings

from agents import llm
from agents.contracts import (
    Evidence,
    ModelJudgement,
    ModelShiftFlag,
    ModelShiftJudgement,
    RiderFlag,
    ShiftSummaryEvidence,
    SpecialistResult,
    combine_verdicts,
)
from agents.model_errors import ModelError
from agents.prompting import data_block, load_prompt
from agents.tracing import RunTrace, timed
from audit.facts import VanpoolFacts
from audit.location import check_location
from audit.shift.check import check_shift
from poolpatrol.privacy import withhold_home_points

# What each prompt version answers: shift.v2 also returns the week it read
# (``SHIFT_MODEL_PROMPT``), so the rules can check it.
SCHEMAS: dict[str, type[ModelJudgement] | type[ModelShiftJudgement]] = {
    "location.v1": ModelJudgement,
    "shift.v1": ModelJudgement,
    "shift.v2": ModelShiftJudgement,
}


def prompt_version(check: str) -> str:
    return settings.SHIFT_MODEL_PROMPT if check == "shift" else "v1"


# A model's reading of what the rules could not parse is an interpretation,
# not a measurement: it never carries more confidence than this.
MODEL_CONFIDENCE_CAP = 3
# A model's reading of HR's text passes a rider without a person only at this
# confidence (of 5) and only when the rules, comparing the week it read with
# the van's own schedule, find that it fits.
VERIFIED_PASS_CONFIDENCE = 4


def rules_result(check: str, facts: VanpoolFacts, audit_date: dt.date) -> SpecialistResult:
    if check == "location":
        return check_location(facts)
    if check == "shift":
        return check_shift(facts, audit_date)
    raise ValueError(f"unknown check {check!r}")


def run_checks(
    checks: Sequence[str], facts: VanpoolFacts, audit_date: dt.date, parent: RunTrace
) -> dict[str, SpecialistResult]:
    """Run each check; concurrently when a model backend may do network I/O."""
    backend = llm.get_backend()
    if backend == "rules" or len(checks) == 1:
        pairs = [_run_check(check, facts, audit_date, backend) for check in checks]
    else:
        with ThreadPoolExecutor(max_workers=len(checks)) as pool:
            pairs = list(pool.map(lambda c: _run_check(c, facts, audit_date, backend), checks))
    # Children in check order, so the trace tree reads the same every time.
    parent.children.extend(trace for _, trace in pairs)
    return {check: result for check, (result, _) in zip(checks, pairs, strict=True)}


def run_check(
    check: str, facts: VanpoolFacts, audit_date: dt.date, parent: RunTrace
) -> SpecialistResult:
    return run_checks([check], facts, audit_date, parent)[check]


def _run_check(
    check: str, facts: VanpoolFacts, audit_date: dt.date, backend: object
) -> tuple[SpecialistResult, RunTrace]:
    trace = RunTrace(
        agent=check,
        backend="rules",
        prompt_version="rules",
        # The facts are on the parent (case manager) run: one copy per audit.
        input={"facts": "as the parent run's input", "audit_date": audit_date.isoformat()},
    )
    with timed(trace):
        result = rules_result(check, facts, audit_date)
    trace.output = result.model_dump(mode="json")
    if isinstance(backend, llm.OpenAIClient) and _needs_language(result):
        result = _ask_model(check, facts, audit_date, result, backend, trace)
    return result, trace


def _needs_language(result: SpecialistResult) -> bool:
    return any(flag.verdict == "unknown" for flag in result.riders)


def _ask_model(
    check: str,
    facts: VanpoolFacts,
    audit_date: dt.date,
    rules: SpecialistResult,
    client: "llm.OpenAIClient",
    rules_trace: RunTrace,
) -> SpecialistResult:
    prompt = load_prompt(check, prompt_version(check))
    user = data_block("facts", facts) + "\n" + data_block("rules_result", rules)
    trace = RunTrace(
        agent=check,
        backend="openai",
        # As sent, but a rider's home point as its source (poolpatrol/privacy.py).
        input={"system_prompt": prompt.version, "user": withhold_home_points(user)},
        model_calls=1,
    )
    rules_trace.children.append(trace)
    try:
        schema = SCHEMAS[prompt.version]
        call = client.structured(check, prompt.version, prompt.text, user, schema)
    except ModelError as error:
        _fill(trace, error.trace_fields())
        trace.output = {"fallback": "rules"}
        return rules
    _fill(trace, call.trace_fields())
    verified = verified_passes(facts, audit_date, rules, call.parsed)
    merged = cross_check(rules, call.parsed, verified)
    trace.output = {"model": call.parsed.model_dump(mode="json"), "merged": merged.verdict}
    return merged


def _fill(trace: RunTrace, fields: dict) -> None:
    for name, value in fields.items():
        setattr(trace, name, value)


def verified_passes(
    facts: VanpoolFacts,
    audit_date: dt.date,
    rules: SpecialistResult,
    model: ModelJudgement | ModelShiftJudgement,
) -> dict[str, SpecialistResult]:
    """Riders the rules left unknown whom the week the model read lets the rules pass.

    Only a confident model (``VERIFIED_PASS_CONFIDENCE``) saying pass, with a
    week it read, on a van with its own schedule (never one the riders' majority
    stands in for: the model's reading would then help set the bar it is
    measured against). The rules run again with that week in place of HR's
    text; the rider passes only if they pass it. Keyed by employee ID: the
    trial's result, whose flag and evidence for that rider replace the unknown.
    """
    if not isinstance(model, ModelShiftJudgement) or model.confidence < VERIFIED_PASS_CONFIDENCE:
        return {}
    if not facts.schedule:
        return {}
    unknown = {flag.employee_id for flag in rules.riders if flag.verdict == "unknown"}
    found = {}
    for flag in model.riders:
        if flag.employee_id in unknown and flag.verdict == "pass" and flag.schedule:
            trial = _trial_with_read_week(facts, audit_date, flag)
            if trial is not None:
                found[flag.employee_id] = trial
    return found


def _trial_with_read_week(
    facts: VanpoolFacts, audit_date: dt.date, flag: ModelShiftFlag
) -> SpecialistResult | None:
    rider = next((r for r in facts.riders if r.employee_id == flag.employee_id), None)
    if rider is None or rider.shift is None:
        return None
    week = [day.model_dump() for day in flag.schedule]
    read = dataclasses.replace(rider.shift, schedule=week, rotation=None)
    riders = tuple(dataclasses.replace(r, shift=read) if r is rider else r for r in facts.riders)
    trial = check_shift(dataclasses.replace(facts, riders=riders), audit_date)
    verdicts = trial.rider_verdicts()
    return trial if verdicts.get(flag.employee_id) == "pass" else None


def cross_check(
    rules: SpecialistResult,
    model: ModelJudgement | ModelShiftJudgement,
    verified: dict[str, SpecialistResult] | None = None,
) -> SpecialistResult:
    """Merge a model's judgement into the rules result, rider by rider.

    Rules verdicts stand when the model agrees; a disagreement becomes
    ``unknown`` (a human decides). Riders the rules could not decide stay
    ``unknown``, with the model's reading as a proposal for the person —
    unless ``verified`` holds the rules' own pass of the week the model read.
    """
    verified = verified or {}
    said = {flag.employee_id: flag for flag in model.riders}
    riders = [
        _verified_flag(flag, verified[flag.employee_id], model.confidence)
        if flag.employee_id in verified
        else _merge_flag(flag, said.get(flag.employee_id))
        for flag in rules.riders
    ]
    disagreements = [f for f in riders if f.reason.startswith("rules and model disagree")]
    confidence = (
        min(rules.confidence, MODEL_CONFIDENCE_CAP)
        if rules.verdict == "unknown"
        else rules.confidence
    )
    if disagreements:
        confidence = min(confidence, 2)
    return rules.model_copy(
        update={
            "riders": riders,
            "verdict": combine_verdicts([flag.verdict for flag in riders]),
            "confidence": max(1, confidence),
            "reasoning": f"{rules.reasoning} Model reading: {model.reasoning}",
            "evidence": _evidence_with_verified(rules.evidence, verified),
        }
    )


def _verified_flag(rules_flag: RiderFlag, trial: SpecialistResult, confidence: int) -> RiderFlag:
    checked = next(f for f in trial.riders if f.employee_id == rules_flag.employee_id)
    return RiderFlag(
        employee_id=rules_flag.employee_id,
        verdict="pass",
        reason=(
            f"the model read HR's text as a week (confidence {confidence}/5) and the rules "
            f"checked that week against the van's: {checked.reason}"
        ),
    )


def _evidence_with_verified(
    evidence: list[Evidence], verified: dict[str, SpecialistResult]
) -> list[Evidence]:
    """The rules' evidence, a verified rider's unknown swapped for the trial's own."""
    kept: list[Evidence] = [e for e in evidence if e.employee_id not in verified]
    for employee_id, trial in verified.items():
        for item in trial.evidence:
            if item.employee_id != employee_id:
                continue
            if isinstance(item, ShiftSummaryEvidence):
                item = item.model_copy(update={"note": _READ_BY_MODEL})
            kept.append(item)
    return kept


_READ_BY_MODEL = "the rider's week as a model read it from HR's text, checked by the rules"


def _merge_flag(rules_flag: RiderFlag, model_flag: RiderFlag | ModelShiftFlag | None) -> RiderFlag:
    if model_flag is None or model_flag.verdict == rules_flag.verdict:
        return rules_flag
    if rules_flag.verdict == "unknown":
        # A proposal for the person, not a verdict: the rules cannot check the
        # model's reading, and a zero-shot model turned an unplaceable military
        # ZIP into a failure email. Nothing automatic follows from it.
        return RiderFlag(
            employee_id=rules_flag.employee_id,
            verdict="unknown",
            reason=(
                f"the model proposes {model_flag.verdict} ({model_flag.reason}); a person "
                f"confirms. Rules: {rules_flag.reason}"
            ),
        )
    return RiderFlag(
        employee_id=rules_flag.employee_id,
        verdict="unknown",
        reason=(
            f"rules and model disagree (rules: {rules_flag.verdict}, model: "
            f"{model_flag.verdict}); a person decides. Rules: {rules_flag.reason}"
        ),
    )
