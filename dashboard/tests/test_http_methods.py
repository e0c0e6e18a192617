"""Each dashboard URL answers only the method it serves: any other gets 405, changes nothing."""

import pytest
from django.apps import apps
from django.urls import URLPattern, reverse

from dashboard.urls import urlpatterns
from tests.factories import EmployeeFactory, PendingActionFactory, RiderFactory

pytestmark = pytest.mark.django_db

# The one method each page serves; a new URL must be added here to pass.
SERVES = {
    "review-queue": "GET",
    "favicon": "GET",
    "action-card": "GET",
    "action-decide": "POST",
    "action-claim": "POST",
    "case-list": "GET",
    "case-detail": "GET",
    "case-ask": "POST",
    "program": "GET",
    "vanpool-list": "GET",
    "vanpool-detail": "GET",
    "employee-detail": "GET",
}
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
# What a decision or a question would send: a wrong method must not act on it.
BODY = {"decision": "approve", "confirm": "on", "note": "x", "question": "why?"}


def test_it_knows_the_method_of_every_dashboard_url():
    names = {p.name for p in urlpatterns if isinstance(p, URLPattern)}
    assert names == set(SERVES)


@pytest.fixture
def url_of(coordinator, client):
    client.force_login(coordinator)
    action = PendingActionFactory()
    rider = RiderFactory(vanpool=action.case.vanpool)
    values = {
        "pk": action.pk,
        "case_id": action.case.case_id,
        "vanpool_id": rider.vanpool.vanpool_id,
        "employee_id": EmployeeFactory().employee_id,
    }

    def url(name: str) -> str:
        pattern = next(p for p in urlpatterns if p.name == name)
        return reverse(name, kwargs={k: values[k] for k in pattern.pattern.converters})

    return url


def snapshot() -> dict[str, list[tuple]]:
    """Every row of every model, as stored: a wrong method must leave them all alone."""
    return {
        model._meta.label: sorted(map(repr, model.objects.values_list()))
        for model in apps.get_models()
        if model._meta.app_label not in {"sessions", "axes"}
    }


@pytest.mark.parametrize(
    ("name", "method"),
    [(name, method) for name, serves in SERVES.items() for method in METHODS if method != serves],
)
def test_a_wrong_method_gets_405_and_changes_nothing(client, url_of, name, method):
    url = url_of(name)
    before = snapshot()
    response = client.generic(method, url, BODY, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 405
    assert response["Allow"] == SERVES[name]
    assert snapshot() == before
