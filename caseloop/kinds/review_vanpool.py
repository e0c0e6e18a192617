"""Deciding review_vanpool: the coordinator acts on a van's §132(f) finding, or finds it wrong.

Approve: handled (the van reseated or replaced, the operator's report put
right); a case about the van alone closes ``resolved``. Reject: the finding is
wrong; such a case closes ``dismissed``, a false positive the program page
counts. A case that also holds riders' findings stays with them.
"""

from typing import Any, ClassVar

from django.contrib.auth.models import User

from caseloop.kinds.base import KindDecision, Reason, claim, record_result
from caseloop.loop.reaudit import has_pending_actions
from caseloop.loop.writing import flagged_riders
from cases.kinds import ReviewVanpool
from cases.lifecycle import transition
from cases.models import Case, PendingAction
from poolpatrol.queue import enqueue_outreach

Status = Case.Status


class ReviewVanpoolDecision(KindDecision[ReviewVanpool]):
    payload_class = ReviewVanpool
    reasons: ClassVar[tuple[Reason, ...]] = (
        Reason("van_reseated", "The van was reseated or replaced", "approve"),
        Reason("report_corrected", "The operator's report was put right", "approve"),
        Reason("report_wrong", "The operator's figures were wrong", "reject"),
        Reason("rule_exempt", "The van is exempt from the rule", "reject"),
    )

    def approve(
        self,
        action: PendingAction,
        ask: ReviewVanpool,
        *,
        by: User,
        note: str,
        edits: dict[str, Any],
    ) -> None:
        claim(action, PendingAction.Status.APPROVED, by, note)
        closed = _close_van_case(action, by, Case.Outcome.RESOLVED, "acted on", note)
        record_result(action, {"month": ask.month, "failed": ask.failed, "case_closed": closed})

    def reject(self, action: PendingAction, case: Case | None, *, by: User, note: str) -> None:
        closed = _close_van_case(action, by, Case.Outcome.DISMISSED, "found wrong", note)
        record_result(action, {"case_closed": closed})


def _close_van_case(action: PendingAction, by: User, outcome: str, what: str, note: str) -> bool:
    """Close the case when the van's finding was all it held; True when it closed.

    A case that has since gained a rider's finding goes on to that rider's
    letter instead, once nothing else waits on it.
    """
    if action.case_id is None:
        return False
    case = Case.objects.select_related("vanpool").get(pk=action.case_id)
    said = f"the van's §132(f) finding {what} by its coordinator"
    said = f"{said}: {note}" if note else said
    if case.status == Status.CLOSED:
        return False
    if flagged_riders(case):
        if case.status == Status.HITL_REVIEW and not has_pending_actions(case):
            transition(case, Status.OPEN, actor=by, note=said)
            enqueue_outreach(case.pk)
        return False
    transition(case, Status.CLOSED, actor=by, outcome=outcome, note=said)
    return True
