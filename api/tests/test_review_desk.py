"""The review desk through the API: four-eyes, a card another holds, reasons kept."""

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from cases import desk
from cases.models import PendingAction
from tests.factories import (
    CaseFactory,
    EmailThreadFactory,
    PendingActionFactory,
    RiderFactory,
    UserFactory,
    VanpoolFactory,
)
from vanpools.models import Rider

pytestmark = pytest.mark.django_db
OVERRIDE = {"override": True, "override_reason": "HR confirmed the move"}


def client_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def cancellation():
    case = CaseFactory(status="pre_cancel", vanpool=VanpoolFactory())
    EmailThreadFactory(case=case)
    rider = RiderFactory(vanpool=case.vanpool)
    return PendingActionFactory(case=case, rider=rider, payload={"failed_checks": ["location"]})


def approve(client, action, **body):
    return client.post(
        f"/api/pending-actions/{action.pk}/approve", {"edits": OVERRIDE, **body}, format="json"
    )


@override_settings(CANCELLATION_APPROVALS=2)
def test_four_eyes_through_the_api_the_second_approval_comes_from_another_person(
    auditor, cancellation
):
    other = UserFactory(username="auditor2", is_staff=True, groups=["Auditors"])
    first = approve(client_for(auditor), cancellation, reason="still_fails")
    assert first.status_code == 200, first.content[:300]
    assert (first.json()["status"], first.json()["first_approved_by"]) == ("pending", "auditor")
    assert Rider.objects.get(pk=cancellation.rider_id).status == Rider.Status.ACTIVE

    again = approve(client_for(auditor), cancellation)
    assert again.status_code == 400
    assert "another person" in again.content.decode()

    second = approve(client_for(other), cancellation, reason="still_fails")
    assert second.status_code == 200
    assert (second.json()["status"], second.json()["reason"]) == ("approved", "still_fails")
    assert Rider.objects.get(pk=cancellation.rider_id).status == Rider.Status.CANCELLED


def test_a_card_another_holds_is_a_conflict_until_over_claim(auditor, coordinator, cancellation):
    desk.claim(cancellation.pk, coordinator)
    refused = approve(client_for(auditor), cancellation)
    assert refused.status_code == 409
    assert "coordinator is on this card" in refused.content.decode()
    assert PendingAction.objects.get(pk=cancellation.pk).status == "pending"
    assert approve(client_for(auditor), cancellation, over_claim=True).status_code == 200


def test_a_reason_off_the_kinds_list_is_refused(auditor, cancellation):
    response = client_for(auditor).post(
        f"/api/pending-actions/{cancellation.pk}/reject",
        {"note": "x", "reason": "as_drafted"},
        format="json",
    )
    assert response.status_code == 400
    assert PendingAction.objects.get(pk=cancellation.pk).status == "pending"
