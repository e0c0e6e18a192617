"""The review desk: claims (race-safe, lapsing), deciding a held card, four-eyes, reasons."""

import datetime as dt
import threading

import pytest
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.db import connection
from django.test import override_settings

from caseloop import decisions
from caseloop.audits import audit_vanpool
from caseloop.decisions import AlreadyDecided, InvalidDecision
from caseloop.kinds import DECISIONS
from caseloop.kinds.base import OTHER
from caseloop.tests.test_loop import FAR_ZIP, NEAR_ZIP, pre_cancelled
from cases import desk
from cases.desk import HeldByAnother
from cases.kinds import PAYLOADS, CancelMembership
from cases.models import Case, CaseEvent, PendingAction
from tests.factories import (
    CaseFactory,
    EmployeeFactory,
    PendingActionFactory,
    RiderFactory,
    UserFactory,
    VanpoolFactory,
)
from vanpools.models import CoordinatorSite, Rider

pytestmark = pytest.mark.django_db
Status = Case.Status


@pytest.fixture
def van():
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=FAR_ZIP))
    return vanpool


@pytest.fixture
def cancellation(van, run, _frozen_time):
    """A real cancellation card: audit, outreach, no reply by the deadline, reviewed."""
    run(audit_vanpool, van.vanpool_id)
    pre_cancelled(Case.objects.get(vanpool=van), run, _frozen_time)
    return PendingAction.objects.get(kind=CancelMembership.kind, status="pending")


def staff(name):
    return UserFactory(username=name, is_staff=True, groups=["Coordinators"])


# --- Claims ---------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("reviewers", [2, 6])
def test_reviewers_claiming_one_card_at_once_leave_exactly_one_holding_it(reviewers):
    """Real threads, each on its own connection, released together by a barrier; five rounds."""
    users = [staff(f"rev{n}") for n in range(reviewers)]
    for _ in range(5):
        outcomes = claim_at_once(PendingActionFactory(kind="review_email"), users)
        held = [pk for outcome, pk in outcomes if outcome == "held"]
        assert len(outcomes) == reviewers
        assert len(held) == 1
        assert sum(outcome == "refused" for outcome, _ in outcomes) == reviewers - 1
        action = PendingAction.objects.filter(kind="review_email").latest("pk")
        assert action.claimed_by_id == held[0]


def claim_at_once(action, users):
    """Each user claims ``action`` from a thread of their own, released together."""
    start = threading.Barrier(len(users), timeout=10)
    outcomes: list[tuple[str, int]] = []
    lock = threading.Lock()

    def attempt(user):
        try:
            start.wait()
            desk.claim(action.pk, user)
            outcome = "held"
        except HeldByAnother:
            outcome = "refused"
        finally:
            connection.close()
        with lock:
            outcomes.append((outcome, user.pk))

    threads = [threading.Thread(target=attempt, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    return outcomes


@override_settings(REVIEW_CLAIM_MINUTES=30)
def test_a_claim_names_its_holder_and_lapses_after_the_setting(_frozen_time):
    alice, bob = staff("alice"), staff("bob")
    action = PendingActionFactory(kind="review_email")
    desk.claim(action.pk, alice)
    with pytest.raises(HeldByAnother, match="alice is on this card"):
        desk.claim(action.pk, bob)
    _frozen_time.shift(dt.timedelta(minutes=31))
    desk.claim(action.pk, bob)
    assert PendingAction.objects.get(pk=action.pk).claimed_by == bob


def test_letting_go_frees_the_card_and_only_the_holder_can():
    alice, bob = staff("alice"), staff("bob")
    action = PendingActionFactory(kind="review_email")
    desk.claim(action.pk, alice)
    assert desk.release(action.pk, bob) is False
    assert desk.release(action.pk, alice) is True
    desk.claim(action.pk, bob)


def test_a_decided_card_cannot_be_claimed():
    action = PendingActionFactory(kind="review_email")
    PendingAction.objects.filter(pk=action.pk).update(
        status="superseded", decided_at=action.created_at
    )
    with pytest.raises(desk.NotPending):
        desk.claim(action.pk, staff("alice"))


def test_deciding_a_card_another_holds_is_refused_until_the_decider_says_they_mean_it(
    cancellation,
):
    alice, bob = staff("alice"), staff("bob")
    desk.claim(cancellation.pk, alice)
    with pytest.raises(HeldByAnother):
        decisions.reject(cancellation, by=bob, note="lives near")
    assert PendingAction.objects.get(pk=cancellation.pk).status == "pending"
    decided = decisions.reject(cancellation, by=bob, note="lives near", over_claim=True)
    assert decided.status == "rejected"
    assert decided.decided_by == bob


def test_the_holder_decides_without_being_asked(cancellation):
    alice = staff("alice")
    desk.claim(cancellation.pk, alice)
    assert decisions.reject(cancellation, by=alice, note="lives near").status == "rejected"


# --- Four-eyes ------------------------------------------------------------------------------


@override_settings(CANCELLATION_APPROVALS=2)
def test_four_eyes_the_first_approval_waits_for_a_second_person(cancellation):
    alice, bob = staff("alice"), staff("bob")
    rider = cancellation.rider
    first = decisions.approve(
        cancellation, by=alice, note="record still fails", reason="still_fails"
    )
    assert first.status == "pending"
    assert first.first_approved_by == alice
    assert Rider.objects.get(pk=rider.pk).status == Rider.Status.ACTIVE
    assert CaseEvent.objects.filter(case=cancellation.case, data__first_approval=True).exists()

    with pytest.raises(InvalidDecision, match="another person"):
        decisions.approve(cancellation, by=alice, note="again")
    assert Rider.objects.get(pk=rider.pk).status == Rider.Status.ACTIVE

    second = decisions.approve(cancellation, by=bob, note="agreed", reason="still_fails")
    assert second.status == "approved"
    assert second.decided_by == bob
    assert Rider.objects.get(pk=rider.pk).status == Rider.Status.CANCELLED
    with pytest.raises(AlreadyDecided):
        decisions.approve(cancellation, by=staff("carol"), note="late")


@override_settings(CANCELLATION_APPROVALS=2)
def test_four_eyes_a_rejection_by_anyone_decides_at_once(cancellation):
    decisions.approve(cancellation, by=staff("alice"), note="fails")
    rejected = decisions.reject(cancellation, by=staff("bob"), note="exception", reason=OTHER)
    assert rejected.status == "rejected"
    assert rejected.reason == OTHER


def test_with_one_approval_configured_a_cancellation_is_decided_by_one_person(cancellation):
    approved = decisions.approve(cancellation, by=staff("alice"), note="fails")
    assert approved.status == "approved"
    assert approved.first_approved_by is None


@override_settings(CANCELLATION_APPROVALS=2)
def test_four_eyes_counts_only_cancellations():
    action = PendingActionFactory(
        kind="match_inbound",
        case=CaseFactory(status=Status.HITL_REVIEW),
        payload={},
    )
    assert DECISIONS[PAYLOADS[3]].approvals_needed() == 1
    assert decisions.reject(action, by=staff("alice")).status == "rejected"


# --- Reasons --------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda payload: payload.kind)
def test_every_kind_has_its_own_short_list_of_reasons_for_each_decision(payload):
    decision = DECISIONS[payload]
    for taken in ("approve", "reject"):
        listed = decision.reasons_for(taken)
        codes = [reason.code for reason in listed]
        assert len(codes) == len(set(codes)), "a code appears twice"
        assert codes[-1] == OTHER
        assert all(reason.decision == taken and reason.label for reason in listed)
        if taken == "approve" or not decision.rejection_refused:
            assert 2 <= len(listed) <= 8, "a short list, not none and not a catalogue"


def test_a_reason_from_another_list_is_refused_and_nothing_changes(cancellation):
    with pytest.raises(InvalidDecision, match="not a reason to approve"):
        decisions.approve(cancellation, by=staff("alice"), note="x", reason="record_fixed")
    with pytest.raises(InvalidDecision, match="needs a note"):
        decisions.reject(cancellation, by=staff("alice"), note=" ", reason=OTHER)
    assert PendingAction.objects.get(pk=cancellation.pk).status == "pending"


def test_the_reason_is_kept_with_the_decision(cancellation):
    decided = decisions.reject(cancellation, by=staff("alice"), note="", reason="record_fixed")
    assert decided.reason == "record_fixed"


@override_settings(REVIEW_SLA_HOURS={"cancel_membership": 6, "approve_everything": 1})
def test_an_sla_setting_naming_no_kind_stops_the_start_up():
    with pytest.raises(ImproperlyConfigured, match="approve_everything"):
        desk.check_sla_settings()


@override_settings(REVIEW_SLA_HOURS={"cancel_membership": 6})
def test_the_sla_setting_overrides_only_the_kinds_it_names():
    assert desk.sla("cancel_membership") == dt.timedelta(hours=6)
    assert desk.sla("review_email") == dt.timedelta(hours=24)


# --- Coordinators scoped to their sites (COORDINATOR_SCOPE=sites) ---------------------------


@override_settings(COORDINATOR_SCOPE="sites", CANCELLATION_APPROVALS=2)
def test_under_site_scope_a_card_of_another_vanpool_is_not_claimed_reasoned_or_approved(
    cancellation,
):
    """Nothing about the card changes: no claim, no first approval, no reason, no trail entry."""
    alice = staff("alice")
    events = CaseEvent.objects.filter(case=cancellation.case).count()
    with pytest.raises(PermissionDenied, match="not about a vanpool you coordinate"):
        desk.claim(cancellation.pk, alice)
    with pytest.raises(PermissionDenied, match="not about a vanpool you coordinate"):
        decisions.approve(cancellation, by=alice, note="fails", reason="still_fails")
    with pytest.raises(PermissionDenied, match="not about a vanpool you coordinate"):
        decisions.reject(cancellation, by=alice, note="", reason="record_fixed")
    card = PendingAction.objects.get(pk=cancellation.pk)
    assert (card.status, card.claimed_by, card.first_approved_by, card.reason) == (
        "pending",
        None,
        None,
        "",
    )
    assert CaseEvent.objects.filter(case=cancellation.case).count() == events


@override_settings(COORDINATOR_SCOPE="sites", CANCELLATION_APPROVALS=2)
def test_under_site_scope_the_coordinators_of_a_vanpool_claim_and_approve_its_cards(
    cancellation,
):
    """One names the vanpool as its coordinator, the other is given its site: four eyes."""
    alice, bob = staff("alice"), staff("bob")
    van = cancellation.case.vanpool
    van.coordinator = alice
    van.save()
    CoordinatorSite.objects.create(user=bob, work_site=van.work_site)
    desk.claim(cancellation.pk, alice)
    first = decisions.approve(cancellation, by=alice, note="fails", reason="still_fails")
    assert (first.status, first.first_approved_by) == ("pending", alice)
    second = decisions.approve(
        cancellation, by=bob, note="agreed", reason="still_fails", over_claim=True
    )
    assert (second.status, second.reason) == ("approved", "still_fails")
