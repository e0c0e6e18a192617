"""Deciding review_email: send the draft (as edited) on the rider's thread, or drop it."""

from typing import Any

from django.contrib.auth.models import User
from django.utils.html import escape, linebreaks

from caseloop.kinds.base import (
    InvalidDecision,
    KindDecision,
    claim,
    record_result,
    resume_waiting,
    row,
)
from caseloop.loop.writing import thread_for
from cases.kinds import ReviewEmail
from cases.models import Case, PendingAction
from outreach.compose import RenderedEmail
from outreach.sending import answer_threading, queue_email
from outreach.subjects import SubjectError, clean_subject
from vanpools.models import Employee


class ReviewEmailDecision(KindDecision[ReviewEmail]):
    payload_class = ReviewEmail

    def approve(
        self, action: PendingAction, ask: ReviewEmail, *, by: User, note: str, edits: dict[str, Any]
    ) -> None:
        """Send the draft, or the reviewer's ``subject`` / ``text`` instead of it."""
        claim(action, PendingAction.Status.APPROVED, by, note)
        try:
            subject = clean_subject(str(edits.get("subject") or ask.subject))
        except SubjectError as exc:  # a line break would fail every send of the holding reply
            raise InvalidDecision(f"subject: {exc}") from None
        text = str(edits.get("text") or ask.text).strip()
        if not subject or not text:
            raise InvalidDecision("an email needs a subject and a body")
        edited = subject != ask.subject or text != ask.text.strip()
        # An edited body gets a plain HTML twin: the drafted HTML no longer says the same.
        html = linebreaks(escape(text)) if edited else ask.html
        case = row(Case.objects.all(), action.case_id)
        employee = Employee.objects.get(employee_id=ask.employee_id)
        threading = answer_threading(action.message) if action.message is not None else None
        email = queue_email(
            thread_for(case),
            employee,
            RenderedEmail(subject=subject, text=text, html=html),
            template=ask.template,
            key=f"{case.case_id}:reviewed:{action.pk}",
            threading=threading,
        )
        record_result(action, {"edited": edited, "email": email.message_id if email else None})
        resume_waiting(case, by, "reviewed reply approved and sent")
