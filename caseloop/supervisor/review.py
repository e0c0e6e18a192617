"""The review: run every check, score the issues, record one CaseReview per pre_cancel entry.

``validate`` records a review (the case is untouched); ``review_pre_cancel``
is the task's service; ``review_for_decision`` is what an approval reads;
``latest_review`` and ``latest_reviews_for`` answer the dashboard.
"""

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Subquery

from agents import llm
from agents.tracing import RunTrace, save_trace_tree, timed
from caseloop.supervisor.findings import (
    check_consistency,
    check_evidence,
    check_membership,
    check_summary,
)
from caseloop.supervisor.package import AGENT, Issue, Package, load_package
from caseloop.supervisor.reasoning import (
    ReasoningAssessment,
    assess_with_model,
    assess_with_rules,
    merge_assessments,
)
from caseloop.supervisor.replies import check_replies
from caseloop.supervisor.timeline import check_timeline
from cases.models import Case, CaseEvent, CaseReview

logger = logging.getLogger(__name__)
PASS_SCORE = 70
SEVERITY_PENALTY: dict[str, int] = {"high": 10, "medium": 5, "low": 2}
TYPE_PENALTY: dict[str, int] = {"missing_section": 15, "consistency": 20}
WEAK_JUSTIFICATION_PENALTY = 15

CHECK_NAMES = ("summary", "evidence", "consistency", "timeline", "membership", "replies")
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


def penalty(issue: Issue) -> int:
    return TYPE_PENALTY.get(issue.type) or SEVERITY_PENALTY[issue.severity]


def score_issues(issues: Iterable[Issue], justification: str) -> tuple[int, list[dict[str, Any]]]:
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
