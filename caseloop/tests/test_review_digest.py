"""The daily digest to coordinators (once a day each), the escalation to auditors (once a card)."""

import datetime as dt
from unittest import mock

import pytest
from django.core import mail
from django.test import override_settings
from django.utils import timezone

from caseloop.digest import (
    build_digests,
    escalate_expiring_cancellations,
    send_daily_digests,
)
from caseloop.models import DigestSent
from caseloop.tasks import escalate_expiring_cancellations_task, send_daily_digests_task
from cases.models import Case, PendingAction
from tests.factories import (
    CaseFactory,
    PendingActionFactory,
    RiderFactory,
    UserFactory,
    VanpoolFactory,
)
from vanpools.models import CoordinatorSite, Vanpool
from vanpools.scope import visible

pytestmark = pytest.mark.django_db


def coordinator(name, **extra):
    return UserFactory(username=name, is_staff=True, groups=["Coordinators"], **extra)


def card(kind, site, *, hours_ago, vanpool_id=None):
    vanpool = VanpoolFactory(work_site=site, **({"vanpool_id": vanpool_id} if vanpool_id else {}))
    action = PendingActionFactory(
        kind=kind, case=CaseFactory(vanpool=vanpool, status=Case.Status.HITL_REVIEW)
    )
    created = timezone.now() - dt.timedelta(hours=hours_ago)
    PendingAction.objects.filter(pk=action.pk).update(created_at=created)
    return action


@pytest.fixture
def desk():
    """Two sites; Fremont's coordinator has three cards there, one overdue."""
    fremont, columbus = coordinator("fremont"), coordinator("columbus")
    VanpoolFactory(work_site="Fremont Campus", coordinator=fremont)
    VanpoolFactory(work_site="Columbus DC", coordinator=columbus)
    card("review_email", "Fremont Campus", hours_ago=2, vanpool_id="VP-NEW")
    card("review_email", "Fremont Campus", hours_ago=30, vanpool_id="VP-LATE")  # SLA 24 h
    card("cancel_membership", "Fremont Campus", hours_ago=10, vanpool_id="VP-MID")
    card("match_inbound", "Columbus DC", hours_ago=1, vanpool_id="VP-OHIO")
    return fremont, columbus


def digest_for(user):
    (message,) = [m for m in mail.outbox if m.to == [user.email]]
    return message


def test_each_coordinator_gets_their_sites_cards_oldest_first_with_the_overdue_marked(desk):
    fremont, columbus = desk
    assert send_daily_digests() == {"sent": 2, "already_sent": 0}
    body = digest_for(fremont).body
    assert digest_for(fremont).subject.endswith("3 waiting, 1 overdue")
    listed = [line for line in body.splitlines() if line.startswith("- ")]
    assert [line.split(" — ")[1].split(" · ")[1] for line in listed[:3]] == [
        "VP-LATE",
        "VP-MID",
        "VP-NEW",
    ]
    assert "OVERDUE by 6 h" in listed[0]
    assert "due in 22 h" in listed[2]
    assert "\nOverdue:\n- review email" in body
    assert "VP-OHIO" not in body
    assert "VP-OHIO" in digest_for(columbus).body
    assert "VP-LATE" not in digest_for(columbus).body


def test_running_the_task_twice_sends_one_digest_per_coordinator_a_day(desk, _frozen_time):
    send_daily_digests_task()
    send_daily_digests_task()
    assert len(mail.outbox) == 2
    assert DigestSent.objects.count() == 2
    _frozen_time.shift(dt.timedelta(days=1))
    assert send_daily_digests_task() == {"sent": 2, "already_sent": 0}
    assert len(mail.outbox) == 4


def test_a_digest_that_fails_to_send_is_not_recorded_and_goes_out_on_the_next_run(desk):
    fremont, _ = desk
    failing = mock.patch("django.core.mail.EmailMessage.send", side_effect=OSError("smtp down"))
    with failing, pytest.raises(OSError):
        send_daily_digests()
    assert not DigestSent.objects.exists()
    send_daily_digests()
    assert len([m for m in mail.outbox if m.to == [fremont.email]]) == 1


def test_a_coordinator_of_no_vanpool_gets_the_whole_queue_and_one_without_an_address_none(desk):
    everyone = coordinator("floater")
    coordinator("no_address", email="")
    send_daily_digests()
    assert digest_for(everyone).subject.endswith("4 waiting, 1 overdue")
    assert len(mail.outbox) == 3


# --- Escalation -----------------------------------------------------------------------------


@override_settings(PENDING_ACTION_EXPIRE_DAYS=14, ESCALATE_HOURS_BEFORE_EXPIRY=48)
def test_auditors_are_told_once_when_a_cancellation_is_close_to_expiring():
    auditor = UserFactory(username="aud", is_staff=True, groups=["Auditors"])
    near = card("cancel_membership", "Fremont Campus", hours_ago=12 * 24 + 1, vanpool_id="VP-OLD")
    card("cancel_membership", "Fremont Campus", hours_ago=11 * 24, vanpool_id="VP-YOUNG")
    card("review_email", "Fremont Campus", hours_ago=13 * 24, vanpool_id="VP-EMAIL")

    assert escalate_expiring_cancellations_task() == {"escalated": 1}
    assert escalate_expiring_cancellations_task() == {"escalated": 0}
    (message,) = mail.outbox
    assert message.to == [auditor.email]
    assert "VP-OLD" in message.body and "expires in 1 d 23 h" in message.body
    assert "VP-YOUNG" not in message.body and "VP-EMAIL" not in message.body
    assert PendingAction.objects.get(pk=near.pk).escalated_at is not None


@override_settings(PENDING_ACTION_EXPIRE_DAYS=14, ESCALATE_HOURS_BEFORE_EXPIRY=48)
def test_an_escalation_that_fails_to_send_is_tried_again():
    UserFactory(username="aud", is_staff=True, groups=["Auditors"])
    card("cancel_membership", "Fremont Campus", hours_ago=13 * 24)
    failing = mock.patch("django.core.mail.EmailMessage.send", side_effect=OSError("smtp down"))
    with failing, pytest.raises(OSError):
        escalate_expiring_cancellations()
    assert not PendingAction.objects.filter(escalated_at__isnull=False).exists()
    assert escalate_expiring_cancellations() == {"escalated": 1}
    assert len(mail.outbox) == 1


@override_settings(COORDINATOR_SCOPE="sites")
def test_under_site_scope_each_digest_lists_exactly_what_the_coordinators_queue_shows(desk):
    """Their vanpools (named, or at a site given to them), not every card at the site."""
    fremont, columbus = desk
    Vanpool.objects.filter(vanpool_id="VP-LATE").update(coordinator=fremont)
    andover = coordinator("andover")
    CoordinatorSite.objects.create(user=andover, work_site="Columbus DC")
    floater = coordinator("floater")
    digests = {digest.user: digest for digest in build_digests(timezone.now())}
    for user in (fremont, columbus, andover, floater):
        queue = visible(PendingAction.objects.pending(), user).values_list("pk", flat=True)
        assert [card.pk for card in digests[user].cards] == sorted(queue), user
    assert [card.vanpool_id for card in digests[fremont].cards] == ["VP-LATE"]
    assert [card.vanpool_id for card in digests[andover].cards] == ["VP-OHIO"]
    send_daily_digests()
    assert digest_for(fremont).subject.endswith("1 waiting, 1 overdue")
    assert "VP-MID" not in digest_for(fremont).body
    assert "Nothing waits" in digest_for(floater).body


@override_settings(COORDINATOR_SCOPE="sites")
def test_under_site_scope_a_card_without_a_case_goes_to_the_coordinators_of_its_seat(desk):
    fremont, _ = desk
    van = Vanpool.objects.get(coordinator=fremont)
    seat = RiderFactory(vanpool=van)
    action = PendingActionFactory(kind="match_inbound", case=None, rider=seat, payload={})
    (digest,) = [d for d in build_digests(timezone.now()) if d.user == fremont]
    assert [card.pk for card in digest.cards] == [action.pk]
    assert digest.cards[0].vanpool_id == van.vanpool_id
