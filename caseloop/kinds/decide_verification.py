"""Deciding decide_verification: a ruling per rider; a case still failing goes to its riders.

A ruling cannot be rejected: every rider the rules left undecided gets pass
or fail (``caseloop.audits.decide_verification`` applies them to the findings).
"""

from typing import Any, ClassVar

from django.contrib.auth.models import User

from caseloop.audits import decide_verification
from caseloop.kinds.base import InvalidDecision, KindDecision
from cases.kinds import DecideVerification
from cases.models import Case, PendingAction
from poolpatrol.queue import enqueue_outreach


class DecideVerificationDecision(KindDecision[DecideVerification]):
    payload_class = DecideVerification
    rejection_refused: ClassVar[str] = "rule pass or fail for each rider instead of rejecting"

    def approve(
        self,
        action: PendingAction,
        ask: DecideVerification,
        *,
        by: User,
        note: str,
        edits: dict[str, Any],
    ) -> None:
        """``edits["rulings"]``: {employee_id: pass|fail} for exactly the riders asked about."""
        rulings = edits.get("rulings")
        if not isinstance(rulings, dict):
            raise InvalidDecision("rule pass or fail for each rider: {employee_id: pass|fail}")
        case = decide_verification(action, rulings, by=by, note=note)
        if case.status == Case.Status.OPEN:
            enqueue_outreach(case.pk)
