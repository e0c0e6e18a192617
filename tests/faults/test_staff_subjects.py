"""Scenario 68: a subject with a line break is refused where staff write it, naming the field.

Such a subject was accepted and queued, then failed on every send attempt (a
header cannot hold a line break), so the holding reply to an escalated rider
never went out. One rule (``outreach.subjects``) on every surface: the review
card, the API's messages and decision edits, the admin, and the services under them.
"""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from caseloop.decisions import InvalidDecision, approve
from cases.models import Case, PendingAction
from outreach.models import EmailThread, Message
from outreach.staff_messages import add_staff_message
from outreach.subjects import SubjectError, clean_subject
from tests.factories import (
    CaseFactory,
    EmployeeFactory,
    MessageFactory,
    PendingActionFactory,
    RiderFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

BREAKS = ["\r\n", "\n", "\r", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029", "\x00"]
HTMX = {"HTTP_HX_REQUEST": "true"}


def broken(line_break: str) -> str:
    return f"About your seat{line_break}Bcc: everyone@example.com"


def review_card(subject: str = "About your vanpool seat") -> PendingAction:
    """An escalated rider's holding reply, drafted and waiting for a person."""
    employee = EmployeeFactory()
    rider = RiderFactory(employee=employee)
    case = CaseFactory(vanpool=rider.vanpool, status=Case.Status.HITL_REVIEW)
    inbound = MessageFactory(
        thread=EmailThread.objects.create(case=case, subject="Your seat"),
        direction="inbound",
        status="processed",
        employee=employee,
        text_body="I want a manager.",
    )
    return PendingActionFactory(
        kind=PendingAction.Kind.REVIEW_EMAIL,
        case=case,
        message=inbound,
        payload={
            "employee_id": employee.employee_id,
            "to": employee.email,
            "template": "holding_reply",
            "subject": subject,
            "text": "We passed your message to a coordinator.",
            "html": "<p>We passed your message to a coordinator.</p>",
        },
    )


def nothing_sent(card: PendingAction) -> bool:
    card.refresh_from_db()
    return card.status == "pending" and not Message.objects.filter(direction="outbound").exists()


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.parametrize("line_break", BREAKS, ids=repr)
def test_fault_68_the_rule_refuses_every_line_break_and_control_character(line_break):
    with pytest.raises(SubjectError, match="one line"):
        clean_subject(broken(line_break))


def test_fault_68_the_rule_keeps_a_one_line_subject_and_trims_it():
    assert clean_subject("  Re: your seat\tfor Monday ") == "Re: your seat\tfor Monday"


@pytest.mark.parametrize("line_break", ["\r\n", "\n", "\u2028"], ids=repr)
def test_fault_68_the_review_card_shows_the_error_on_the_subject(client, coordinator, line_break):
    card = review_card()
    client.force_login(coordinator)

    response = client.post(
        reverse("action-decide", args=[card.pk]),
        {"decision": "approve", "subject": broken(line_break), "text": "We will call."},
        **HTMX,
    )

    assert response.status_code == 422
    html = response.content.decode()
    subject_field = html.index(f'id="subject-{card.pk}"')
    error = html.index(
        f'<p class="field-error" id="subject-{card.pk}-error">the subject must be one line: '
        "no line breaks or control characters"
    )
    assert subject_field < error < html.index(f'id="text-{card.pk}"')  # under the subject
    assert nothing_sent(card)


def test_fault_68_approving_a_draft_whose_subject_breaks_is_refused_naming_it(coordinator):
    card = review_card(subject=broken("\n"))

    with pytest.raises(InvalidDecision, match=r"^subject: the subject must be one line"):
        approve(card, by=coordinator)

    assert nothing_sent(card)


def test_fault_68_the_api_refuses_a_decision_edit_with_a_line_break(coordinator):
    card = review_card()

    response = api_as(coordinator).post(
        f"/api/pending-actions/{card.pk}/approve",
        {"edits": {"subject": broken("\r\n"), "text": "We will call."}},
        format="json",
    )

    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert "one line" in str(fields["edits"]["subject"])
    assert nothing_sent(card)


def test_fault_68_the_api_refuses_a_staff_message_with_a_line_break(auditor):
    card = review_card()
    thread = card.case.thread

    response = api_as(auditor).post(
        f"/api/emails/threads/{thread.thread_id}/messages",
        {"employee_id": card.payload["employee_id"], "subject": broken("\n"), "text": "Hi"},
        format="json",
    )

    assert response.status_code == 400
    assert "one line" in str(response.json()["error"]["fields"]["subject"])
    assert not Message.objects.filter(direction="outbound").exists()


def test_fault_68_a_staff_message_under_a_thread_subject_with_a_break_is_refused(auditor):
    card = review_card()
    thread = card.case.thread
    EmailThread.objects.filter(pk=thread.pk).update(subject=broken("\r\n"))  # stored earlier
    thread.refresh_from_db()
    employee = card.message.employee

    with pytest.raises(SubjectError):
        add_staff_message(thread, by=auditor, employee=employee, text="Hi")
    response = api_as(auditor).post(
        f"/api/emails/threads/{thread.thread_id}/messages",
        {"employee_id": employee.employee_id, "text": "Hi"},
        format="json",
    )

    assert response.status_code == 400
    assert "one line" in str(response.json()["error"]["fields"]["subject"])
    assert not Message.objects.filter(direction="outbound").exists()


@pytest.fixture
def admin_client_of_superuser() -> Client:
    client = Client()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


def test_fault_68_the_admin_refuses_a_new_thread_whose_subject_breaks(admin_client_of_superuser):
    case = CaseFactory()

    response = admin_client_of_superuser.post(
        "/admin/outreach/emailthread/add/", {"case": case.pk, "subject": broken("\r\n")}
    )

    assert response.status_code == 200  # the form again, with the error
    assert "one line" in str(response.context["adminform"].form.errors["subject"])
    assert not EmailThread.objects.filter(case=case).exists()


def test_fault_68_the_admin_refuses_a_new_message_whose_subject_breaks(admin_client_of_superuser):
    thread = EmailThread.objects.create(case=CaseFactory(), subject="Your seat")

    response = admin_client_of_superuser.post(
        "/admin/outreach/message/add/",
        {
            "thread": thread.pk,
            "direction": "outbound",
            "status": "queued",
            "from_email": "vanpool-audit@example.com",
            "subject": broken("\n"),
            "text_body": "Hi",
        },
    )

    assert response.status_code == 200
    assert "one line" in str(response.context["adminform"].form.errors["subject"])
    assert not Message.objects.filter(thread=thread).exists()
