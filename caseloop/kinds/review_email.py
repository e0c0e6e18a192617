"""Deciding review_email: send the draft (as edited) on the rider's thread, or drop it."""

from typing import Annotated, Any, ClassVar

from django.contrib.auth.models import User
from django.utils.html import escape, linebreaks
from pydantic import AfterValidator, Field, StringConstraints

from caseloop.kinds.base import (
    InvalidDecision,
    KindDecision,
    KindEdits,
    Reason,
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


def _one_line(subject: str) -> str:
    try:
        clean_subject(subject)
    except SubjectError as exc:
        raise ValueError(str(exc)) from None
    return subject


class ReviewEmailEdits(KindEdits):
    subject: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
        AfterValidator(_one_line),
        Field(description="The subject to send instead of the draft's."),
    ] = ""
    text: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=20000),
        Field(description="The body to send instead of the draft's."),
    ] = ""


class ReviewEmailDecision(KindDecision[ReviewEmail]):
    payload_class = ReviewEmail
    edits_class: ClassVar[type[KindEdits]] = ReviewEmailEdits

    reasons: ClassVar[tuple[Reason, ...]] = (
        Reason("as_drafted", "The draft answers the rider as written", "approve"),
        Reason("edited", "The draft needed edits; sent as edited", "approve"),
        Reason("wrong_answer", "The draft is wrong or could mislead", "reject"),
        Reason("answered_elsewhere", "Answered another way (phone, in person)", "reject"),
        Reason("no_answer_needed", "The rider needs no answer", "reject"),
    )

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
