"""/api/ answers with an index of what the API serves, not a 404."""

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def test_the_api_root_lists_every_resource_and_its_documentation():
    response = APIClient().get("/api/")
    assert response.status_code == 200
    body = response.json()
    assert set(body["resources"]) == {
        "vanpools",
        "employees",
        "cases",
        "email_threads",
        "pending_actions",
    }
    assert body["resources"]["cases"]["href"] == "http://testserver/api/cases"
    assert body["documentation"]["schema"]["href"] == "http://testserver/api/schema/"
