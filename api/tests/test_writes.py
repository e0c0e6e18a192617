"""Writing through the API: the same service functions as the admin and dashboard."""

import datetime as dt

import pytest
from django.contrib.auth.models import Permission
from django.core import mail
from rest_framework.test import APIClient

from cases.models import Case, CaseEvent, PendingAction, Verification
from outreach.models import Message
from tests.factories import (
    CaseFactory,
    EmailThreadFactory,
    EmployeeFactory,
    MessageFactory,
    PendingActionFactory,
    RiderFactory,
    UserFactory,
    VanpoolFactory,
)
from vanpools.models import Rider

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(auditor):
    client = APIClient()
    client.force_login(auditor)
    return client


@pytest.fixture
def coordinator_api(coordinator):
    client = APIClient()
    client.force_login(coordinator)
    return client


def error(response, status):
    assert response.status_code == status, response.content[:300]
    return response.json()["error"]


# --- Audits ----------------------------------------------------------------------------------


def test_an_audit_is_queued_on_commit_and_answers_202_with_a_link(
    api, django_capture_on_commit_callbacks
):
    vanpool = VanpoolFactory(vanpool_id="VP-101")
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip="90026"))  # Los Angeles
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = api.post("/api/vanpools/VP-101/audit")
    assert response.status_code == 202
    assert response.json()["status"] == "queued"
    assert response["Location"] == "http://testserver/api/cases?vanpool=VP-101"
    assert response.json()["follow"] == response["Location"]
    assert callbacks  # the django-q2 task ran (sync in tests) once the request committed
    assert Verification.objects.filter(vanpool=vanpool, check_type="location").exists()
    case = Case.objects.get(vanpool=vanpool)
    assert case.meta["reason"] == "location_mismatch"
    assert api.get(response["Location"]).json()["results"][0]["case_id"] == case.case_id


def test_an_audit_of_an_unknown_vanpool_is_a_404(api):
    assert error(api.post("/api/vanpools/VP-404/audit"), 404)["code"] == "not_found"


# --- Opening a case by hand ------------------------------------------------------------------


def test_it_opens_a_case_through_the_lifecycle(api, auditor):
    VanpoolFactory(vanpool_id="VP-101")
    response = api.post(
        "/api/cases",
        {
            "vanpool": "VP-101",
            "reason": "location_mismatch",
            "failed_checks": ["location", "location"],
            "details": "Reported by HR.",
        },
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert response["Location"] == f"http://testserver/api/cases/{body['case_id']}"
    assert (body["status"], body["failed_checks"], body["opened_by"]) == (
        "open",
        ["location"],
        "auditor",
    )
    (event,) = CaseEvent.objects.filter(case__case_id=body["case_id"])
    assert (event.actor_user, event.to_status, event.note) == (auditor, "open", "Reported by HR.")


def test_a_second_open_case_for_a_vanpool_is_a_409(api):
    existing = CaseFactory(vanpool=VanpoolFactory(vanpool_id="VP-101"))
    response = api.post("/api/cases", {"vanpool": "VP-101", "reason": "unknown"}, format="json")
    body = error(response, 409)
    assert body == {
        "code": "conflict",
        "message": f"VP-101 already has an open case, {existing.case_id}.",
    }
    assert Case.objects.count() == 1


def test_a_closed_case_does_not_stop_a_new_one(api):
    CaseFactory(
        vanpool=VanpoolFactory(vanpool_id="VP-101"),
        status="closed",
        outcome="resolved",
        closed_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    )
    response = api.post("/api/cases", {"vanpool": "VP-101", "reason": "unknown"}, format="json")
    assert response.status_code == 201


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"reason": "unknown"}, "vanpool"),
        ({"vanpool": "VP-404", "reason": "unknown"}, "vanpool"),
        ({"vanpool": "VP-101", "reason": "vibes"}, "reason"),
        ({"vanpool": "VP-101", "reason": "unknown", "failed_checks": ["mood"]}, "failed_checks"),
        ({"vanpool": ["VP-101"], "reason": "unknown"}, "vanpool"),
        ({"vanpool": "VP-101\x00", "reason": "unknown"}, "vanpool"),
    ],
)
def test_a_bad_new_case_is_a_400_naming_the_field(api, body, field):
    VanpoolFactory(vanpool_id="VP-101")
    response = api.post("/api/cases", body, format="json")
    assert field in error(response, 400)["fields"]
    assert not Case.objects.exists()


def test_malformed_json_and_other_media_types_are_refused(api):
    bad_json = api.post("/api/cases", "{not json", content_type="application/json")
    assert error(bad_json, 400)["code"] == "parse_error"
    form = api.post("/api/cases", {"vanpool": "VP-1"}, format="multipart")
    assert error(form, 415)["code"] == "unsupported_media_type"
    not_an_object = api.post("/api/cases", [1, 2], format="json")
    assert "non_field_errors" in error(not_an_object, 400)["fields"]


# --- Changing a case -------------------------------------------------------------------------


def test_a_status_change_goes_through_the_lifecycle(api, auditor):
    case = CaseFactory()
    response = api.patch(
        f"/api/cases/{case.case_id}", {"status": "hitl_review", "note": "odd"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["status"] == "hitl_review"
    event = CaseEvent.objects.get(case=case)
    assert (event.actor_user, event.from_status, event.to_status, event.note) == (
        auditor,
        "open",
        "hitl_review",
        "odd",
    )


def test_a_case_can_be_closed_as_dismissed(api):
    case = CaseFactory()
    response = api.patch(
        f"/api/cases/{case.case_id}", {"status": "closed", "outcome": "dismissed"}, format="json"
    )
    assert (response.json()["status"], response.json()["outcome"]) == ("closed", "dismissed")


def test_an_illegal_move_is_a_400_with_the_reason(api):
    case = CaseFactory(
        status="closed", outcome="resolved", closed_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    )
    response = api.patch(f"/api/cases/{case.case_id}", {"status": "open"}, format="json")
    body = error(response, 400)
    assert body["fields"] == {"status": ["a case cannot move from closed to open"]}
    assert body["message"] == "status: a case cannot move from closed to open"
    assert not CaseEvent.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"status": "closed", "outcome": "cancelled"}, "outcome"),
        ({"status": "pre_cancel"}, "status"),
        ({"status": "closed"}, "outcome"),
        ({"status": "hitl_review", "outcome": "resolved"}, "outcome"),
        ({}, "status"),
        ({"reply_deadline": "soon"}, "reply_deadline"),
    ],
)
def test_cancellation_and_pre_cancel_are_never_set_by_hand(api, body, field):
    case = CaseFactory(status="pending_reply")
    response = api.patch(f"/api/cases/{case.case_id}", body, format="json")
    assert field in error(response, 400)["fields"]
    case.refresh_from_db()
    assert (case.status, case.outcome) == ("pending_reply", "")


def test_the_reply_deadline_moves_through_the_lifecycle(api):
    case = CaseFactory(status="pending_reply")
    response = api.patch(
        f"/api/cases/{case.case_id}",
        {"reply_deadline": "2026-12-07T17:00:00-08:00", "note": "rider on leave"},
        format="json",
    )
    assert response.json()["reply_deadline"] == "2026-12-07T17:00:00-08:00"
    event = CaseEvent.objects.get(case=case)
    assert (event.note, event.data["reply_deadline"]) == (
        "rider on leave",
        "2026-12-07T17:00:00-08:00",
    )


# --- A staff member writes to a rider --------------------------------------------------------


@pytest.fixture
def thread():
    thread = EmailThreadFactory(case=CaseFactory(vanpool=VanpoolFactory(vanpool_id="VP-101")))
    rider = RiderFactory(vanpool=thread.case.vanpool, employee=EmployeeFactory(employee_id="E-1"))
    MessageFactory(
        thread=thread,
        employee=rider.employee,
        direction="inbound",
        status="processed",
        rfc_message_id="reply-1@mail.example",
    )
    return thread


def test_a_staff_message_is_sent_once_through_the_outbox(
    api, auditor, thread, django_capture_on_commit_callbacks
):
    url = f"/api/emails/threads/{thread.thread_id}/messages"
    body = {"employee_id": "E-1", "text": "Could you confirm your new shift?"}
    with django_capture_on_commit_callbacks(execute=True):
        first = api.post(url, body, format="json")
    with django_capture_on_commit_callbacks(execute=True):
        retry = api.post(url, body, format="json")
    assert (first.status_code, retry.status_code) == (201, 200)
    assert first.json()["message_id"] == retry.json()["message_id"]
    assert len(mail.outbox) == 1
    sent = mail.outbox[0]
    assert sent.to == ["e-1@example.com"]
    assert sent.subject == f"Re: {thread.subject}"
    assert sent.extra_headers["In-Reply-To"] == "<reply-1@mail.example>"
    message = Message.objects.get(message_id=first.json()["message_id"])
    assert (message.status, message.template, message.direction) == ("sent", "staff", "outbound")
    (event,) = CaseEvent.objects.filter(case=thread.case)
    assert event.actor_user == auditor
    assert event.data == {"message_id": message.message_id, "employee_id": "E-1"}


def test_an_idempotency_key_lets_the_same_words_go_twice(api, thread):
    url = f"/api/emails/threads/{thread.thread_id}/messages"
    body = {"employee_id": "E-1", "text": "Reminder: please reply."}
    one = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="a")
    two = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="b")
    again = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="a")
    assert (one.status_code, two.status_code, again.status_code) == (201, 201, 200)
    assert again.json()["message_id"] == one.json()["message_id"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"employee_id": "E-404", "text": "Hi"}, "no employee E-404"),
        ({"employee_id": "E-2", "text": "Hi"}, "E-2 has no seat on VP-101"),
        ({"employee_id": "E-BOUNCED", "text": "Hi"}, "E-BOUNCED's address bounced"),
        ({"employee_id": "E-1", "text": "   "}, "This field may not be blank."),
    ],
)
def test_a_message_nobody_can_receive_is_a_400(api, thread, body, message):
    EmployeeFactory(employee_id="E-2")
    RiderFactory(
        vanpool=thread.case.vanpool,
        employee=EmployeeFactory(
            employee_id="E-BOUNCED", email_undeliverable_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
        ),
    )
    response = api.post(f"/api/emails/threads/{thread.thread_id}/messages", body, format="json")
    fields = error(response, 400)["fields"]
    assert message in " ".join(fields.get("employee_id", []) + fields.get("text", []))
    assert not Message.objects.filter(direction="outbound").exists()


# --- Decisions on pending actions ------------------------------------------------------------


@pytest.fixture
def review():
    case = CaseFactory(status="hitl_review", vanpool=VanpoolFactory(vanpool_id="VP-101"))
    employee = EmployeeFactory(employee_id="E-1")
    RiderFactory(vanpool=case.vanpool, employee=employee)
    return PendingActionFactory(
        kind=PendingAction.Kind.REVIEW_EMAIL,
        case=case,
        payload={"subject": "About your seat", "text": "Thanks, noted.", "employee_id": "E-1"},
    )


def test_a_coordinator_approves_a_drafted_reply_with_edits(
    coordinator_api, coordinator, review, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = coordinator_api.post(
            f"/api/pending-actions/{review.pk}/approve",
            {"note": "ok", "edits": {"text": "Thanks, we have noted your new shift."}},
            format="json",
        )
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["decided_by"], body["result"]["edited"]) == (
        "approved",
        "coordinator",
        True,
    )
    assert mail.outbox[0].body.startswith("Thanks, we have noted your new shift.")
    review.case.refresh_from_db()
    assert review.case.status == "pending_reply"


def test_a_second_decision_is_a_409(coordinator_api, review):
    url = f"/api/pending-actions/{review.pk}"
    assert coordinator_api.post(f"{url}/reject", {}, format="json").status_code == 200
    for verb in ("approve", "reject"):
        body = error(coordinator_api.post(f"{url}/{verb}", {}, format="json"), 409)
        assert body == {"code": "conflict", "message": "this action is already rejected"}


def test_deciding_without_the_permission_is_a_403(review):
    reader = UserFactory(username="reader", is_staff=True)
    reader.user_permissions.add(Permission.objects.get(codename="view_pendingaction"))
    client = APIClient()
    client.force_login(reader)
    body = error(client.post(f"/api/pending-actions/{review.pk}/approve", {}, format="json"), 403)
    assert body["message"] == "deciding pending actions needs the coordinator or auditor role"
    review.refresh_from_db()
    assert review.status == "pending"


def test_a_decision_that_does_not_fit_the_action_is_a_400(api):
    action = PendingActionFactory(kind=PendingAction.Kind.DECIDE_VERIFICATION)
    body = error(api.post(f"/api/pending-actions/{action.pk}/reject", {}, format="json"), 400)
    assert body["fields"] == {"note": ["rule pass or fail for each rider instead of rejecting"]}
    approve = api.post(
        f"/api/pending-actions/{action.pk}/approve",
        {"edits": {"rulings": {"E-1": "maybe"}}},
        format="json",
    )
    assert "edits" in error(approve, 400)["fields"]


def test_a_cancellation_is_approved_only_through_its_pending_action(api, auditor):
    case = CaseFactory(status="pre_cancel", vanpool=VanpoolFactory(vanpool_id="VP-101"))
    EmailThreadFactory(case=case)
    rider = RiderFactory(vanpool=case.vanpool)
    action = PendingActionFactory(case=case, rider=rider, payload={"failed_checks": ["location"]})
    # The reviewer's override reaches the decision (needed when the supervisor's review failed).
    edits = {"override": True, "override_reason": "HR confirmed the move"}
    response = api.post(
        f"/api/pending-actions/{action.pk}/approve", {"edits": edits}, format="json"
    )
    assert response.status_code == 200, response.content[:300]
    rider.refresh_from_db()
    case.refresh_from_db()
    assert (rider.status, rider.cancelled_by) == (Rider.Status.CANCELLED, auditor)
    assert (case.status, case.outcome) == ("closed", "cancelled")


@pytest.mark.parametrize(
    "path",
    [
        "/api/cases/CASE-0000%0000",
        "/api/vanpools/VP-1%00/riders",
        "/api/employees/EMP-1%00/shifts",
        "/api/emails/threads/THREAD-1%00",
    ],
)
def test_a_nul_in_an_identifier_is_a_json_404_not_a_database_error(api, path):
    assert error(api.get(path), 404)["code"] == "not_found"


def test_a_nul_in_a_dashboard_path_is_a_404(client, coordinator):
    client.force_login(coordinator)
    assert client.get("/cases/CASE-1%00/").status_code == 404


def test_a_nul_in_a_match_edit_is_refused_as_a_bad_decision(api):
    action = PendingActionFactory(kind=PendingAction.Kind.MATCH_INBOUND)
    response = api.post(
        f"/api/pending-actions/{action.pk}/approve",
        {"edits": {"thread": "THREAD-1\x00"}},
        format="json",
    )
    assert response.status_code == 400
