"""Faults 43–46: a message we cannot read reaches a person and holds a cancellation; bounces
and header fields (issue 34, points 1 and 5, and the guard principle in docs/design.md)."""

import datetime as dt

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from caseloop import decisions
from cases.models import CaseEvent, PendingAction
from outreach.bounces import record_bounce
from outreach.models import Message
from tests.faults.scenes import failing_case, outbound_to, pre_cancel
from tests.faults.support import (
    POSTMARK_INBOUND,
    basic_auth,
    post_json,
    postmark_payload,
    production_webhooks,
)
from vanpools.models import Employee, Rider

pytestmark = pytest.mark.django_db


def _first_email_to(employee: Employee) -> Message:
    return Message.objects.filter(direction="outbound", employee=employee).earliest("created_at")


def _parsed_reply(outbound: Message, **fields: object) -> dict[str, object]:
    """Postmark's parsed fields (no RawEmail) for the rider's answer to ``outbound``."""
    rider = outbound.employee
    assert rider is not None
    return postmark_payload(
        From=rider.email,
        FromFull={"Email": rider.email, "Name": rider.first_name, "MailboxHash": ""},
        To=outbound.reply_to,
        ToFull=[{"Email": outbound.reply_to, "Name": "", "MailboxHash": ""}],
        Headers=[{"Name": "In-Reply-To", "Value": f"<{outbound.rfc_message_id}>"}],
        TextBody="Please do NOT cancel my seat, I moved back to Union City.",
        **fields,
    )


def test_fault_43_a_subject_with_a_line_break_is_read_as_the_reply_it_is(
    client, settings, run, _frozen_time
):
    production_webhooks(settings)
    scene = failing_case(run)
    action = pre_cancel(scene, run, _frozen_time)
    _frozen_time.shift(dt.timedelta(minutes=5))
    # Postmark decodes an encoded-word Subject into a value with CR/LF in it.
    payload = _parsed_reply(_first_email_to(scene.far), Subject="Re: Please do NOT\r\n cancel")

    response = run(post_json, client, POSTMARK_INBOUND, payload, **basic_auth())

    assert response.status_code == 200
    reply = Message.objects.get(direction="inbound")
    assert (reply.status, reply.kind, reply.employee) == ("processed", "reply", scene.far)
    assert reply.subject == "Re: Please do NOT cancel"
    action.refresh_from_db()
    assert action.status == "superseded"  # the reply withdrew the cancellation


def test_fault_44_a_quarantined_message_on_a_thread_gets_a_card_and_holds_the_cancellation(
    client, settings, run, _frozen_time, coordinator
):
    production_webhooks(settings)
    scene = failing_case(run)
    action = pre_cancel(scene, run, _frozen_time)
    _frozen_time.shift(dt.timedelta(minutes=5))
    # Parsed fields anymail cannot build a message from (an attachment with no type).
    payload = _parsed_reply(_first_email_to(scene.far), Attachments=[{"Name": "lease.pdf"}])

    assert run(post_json, client, POSTMARK_INBOUND, payload, **basic_auth()).status_code == 200

    kept = Message.objects.get(direction="inbound")
    assert kept.status == "quarantined" and kept.thread is not None
    assert kept.thread.case == scene.case
    card = PendingAction.objects.get(message=kept)
    assert (card.kind, card.status, card.case) == ("match_inbound", "pending", scene.case)
    assert card.payload["quarantined"] is True
    assert CaseEvent.objects.filter(case=scene.case, note__contains=kept.message_id).exists()
    health = Client().get("/health").json()
    assert health["waiting_for_a_person"] == {"quarantined_messages": 1}

    api = APIClient()
    api.force_authenticate(coordinator)
    refused = api.post(f"/api/pending-actions/{action.pk}/approve", {}, format="json")
    assert refused.status_code == 409
    assert kept.message_id in refused.json()["error"]["message"]
    assert Rider.objects.get(pk=action.rider_id).status == Rider.Status.ACTIVE
    assert outbound_to(scene.far, "cancelled") == 0

    # A person reads it and names the thread and rider: it holds nothing any more.
    decisions.approve(
        card, by=coordinator, edits={"employee_id": scene.far.employee_id}, note="read it"
    )
    kept.refresh_from_db()
    assert (kept.status, kept.employee) == ("processed", scene.far)
    assert "read_by_person" in kept.flags
    assert Client().get("/health").json()["waiting_for_a_person"] == {"quarantined_messages": 0}
    decisions.approve(action, by=coordinator, edits={"override": True, "override_reason": "x"})
    assert Rider.objects.get(pk=action.rider_id).status == Rider.Status.CANCELLED


def test_fault_45_quarantined_garbage_with_no_thread_is_one_card_that_counts_it(client, settings):
    production_webhooks(settings)
    for n in range(3):
        body = f"not json at all {n}"
        response = client.generic(
            "POST", POSTMARK_INBOUND, body, content_type="application/json", **basic_auth()
        )
        assert response.status_code == 200

    assert Message.objects.filter(status="quarantined", thread__isnull=True).count() == 3
    card = PendingAction.objects.get(kind="match_inbound")
    assert card.case is None and card.payload["repeats"] == 2
    assert Client().get("/health").json()["waiting_for_a_person"] == {"quarantined_messages": 3}


def test_fault_46_a_bounce_for_an_address_hr_has_just_corrected_marks_nothing(run):
    scene = failing_case(run)
    outbound = _first_email_to(scene.far)
    stale = outbound.employee  # read before HR's correction commits
    assert stale is not None
    Employee.objects.filter(pk=scene.far.pk).update(email="farid.new@example.com")

    record_bounce(outbound, stale.email, "550 no such user")

    scene.far.refresh_from_db()
    assert scene.far.email_undeliverable_at is None


def test_fault_44_a_quarantined_message_from_before_the_proposal_holds_it_too(
    client, settings, run, _frozen_time, coordinator
):
    production_webhooks(settings)
    scene = failing_case(run)
    payload = _parsed_reply(_first_email_to(scene.far), Attachments=[{"Name": "lease.pdf"}])
    run(post_json, client, POSTMARK_INBOUND, payload, **basic_auth())
    action = pre_cancel(scene, run, _frozen_time)  # proposed a week later, nobody read it

    with pytest.raises(decisions.NewerReplyWaiting, match="could not be read"):
        decisions.approve(action, by=coordinator, edits={"override": True, "override_reason": "x"})

    assert Rider.objects.get(pk=action.rider_id).status == Rider.Status.ACTIVE


def test_fault_44_the_quarantined_message_is_a_card_on_the_coordinators_queue(
    client, settings, run, _frozen_time, coordinator
):
    production_webhooks(settings)
    scene = failing_case(run)
    payload = _parsed_reply(_first_email_to(scene.far), Attachments=[{"Name": "lease.pdf"}])
    run(post_json, client, POSTMARK_INBOUND, payload, **basic_auth())
    card = PendingAction.objects.get(kind="match_inbound")

    client.force_login(coordinator)
    html = client.get(reverse("review-queue")).content.decode()

    assert f'id="action-{card.pk}"' in html
    assert "could not be read and was quarantined" in html
