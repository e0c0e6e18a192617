"""Faults 31–32: nothing is cancelled over newer words, and no proposal outlives its evidence."""

import datetime as dt

import pytest
from rest_framework.test import APIClient

from caseloop import decisions
from caseloop.loop.deadlines import process_timeouts
from cases.lifecycle import transition
from cases.models import Case, CaseEvent, PendingAction
from outreach.inbound import receive_raw
from tests.faults.scenes import failing_case, outbound_to, pre_cancel, reply_from
from vanpools.models import Rider

pytestmark = pytest.mark.django_db


def test_fault_31_a_cancellation_is_refused_while_a_newer_reply_is_unread(
    run, _frozen_time, coordinator
):
    scene = failing_case(run)
    action = pre_cancel(scene, run, _frozen_time)
    _frozen_time.shift(dt.timedelta(minutes=5))
    stored, _ = receive_raw(reply_from(scene.case, scene.far, "Don't cancel, I moved back!"))
    client = APIClient()
    client.force_authenticate(coordinator)

    response = client.post(f"/api/pending-actions/{action.pk}/approve", {}, format="json")

    assert response.status_code == 409
    assert stored.message_id in response.json()["error"]["message"]
    assert Rider.objects.get(pk=action.rider_id).status == Rider.Status.ACTIVE
    assert outbound_to(scene.far, "cancelled") == 0


def test_fault_32_an_undecided_cancellation_expires_and_the_case_is_checked_again(
    run, _frozen_time, settings, coordinator
):
    settings.PENDING_ACTION_EXPIRE_DAYS = 14
    scene = failing_case(run)
    stale = pre_cancel(scene, run, _frozen_time)
    _frozen_time.shift(dt.timedelta(days=14, minutes=1))

    counts = run(process_timeouts)

    stale.refresh_from_db()
    assert (stale.status, stale.note) == ("expired", "not decided within 14 days")
    assert counts["proposals_expired"] == 1
    assert CaseEvent.objects.filter(case=scene.case, note__contains="expired undecided").exists()
    # Re-audited on today's records: still failing, so proposed again with fresh evidence.
    fresh = PendingAction.objects.get(case=scene.case, kind="cancel_membership", status="pending")
    assert fresh.pk != stale.pk and fresh.created_at > stale.created_at
    with pytest.raises(decisions.AlreadyDecided):
        decisions.approve(stale, by=coordinator)


def test_fault_32_an_expired_proposal_whose_record_was_fixed_resolves_the_case(
    run, _frozen_time, settings
):
    settings.PENDING_ACTION_EXPIRE_DAYS = 14
    scene = failing_case(run)
    pre_cancel(scene, run, _frozen_time)
    scene.far.home_zip = "94587"
    scene.far.save()
    _frozen_time.shift(dt.timedelta(days=15))

    run(process_timeouts)

    scene.case.refresh_from_db()
    assert (scene.case.status, scene.case.outcome) == ("closed", "resolved")
    assert Rider.objects.filter(status=Rider.Status.CANCELLED).count() == 0


def test_fault_32_a_proposal_younger_than_the_limit_is_left_alone_and_the_sweep_is_idempotent(
    run, _frozen_time, settings
):
    settings.PENDING_ACTION_EXPIRE_DAYS = 14
    scene = failing_case(run)
    action = pre_cancel(scene, run, _frozen_time)
    _frozen_time.shift(dt.timedelta(days=13))

    first, second = run(process_timeouts), run(process_timeouts)

    assert first["proposals_expired"] == second["proposals_expired"] == 0
    action.refresh_from_db()
    assert action.status == "pending"


def test_fault_32_a_cancellation_is_superseded_when_the_case_moves_on_without_it(
    run, _frozen_time, auditor
):
    scene = failing_case(run)
    action = pre_cancel(scene, run, _frozen_time)

    transition(scene.case, Case.Status.PENDING_REPLY, actor=auditor, note="talked to the rider")

    action.refresh_from_db()
    assert action.status == "superseded"
    assert action.note == "the case moved on to pending_reply"
