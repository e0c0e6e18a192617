"""The review desk on the queue: due chips, claims, deciding a held card, reasons, query counts."""

import datetime as dt
import re

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from cases.kinds import PAYLOADS
from cases.models import Case, PendingAction
from tests.factories import CaseFactory, PendingActionFactory, UserFactory, VanpoolFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def waiting(kind="match_inbound", *, hours_ago=0):
    action = PendingActionFactory(
        kind=kind,
        case=CaseFactory(vanpool=VanpoolFactory(), status=Case.Status.HITL_REVIEW),
        payload=PAYLOADS[0].sample("EMP-1").stored() if kind == PAYLOADS[0].kind else {},
    )
    PendingAction.objects.filter(pk=action.pk).update(
        created_at=timezone.now() - dt.timedelta(hours=hours_ago)
    )
    return PendingAction.objects.get(pk=action.pk)


def card_html(html, action):
    found = re.search(rf'<article[^>]*id="action-{action.pk}".*?</article>', html, re.S)
    assert found, f"no card for action {action.pk}"
    return found.group(0)


def test_each_card_shows_its_age_and_when_it_is_due_or_how_long_overdue(client, coordinator):
    client.force_login(coordinator)
    fresh = waiting("match_inbound", hours_ago=5)  # SLA 48 h
    late = waiting("match_inbound", hours_ago=50)
    html = client.get(reverse("review-queue")).content.decode()
    assert "due in 1 d 19 h" in card_html(html, fresh)
    assert "waiting" in card_html(html, fresh)
    assert "overdue 2 h" in card_html(html, late)
    assert "chip-overdue" in card_html(html, late)
    assert "1 overdue" in html  # the kind's chip counts it


@override_settings(REVIEW_SLA_HOURS={"match_inbound": 4})
def test_the_sla_setting_overrides_a_kinds_own(client, coordinator):
    client.force_login(coordinator)
    action = waiting("match_inbound", hours_ago=5)
    assert "overdue 1 h" in card_html(client.get(reverse("review-queue")).content.decode(), action)


def test_a_reviewer_claims_a_card_and_others_see_who_holds_it(client, coordinator):
    action = waiting()
    client.force_login(coordinator)
    response = client.post(reverse("action-claim", args=[action.pk]), **HTMX)
    assert response.status_code == 200
    assert "You are on it" in response.content.decode()

    other = UserFactory(username="other", is_staff=True, groups=["Coordinators"])
    client.force_login(other)
    html = card_html(client.get(reverse("review-queue")).content.decode(), action)
    assert "coordinator is on it" in html
    assert "I’m on it" not in html
    refused = client.post(reverse("action-claim", args=[action.pk]), **HTMX)
    assert refused.status_code == 409
    assert "coordinator is on this card" in refused.content.decode()
    assert PendingAction.objects.get(pk=action.pk).claimed_by == coordinator


def test_deciding_a_card_someone_else_holds_asks_first(client, coordinator):
    action = waiting()
    client.force_login(coordinator)
    client.post(reverse("action-claim", args=[action.pk]), **HTMX)
    other = UserFactory(username="other", is_staff=True, groups=["Coordinators"])
    client.force_login(other)
    decide = reverse("action-decide", args=[action.pk])
    asked = client.post(decide, {"decision": "reject", "reason": "unrelated"}, **HTMX)
    assert asked.status_code == 409
    assert "decide anyway" in asked.content.decode()
    assert PendingAction.objects.get(pk=action.pk).status == "pending"
    done = client.post(
        decide, {"decision": "reject", "reason": "unrelated", "over_claim": "on"}, **HTMX
    )
    assert done.status_code == 200
    decided = PendingAction.objects.get(pk=action.pk)
    assert (decided.status, decided.reason, decided.decided_by) == ("rejected", "unrelated", other)
    assert "Not about any case" in done.content.decode()  # the reason, as its list words it


def test_a_reason_from_another_kinds_list_is_refused_on_the_card(client, coordinator):
    action = waiting()
    client.force_login(coordinator)
    response = client.post(
        reverse("action-decide", args=[action.pk]),
        {"decision": "reject", "reason": "record_fixed"},
        **HTMX,
    )
    assert response.status_code == 422
    assert "Pick one of the listed reasons" in response.content.decode()
    assert PendingAction.objects.get(pk=action.pk).status == "pending"


def test_the_card_offers_its_kinds_reasons(client, coordinator):
    action = waiting()
    client.force_login(coordinator)
    html = card_html(client.get(reverse("review-queue")).content.decode(), action)
    assert 'value="same_sender"' in html and 'value="unrelated"' in html
    assert 'value="record_fixed"' not in html


def test_the_queue_reads_a_fixed_number_of_queries_however_many_cards_wait(
    client, coordinator, django_assert_max_num_queries
):
    """Age, due, holder and first approval are joined or computed: 3 cards cost what 20 do."""
    client.force_login(coordinator)
    claimer = UserFactory(username="claimer", is_staff=True, groups=["Coordinators"])

    def fill(count):
        for n in range(count):
            action = waiting(PAYLOADS[n % len(PAYLOADS)].kind, hours_ago=n * 7)
            PendingAction.objects.filter(pk=action.pk).update(
                claimed_by=claimer, claimed_at=timezone.now(), first_approved_by=claimer
            )

    fill(len(PAYLOADS))
    with django_assert_max_num_queries(100) as few:
        assert client.get(reverse("review-queue")).status_code == 200
    fill(20 - len(PAYLOADS))
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert client.get(reverse("review-queue")).status_code == 200
