"""The review queue: cards per kind, filters, decisions over htmx and without JS, who may decide."""

import datetime as dt
import re

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from caseloop.audits import audit_vanpool
from caseloop.loop.deadlines import process_timeouts
from cases.models import Case, CaseEvent, PendingAction
from outreach.models import EmailThread, Message
from tests.factories import (
    CaseFactory,
    EmployeeFactory,
    MessageFactory,
    PendingActionFactory,
    RiderFactory,
    UserFactory,
    VanpoolFactory,
)
from vanpools.models import Rider, Vanpool

pytestmark = pytest.mark.django_db

NEAR_ZIP = "94587"
FAR_ZIP = "90026"
HTMX = {"HTTP_HX_REQUEST": "true"}
Kind = PendingAction.Kind


@pytest.fixture
def van():
    vanpool = VanpoolFactory(work_site="Fremont Campus")
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Nadia", home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Farid", home_zip=FAR_ZIP))
    return vanpool


@pytest.fixture
def pre_cancel(van, run, _frozen_time):
    """A real path to pre-cancel: audit, outreach, no reply by the deadline, re-audit."""
    run(audit_vanpool, van.vanpool_id)
    _frozen_time.shift(dt.timedelta(days=7, minutes=1))
    run(process_timeouts)
    return PendingAction.objects.get(kind=Kind.CANCEL_MEMBERSHIP, status="pending")


@pytest.fixture
def reader(db):
    """Staff who may read the dashboard but not decide."""
    user = UserFactory(username="reader", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_case"))
    return user


def decide_url(action):
    return reverse("action-decide", args=[action.pk])


def review_email_action(**payload):
    employee = EmployeeFactory()
    rider = RiderFactory(employee=employee)
    case = CaseFactory(vanpool=rider.vanpool, status=Case.Status.HITL_REVIEW)
    inbound = MessageFactory(
        thread=EmailThread.objects.create(case=case, subject="Your seat"),
        direction="inbound",
        status="processed",
        employee=employee,
        text_body="<script>alert('x')</script> I want a manager.",
    )
    return PendingActionFactory(
        kind=Kind.REVIEW_EMAIL,
        case=case,
        message=inbound,
        payload={
            "employee_id": employee.employee_id,
            "to": employee.email,
            "template": "holding_reply",
            "subject": "About your vanpool seat",
            "text": "We passed your message to a coordinator.",
            "html": "<p>We passed your message to a coordinator.</p>",
        },
    )


# --- The page ------------------------------------------------------------------------------


def test_the_queue_shows_a_card_per_pending_action_oldest_first(client, coordinator, pre_cancel):
    newer = review_email_action()
    client.force_login(coordinator)
    html = client.get(reverse("review-queue")).content.decode()
    assert html.index(f'id="action-{pre_cancel.pk}"') < html.index(f'id="action-{newer.pk}"')
    assert "Cancel the seat of" in html and "Review a drafted reply" in html
    assert "What was tried" in html and "Emails sent" in html and "Re-audits" in html


def test_a_cancellation_card_lists_what_was_tried_from_the_case_records(
    client, coordinator, pre_cancel
):
    client.force_login(coordinator)
    html = client.get(reverse("review-queue")).content.decode()
    assert "1 sent to" in html
    assert "1 delivered, 0 bounced" in html
    assert "no reply from the rider" in html
    assert "1 (timeout)" in html  # the deadline re-audit
    assert "commute mi" in html  # the distance evidence


def test_email_text_on_a_card_is_escaped_and_inert(client, coordinator):
    review_email_action()
    client.force_login(coordinator)
    html = client.get(reverse("review-queue")).content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert 'class="email email-inbound" hx-disable' in html


@pytest.mark.parametrize("query", ["kind=nonsense", "site=Nowhere", "page=0", "page=abc"], ids=str)
def test_bad_filters_are_a_400(client, coordinator, query):
    client.force_login(coordinator)
    assert client.get(reverse("review-queue") + "?" + query).status_code == 400


def test_it_filters_by_kind_and_by_site(client, coordinator, pre_cancel):
    email = review_email_action()
    other_site = email.case.vanpool
    other_site.work_site = "Reno Plant"
    other_site.save()
    client.force_login(coordinator)
    by_kind = client.get(reverse("review-queue"), {"kind": "review_email"}).content.decode()
    assert f'id="action-{email.pk}"' in by_kind and f'id="action-{pre_cancel.pk}"' not in by_kind
    by_site = client.get(reverse("review-queue"), {"site": "Reno Plant"}).content.decode()
    assert f'id="action-{email.pk}"' in by_site and f'id="action-{pre_cancel.pk}"' not in by_site


def test_htmx_gets_only_the_list_fragment(client, coordinator, pre_cancel):
    client.force_login(coordinator)
    html = client.get(reverse("review-queue"), **HTMX).content.decode()
    assert html.lstrip().startswith('<section id="queue-list"')
    assert "<html" not in html


def make_mixed_queue(n: int) -> None:
    for i in range(n):
        employee = EmployeeFactory()
        rider = RiderFactory(employee=employee)
        case = CaseFactory(
            vanpool=rider.vanpool,
            status=Case.Status.PRE_CANCEL,
            meta={"reason": "location_mismatch", "failed_checks": ["location"],
                  "rider_flags": {employee.employee_id: {"location": "fail"}}},
        )  # fmt: skip
        thread = EmailThread.objects.create(case=case, subject="Seat")
        MessageFactory(thread=thread, employee=employee)
        inbound = MessageFactory(thread=thread, employee=employee, direction="inbound")
        PendingActionFactory(
            kind=Kind.CANCEL_MEMBERSHIP,
            case=case,
            rider=rider,
            payload={"employee_id": employee.employee_id, "failed_checks": ["location"]},
        )
        PendingActionFactory(kind=Kind.LABEL_REPLY, case=case, message=inbound)
        PendingActionFactory(
            kind=Kind.MATCH_INBOUND,
            case=None,
            message=MessageFactory(thread=None, direction="inbound", from_email=employee.email),
            payload={"from": employee.email, "reason": "no token", "subject": f"hi {i}"},
        )


@pytest.mark.parametrize("rows", [2, 6])
def test_the_queue_takes_the_same_number_of_queries_however_long_it_is(
    client, coordinator, django_assert_max_num_queries, rows
):
    make_mixed_queue(rows)
    client.force_login(coordinator)
    with django_assert_max_num_queries(16):
        response = client.get(reverse("review-queue"))
    assert response.status_code == 200
    assert response.content.decode().count('class="card qcard') == rows * 3


# --- Cancellations -------------------------------------------------------------------------


def test_the_confirmation_step_is_a_page_and_a_fragment(client, coordinator, pre_cancel):
    client.force_login(coordinator)
    url = reverse("action-card", args=[pre_cancel.pk]) + "?step=confirm"
    page = client.get(url)
    fragment = client.get(url, **HTMX)
    assert page.status_code == fragment.status_code == 200
    assert b"<html" in page.content and b"<html" not in fragment.content
    assert b'name="confirm"' in fragment.content and b"Cancel the seat</button>" in fragment.content
    assert client.get(reverse("action-card", args=[pre_cancel.pk]) + "?step=go").status_code == 400


def test_approving_a_cancellation_without_confirmation_or_a_reason_changes_nothing(
    client, coordinator, pre_cancel
):
    client.force_login(coordinator)
    response = client.post(decide_url(pre_cancel), {"decision": "approve"}, **HTMX)
    assert response.status_code == 422
    html = response.content.decode()
    assert "Confirm that this seat should be cancelled." in html
    assert "Give the reason for cancelling" in html
    pre_cancel.refresh_from_db()
    assert pre_cancel.status == "pending"
    assert Rider.objects.get(pk=pre_cancel.rider_id).status == Rider.Status.ACTIVE


def test_approving_a_confirmed_cancellation_ends_the_seat_and_swaps_the_card(
    client, coordinator, pre_cancel, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            decide_url(pre_cancel),
            {"decision": "approve", "confirm": "on", "note": "HR confirms the move"},
            **HTMX,
        )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith(
        '<article class="card qcard qcard-cancel_membership qcard-done"'
    )
    assert "approved" in html and "HR confirms the move" in html
    seat = Rider.objects.get(pk=pre_cancel.rider_id)
    assert seat.status == Rider.Status.CANCELLED and seat.cancelled_by == coordinator
    case = Case.objects.get(pk=pre_cancel.case_id)
    assert (case.status, case.outcome) == (Case.Status.CLOSED, Case.Outcome.CANCELLED)
    assert CaseEvent.objects.filter(case=case, actor_user=coordinator).exists()


def test_rejecting_a_cancellation_needs_a_note_and_dismisses_the_case(
    client, coordinator, pre_cancel
):
    client.force_login(coordinator)
    assert client.post(decide_url(pre_cancel), {"decision": "reject"}, **HTMX).status_code == 422
    response = client.post(
        decide_url(pre_cancel), {"decision": "reject", "note": "lives near, ZIP typo"}, **HTMX
    )
    assert response.status_code == 200
    case = Case.objects.get(pk=pre_cancel.case_id)
    assert (case.status, case.outcome) == (Case.Status.CLOSED, Case.Outcome.DISMISSED)
    pre_cancel.refresh_from_db()
    assert (pre_cancel.status, pre_cancel.note) == ("rejected", "lives near, ZIP typo")


def test_a_decision_on_the_queue_page_sends_the_new_counts_out_of_band(
    client, coordinator, pre_cancel
):
    elsewhere = review_email_action()
    Vanpool.objects.filter(pk=elsewhere.case.vanpool_id).update(work_site="Sunnyvale HQ")
    client.force_login(coordinator)
    on_the_queue = {**HTMX, "HTTP_HX_CURRENT_URL": "http://testserver/?site=Fremont+Campus"}
    response = client.post(
        decide_url(pre_cancel), {"decision": "reject", "note": "lives near"}, **on_the_queue
    )
    assert response.status_code == 200
    html = response.content.decode()
    chips = re.search(r'<nav id="kind-chips"[^>]*hx-swap-oob="true">(.*?)</nav>', html, re.S)
    assert chips is not None, html
    counts = dict(re.findall(r'>(\w[\w ]+?) <span class="chip-count">(\d+)</span>', chips[1]))
    assert counts["Cancel membership"] == "0"
    # The filter the page shows (its site) still applies: the other site's draft is not counted.
    assert counts["Review email"] == "0" and "site=Fremont+Campus" in chips[1]
    assert re.search(r'<p id="queue-count"[^>]*hx-swap-oob="true">0 waiting \(filtered\)', html)


def test_a_decision_off_the_queue_page_sends_no_counts(client, coordinator, pre_cancel):
    client.force_login(coordinator)
    card_page = f"http://testserver{reverse('action-card', args=[pre_cancel.pk])}"
    response = client.post(
        decide_url(pre_cancel),
        {"decision": "reject", "note": "lives near"},
        **HTMX,
        HTTP_HX_CURRENT_URL=card_page,
    )
    assert response.status_code == 200
    assert "hx-swap-oob" not in response.content.decode()


def test_a_card_on_its_own_page_has_a_level_one_heading(client, coordinator, pre_cancel):
    client.force_login(coordinator)
    html = client.get(reverse("action-card", args=[pre_cancel.pk])).content.decode()
    assert re.search(r"<h1>Cancel membership · CASE-[0-9A-F]+</h1>", html)


def test_a_decision_that_lost_the_race_says_so_and_changes_nothing(
    client, coordinator, auditor, pre_cancel
):
    PendingAction.objects.filter(pk=pre_cancel.pk).update(
        status="superseded", decided_at=timezone.now(), note="superseded by reply MSG-1"
    )
    client.force_login(coordinator)
    response = client.post(
        decide_url(pre_cancel), {"decision": "approve", "confirm": "on", "note": "go"}, **HTMX
    )
    assert response.status_code == 200
    assert "Nothing changed: this cancel membership was already superseded" in (
        response.content.decode()
    )
    assert Rider.objects.get(pk=pre_cancel.rider_id).status == Rider.Status.ACTIVE


def test_without_javascript_a_decision_redirects_back_with_a_message(
    client, coordinator, pre_cancel
):
    client.force_login(coordinator)
    back = reverse("review-queue") + "?kind=cancel_membership"
    response = client.post(
        decide_url(pre_cancel), {"decision": "reject", "note": "false positive", "next": back}
    )
    assert response.status_code == 302 and response["Location"] == back
    page = client.get(back).content.decode()
    assert "Cancel membership on" in page and "rejected" in page


def test_a_foreign_next_address_is_ignored(client, coordinator, pre_cancel):
    client.force_login(coordinator)
    response = client.post(
        decide_url(pre_cancel),
        {"decision": "reject", "note": "no", "next": "https://evil.example/"},
    )
    assert response["Location"] == reverse("review-queue")


# --- The other kinds -----------------------------------------------------------------------


def test_a_drafted_email_is_sent_with_the_reviewers_edits(
    client, coordinator, django_capture_on_commit_callbacks
):
    action = review_email_action()
    client.force_login(coordinator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            decide_url(action),
            {
                "decision": "approve",
                "subject": "Your seat, again",
                "text": "A coordinator will call.",
            },
            **HTMX,
        )
    assert response.status_code == 200
    sent = Message.objects.get(direction="outbound", template="holding_reply")
    assert (sent.subject, sent.text_body.strip()) == (
        "Your seat, again",
        "A coordinator will call.",
    )
    action.refresh_from_db()
    assert action.result["edited"] is True


def test_a_drafted_email_with_an_empty_body_shows_the_error(client, coordinator):
    action = review_email_action()
    client.force_login(coordinator)
    response = client.post(
        decide_url(action), {"decision": "approve", "subject": "Hi", "text": "  "}, **HTMX
    )
    assert response.status_code == 422
    assert b"The email needs a body." in response.content
    assert not Message.objects.filter(direction="outbound").exists()


def test_labelling_a_reply_needs_a_bucket_from_the_list(client, coordinator, van, run):
    run(audit_vanpool, van.vanpool_id)
    case = Case.objects.get(vanpool=van)
    inbound = MessageFactory(
        thread=case.thread,
        direction="inbound",
        status="processed",
        employee=van.riders.get(employee__home_zip=FAR_ZIP).employee,
        text_body="hmm ok",
    )
    action = PendingActionFactory(
        kind=Kind.LABEL_REPLY, case=case, message=inbound, payload={"suggested_bucket": "question"}
    )
    client.force_login(coordinator)
    bad = client.post(decide_url(action), {"decision": "approve", "bucket": "sarcasm"}, **HTMX)
    assert bad.status_code == 422
    with_run = client.post(decide_url(action), {"decision": "approve", "bucket": "acknowledgment"})
    assert with_run.status_code == 302
    inbound.refresh_from_db()
    assert (inbound.bucket, inbound.bucket_confidence) == ("acknowledgment", 1.0)


def test_matching_an_inbound_email_validates_the_thread(client, coordinator, van, run):
    run(audit_vanpool, van.vanpool_id)
    case = Case.objects.get(vanpool=van)
    far = van.riders.get(employee__home_zip=FAR_ZIP).employee
    stray = MessageFactory(
        thread=None, direction="inbound", status="received", from_email=far.email, kind="reply",
        flags=["unmatched"], text_body="I moved.",
    )  # fmt: skip
    action = PendingActionFactory(
        kind=Kind.MATCH_INBOUND, case=None, message=stray, payload={"from": far.email}
    )
    client.force_login(coordinator)
    page = client.get(reverse("review-queue")).content.decode()
    assert case.thread.thread_id in page  # suggested: the sender rides this van
    bad = client.post(decide_url(action), {"decision": "approve", "thread": "nope"}, **HTMX)
    assert bad.status_code == 422 and b"A thread ID looks like" in bad.content
    unknown = client.post(
        decide_url(action), {"decision": "approve", "thread": "THREAD-00000000"}, **HTMX
    )
    assert unknown.status_code == 422 and b"no thread THREAD-00000000" in unknown.content
    ok = client.post(
        decide_url(action), {"decision": "approve", "thread": case.thread.thread_id}, **HTMX
    )
    assert ok.status_code == 200
    stray.refresh_from_db()
    assert (stray.thread_id, stray.employee_id) == (case.thread.pk, far.pk)


def test_ruling_on_an_undecided_check_moves_the_case_on(client, coordinator):
    rider = RiderFactory()
    emp = rider.employee.employee_id
    case = CaseFactory(
        vanpool=rider.vanpool,
        status=Case.Status.HITL_REVIEW,
        meta={"reason": "unknown", "failed_checks": [], "rider_flags": {emp: {"shift": "unknown"}}},
    )
    action = PendingActionFactory(
        kind=Kind.DECIDE_VERIFICATION,
        case=case,
        payload={"checks": ["shift"], "riders": {emp: {"shift": "unknown"}}, "details": ""},
    )
    client.force_login(coordinator)
    missing = client.post(decide_url(action), {"decision": "approve"}, **HTMX)
    assert missing.status_code == 422 and f"Rule pass or fail for {emp}".encode() in missing.content
    response = client.post(decide_url(action), {"decision": "approve", f"ruling_{emp}": "pass"})
    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.status, case.outcome) == (Case.Status.CLOSED, Case.Outcome.RESOLVED)


# --- Who may decide ------------------------------------------------------------------------


def test_staff_without_the_approve_permission_see_the_queue_read_only(client, reader, pre_cancel):
    client.force_login(reader)
    html = client.get(reverse("review-queue")).content.decode()
    assert f'id="action-{pre_cancel.pk}"' in html
    assert "deciding needs the approve permission" in html
    assert "Approve cancellation" not in html and 'action="/queue/' not in html


def test_a_decision_from_someone_without_the_approve_permission_is_403(client, reader, pre_cancel):
    client.force_login(reader)
    body = {"decision": "approve", "confirm": "on", "note": "x"}
    assert client.post(decide_url(pre_cancel), body).status_code == 403
    url = reverse("action-card", args=[pre_cancel.pk]) + "?step=confirm"
    assert client.get(url).status_code == 403
    assert Rider.objects.get(pk=pre_cancel.rider_id).status == Rider.Status.ACTIVE


def test_outsiders_and_strangers_cannot_decide(client, outsider, pre_cancel):
    assert client.post(decide_url(pre_cancel), {"decision": "reject"}).status_code == 302
    client.force_login(outsider)
    assert client.post(decide_url(pre_cancel), {"decision": "reject"}).status_code == 403


def test_deciding_is_post_only(client, coordinator, pre_cancel):
    client.force_login(coordinator)
    assert client.get(decide_url(pre_cancel)).status_code == 405
