"""Knowledge capture: what a closed case taught, and the questions the dashboard asks of it.

docs/design.md step 10. When a case closes (resolved, cancelled, dismissed)
``capture_lesson`` records one CaseLesson: key signals (code reads them from
the record), the behaviour pattern (``reason:behaviour``, e.g.
``location_mismatch:no_reply``), the outcome and one sentence. The rules write
the sentence; with ``LLM_BACKEND=openai`` a model may phrase it instead, and
any model failure keeps the rules' sentence. Signals and pattern are always
the rules': they are what later cases are compared on.

Queries for the dashboard (each a fixed number of queries):
- ``similar_past_cases(case)`` / ``similar_past_cases_for(cases)``: closed
  cases with the same reason at the same site, counted by outcome, newest first.
- ``false_positive_counts_by_pattern()``: proposed cancellations a reviewer
  rejected, counted per pattern.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import reduce
from operator import or_

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber
from pydantic import BaseModel, ConfigDict

from agents import llm
from agents.prompting import data_block, load_prompt
from agents.tracing import RunTrace, save_trace_tree, timed, traced_structured
from cases.kinds import CancelMembership
from cases.models import Case, CaseEvent, CaseLesson, CaseReview, PendingAction, Verification
from outreach.models import Message

logger = logging.getLogger(__name__)

AGENT = "knowledge"
PROMPT_VERSION = "v1"
Outcome = Case.Outcome

BEHAVIOUR_PHRASES = {
    "cleared_by_reviewer": "a reviewer ruled the flagged rider(s) fine",
    "updated_record": "the rider updated their record after the email",
    "fixed_after_reply": "the rider replied and the record was fixed",
    "silent_fix": "the record was fixed without a reply and caught at the deadline",
    "fixed_before_deadline": "a routine audit found the record fixed",
    "unreachable": "the email bounced and the rider never replied",
    "escalated": "the rider escalated",
    "replied_not_fixed": "the rider replied but the record still failed",
    "no_reply": "the rider never replied",
}


# --- Capture -------------------------------------------------------------------------------


@dataclass
class CaseRecord:
    """What knowledge capture reads about one closed case (a fixed number of queries)."""

    case: Case
    events: list[CaseEvent]
    messages: list[Message]
    actions: list[PendingAction]
    verifications: dict[str, Verification]
    review: CaseReview | None


def load_record(case: Case) -> CaseRecord:
    # The newest verification that failed, per check: what the case was about,
    # even when the last one (the fix) passed.
    latest: dict[str, Verification] = {}
    for verification in case.verifications.order_by("-created_at", "-id"):
        if verification.verdict == Verification.Verdict.FAIL:
            latest.setdefault(verification.check_type, verification)
    return CaseRecord(
        case=case,
        events=list(case.events.select_related("actor_user").order_by("created_at", "id")),
        messages=list(Message.objects.filter(thread__case=case).order_by("created_at", "id")),
        actions=list(PendingAction.objects.filter(case=case).order_by("created_at", "id")),
        verifications=latest,
        review=CaseReview.objects.filter(case=case).order_by("-validated_at", "-id").first(),
    )


def flagged_riders(case: Case) -> list[str]:
    flags = case.meta.get("rider_flags", {})
    return sorted(emp for emp, checks in flags.items() if "fail" in checks.values())


def key_signals(record: CaseRecord) -> dict:
    case = record.case
    flagged = flagged_riders(case)
    inbound = [
        m
        for m in record.messages
        if m.direction == Message.Direction.INBOUND and m.kind == Message.Kind.REPLY
    ]
    cancels = [a for a in record.actions if a.is_a(CancelMembership)]
    closing = next((e for e in reversed(record.events) if e.to_status == Case.Status.CLOSED), None)
    signals: dict = {
        "reason": case.reason,
        "failed_checks": case.failed_checks,
        "flagged_riders": flagged,
        "reaudits": case.reaudit_count,
        "reaudit_triggers": [e.data["trigger"] for e in record.events if "trigger" in e.data],
        "emails_sent": sum(
            m.direction == Message.Direction.OUTBOUND and m.status == Message.Status.SENT
            for m in record.messages
        ),
        "bounced": any("bounced" in m.flags for m in record.messages)
        or any(flag.startswith("bounced:") for flag in case.meta.get("flags", [])),
        "replies": len(inbound),
        "buckets": sorted({m.bucket for m in inbound if m.bucket}),
        "human_decisions": sum(a.decided_by_id is not None for a in record.actions),
        "cancellations_approved": sum(a.status == "approved" for a in cancels),
        "cancellations_rejected": sum(a.status == "rejected" for a in cancels),
        "override": any(e.data.get("override") for e in record.events),
        "days_open": (case.closed_at - case.created_at).days if case.closed_at else None,
        "closed_by": closing.actor if closing else "",
        "closing_note": closing.note[:200] if closing else "",
    }
    signals |= _evidence_signals(record, flagged)
    if record.review is not None:
        signals["supervisor"] = {
            "score": record.review.score,
            "passed": record.review.passed,
            "justification": record.review.justification,
        }
    return signals


def _evidence_signals(record: CaseRecord, flagged: list[str]) -> dict:
    signals: dict = {}
    distances = _flagged_items(record, "location", "distance_check", flagged)
    if distances:
        far = max(distances, key=lambda item: item.get("miles", 0))
        signals["max_miles"] = far.get("miles")
        signals["threshold_miles"] = far.get("threshold_miles")
        signals["home_source"] = far.get("home_source")
    summaries = _flagged_items(record, "shift", "shift_summary", flagged)
    if summaries:
        worst = max(summaries, key=lambda item: item.get("days_mismatched", 0))
        signals["days_mismatched"] = worst.get("days_mismatched")
        signals["days_compared"] = worst.get("days_compared")
    return signals


def _flagged_items(record: CaseRecord, check: str, item_type: str, flagged: list[str]) -> list:
    """The evidence items of one type about the flagged riders, from a check's verification."""
    verification = record.verifications.get(check)
    return [
        item
        for item in (verification.evidence if verification else [])
        if item.get("type") == item_type and item.get("employee_id") in flagged
    ]


def behaviour_of(case: Case, signals: dict) -> str:
    """How the case played out, in one word the next similar case can be compared on."""
    buckets = set(signals["buckets"])
    if case.outcome == Outcome.RESOLVED:
        if signals["closed_by"] and not signals["closed_by"].startswith("agent:"):
            return "cleared_by_reviewer"
        if "update" in buckets:
            return "updated_record"
        if signals["replies"]:
            return "fixed_after_reply"
        if "timeout" in signals["reaudit_triggers"]:
            return "silent_fix"
        return "fixed_before_deadline"
    if signals["bounced"] and not signals["replies"]:
        return "unreachable"
    if "escalation" in buckets:
        return "escalated"
    if signals["replies"]:
        return "replied_not_fixed"
    return "no_reply"


def rules_sentence(case: Case, site: str, signals: dict, behaviour: str) -> str:
    reason = Case.Reason(case.reason).label if case.reason in Case.Reason.values else "unknown"
    parts = [f"{case.case_id} ({reason} at {site})"]
    evidence = _evidence_phrase(signals)
    head = f"{parts[0]}: {evidence}" if evidence else parts[0]
    return f"{head}; {BEHAVIOUR_PHRASES[behaviour]}; {_outcome_phrase(case, signals)}."


def _evidence_phrase(signals: dict) -> str:
    who = ", ".join(signals["flagged_riders"]) or "no rider"
    phrases = []
    if signals.get("max_miles") is not None:
        phrases.append(
            f"{who} lived {signals['max_miles']:g} miles from the pickup "
            f"(limit {signals.get('threshold_miles') or 0:g})"
        )
    if signals.get("days_compared"):
        phrases.append(
            f"{who} missed the van on {signals['days_mismatched']} of "
            f"{signals['days_compared']} days"
        )
    return " and ".join(phrases) or (f"{who} flagged" if signals["flagged_riders"] else "")


def _outcome_phrase(case: Case, signals: dict) -> str:
    reaudits = f"{signals['reaudits']} re-audit(s)"
    if case.outcome == Outcome.RESOLVED:
        return f"closed resolved after {reaudits}"
    if case.outcome == Outcome.CANCELLED:
        override = " over a failed supervisor review" if signals["override"] else ""
        return (
            f"{signals['cancellations_approved']} seat(s) cancelled{override} after "
            f"{signals['days_open']} day(s) and {reaudits}"
        )
    return "a reviewer rejected the cancellation, a false positive"


class LessonSentence(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sentence: str


def _model_sentence(
    client: "llm.OpenAIClient", signals: dict, draft: str, parent: RunTrace
) -> tuple[str, str] | None:
    """(sentence, model) from the model, or None when it fails (the trace keeps the error)."""
    prompt = load_prompt("lesson", PROMPT_VERSION)
    user = data_block("signals", signals) + "\n" + data_block("draft", {"text": draft})
    call = traced_structured(client, AGENT, prompt, user, LessonSentence, parent)
    if call is None:
        return None
    sentence = " ".join(call.parsed.sentence.split())[:400]
    return (sentence, call.model) if sentence else None


def capture_lesson(case_pk: int) -> CaseLesson | None:
    """Record the lesson of a closed case, once; a second call returns the first lesson."""
    case = Case.objects.select_related("vanpool").get(pk=case_pk)
    if case.status != Case.Status.CLOSED:
        return None
    existing = CaseLesson.objects.filter(case=case).first()
    if existing is not None:
        return existing
    backend = llm.get_backend()
    root = RunTrace(
        agent=AGENT, backend="rules", prompt_version="rules", input={"case_id": case.case_id}
    )
    with timed(root):
        signals = key_signals(load_record(case))
        behaviour = behaviour_of(case, signals)
        site = case.vanpool.work_site
        sentence = rules_sentence(case, site, signals, behaviour)
        model = ""
        if isinstance(backend, llm.OpenAIClient):
            answer = _model_sentence(backend, signals, sentence, root)
            if answer is not None:
                sentence, model = answer
    pattern = f"{case.reason or 'unknown'}:{behaviour}"
    root.output = {"pattern": pattern, "sentence": sentence}
    try:
        with transaction.atomic():
            lesson = CaseLesson.objects.create(
                case=case,
                reason=case.reason or Case.Reason.UNKNOWN,
                site=site,
                outcome=case.outcome,
                pattern=pattern,
                key_signals=signals,
                sentence=sentence,
                backend="openai" if model else "rules",
                model=model,
            )
            save_trace_tree(root, vanpool_pk=case.vanpool_id, case=case)
    except IntegrityError:
        return CaseLesson.objects.get(case=case)  # another worker captured it first
    logger.info("lesson of %s: %s (%s)", case.case_id, pattern, case.outcome)
    return lesson


# --- Queries for the dashboard -------------------------------------------------------------


@dataclass
class SimilarCases:
    """Closed cases with the same reason at the same site, for one case."""

    reason: str
    site: str
    total: int = 0
    by_outcome: dict[str, int] = field(default_factory=dict)  # resolved/cancelled/dismissed → n
    recent: list[CaseLesson] = field(default_factory=list)  # newest first, case loaded


def _outcome_counts() -> dict[str, int]:
    return {outcome.value: 0 for outcome in Outcome if outcome.value}


def similar_past_cases(case: Case, *, limit: int = 5) -> SimilarCases:
    """Past cases like ``case`` (same reason and site), their outcomes and counts.

    Two queries when the case's vanpool is loaded (``select_related("vanpool")``).
    """
    reason = case.reason or Case.Reason.UNKNOWN
    site = case.vanpool.work_site
    lessons = CaseLesson.objects.filter(reason=reason, site=site).exclude(case_id=case.pk)
    counts = _outcome_counts()
    for row in lessons.values("outcome").annotate(n=Count("id")).order_by():
        counts[row["outcome"]] = row["n"]
    recent = list(lessons.select_related("case").order_by("-created_at", "-id")[:limit])
    return SimilarCases(
        reason=reason, site=site, total=sum(counts.values()), by_outcome=counts, recent=recent
    )


def similar_past_cases_for(cases: Iterable[Case], *, limit: int = 3) -> dict[int, SimilarCases]:
    """case pk → SimilarCases for a page of cases (the review queue): two queries.

    Pass cases with their vanpool loaded (``select_related("vanpool")``).
    """
    cases = list(cases)
    keys = {case.pk: (case.reason or Case.Reason.UNKNOWN, case.vanpool.work_site) for case in cases}
    if not keys:
        return {}
    groups = set(keys.values())
    same = reduce(or_, (Q(reason=reason, site=site) for reason, site in groups))
    lessons = CaseLesson.objects.filter(same).exclude(case_id__in=list(keys))
    counts: dict[tuple[str, str], dict[str, int]] = {group: _outcome_counts() for group in groups}
    for row in lessons.values("reason", "site", "outcome").annotate(n=Count("id")).order_by():
        counts[(row["reason"], row["site"])][row["outcome"]] = row["n"]
    ranked = lessons.select_related("case").annotate(
        rank=Window(
            RowNumber(),
            partition_by=[F("reason"), F("site")],
            order_by=[F("created_at").desc(), F("id").desc()],
        )
    )
    recent: dict[tuple[str, str], list[CaseLesson]] = {group: [] for group in groups}
    for lesson in ranked.filter(rank__lte=limit).order_by("-created_at", "-id"):
        recent[(lesson.reason, lesson.site)].append(lesson)
    return {
        pk: SimilarCases(
            reason=group[0],
            site=group[1],
            total=sum(counts[group].values()),
            by_outcome=dict(counts[group]),
            recent=list(recent[group]),
        )
        for pk, group in keys.items()
    }


@dataclass(frozen=True)
class PatternCount:
    pattern: str
    proposed: int  # closed cases where a cancellation was decided (approved or rejected)
    false_positives: int  # … where a reviewer rejected it

    @property
    def rate(self) -> float:
        return self.false_positives / self.proposed if self.proposed else 0.0


def false_positive_counts_by_pattern(*, site: str | None = None) -> list[PatternCount]:
    """Reviewers' rejections of proposed cancellations, per pattern (one query).

    Most false positives first; patterns whose cancellations were all
    approved are listed with 0 so the rate has its denominator.
    """
    lessons = CaseLesson.objects.filter(
        case__pending_actions__kind=CancelMembership.kind,
        case__pending_actions__status__in=[
            PendingAction.Status.APPROVED,
            PendingAction.Status.REJECTED,
        ],
    )
    if site is not None:
        lessons = lessons.filter(site=site)
    rows = (
        lessons.values("pattern")
        .annotate(
            proposed=Count("case", distinct=True),
            false_positives=Count(
                "case",
                distinct=True,
                filter=Q(case__pending_actions__status=PendingAction.Status.REJECTED),
            ),
        )
        .order_by("-false_positives", "pattern")
    )
    return [PatternCount(row["pattern"], row["proposed"], row["false_positives"]) for row in rows]


__all__ = [
    "PatternCount",
    "SimilarCases",
    "capture_lesson",
    "false_positive_counts_by_pattern",
    "similar_past_cases",
    "similar_past_cases_for",
]
