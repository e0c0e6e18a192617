"""Who may call each API endpoint: one table, method × path × role → status."""

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cases.models import PendingAction
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

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db):
    """One of everything, with the identifiers the paths below use."""
    vanpool = VanpoolFactory(vanpool_id="VP-101")
    VanpoolFactory(vanpool_id="VP-102")  # no case yet: POST /api/cases opens one here
    employee = EmployeeFactory(employee_id="EMP-1001")
    RiderFactory(vanpool=vanpool, employee=employee)
    case = CaseFactory(vanpool=vanpool, case_id="CASE-0000000A")
    thread = EmailThreadFactory(case=case, thread_id="THREAD-0000000A")
    MessageFactory(thread=thread, employee=employee)
    PendingActionFactory(
        pk=7,
        kind=PendingAction.Kind.REVIEW_EMAIL,
        case=case,
        payload={"subject": "About your seat", "text": "Thanks.", "employee_id": "EMP-1001"},
    )


ANON, OUTSIDER, COORD, AUDITOR = "anonymous", "outsider", "coordinator", "auditor"
READ = {ANON: 401, OUTSIDER: 403, COORD: 200, AUDITOR: 200}


def write(ok: int, coordinator: int = 403) -> dict[str, int]:
    return {ANON: 401, OUTSIDER: 403, COORD: coordinator, AUDITOR: ok}


ENDPOINTS = [
    ("get", "/api/vanpools", None, READ),
    ("get", "/api/vanpools/VP-101", None, READ),
    ("get", "/api/vanpools/VP-101/riders", None, READ),
    ("post", "/api/vanpools/VP-101/audit", None, write(202)),
    ("get", "/api/employees", None, READ),
    ("get", "/api/employees/EMP-1001", None, READ),
    ("get", "/api/employees/EMP-1001/shifts", None, READ),
    ("get", "/api/cases", None, READ),
    ("get", "/api/cases/CASE-0000000A", None, READ),
    ("post", "/api/cases", {"vanpool": "VP-102", "reason": "unknown"}, write(201)),
    ("patch", "/api/cases/CASE-0000000A", {"status": "hitl_review"}, write(200)),
    ("get", "/api/cases/CASE-0000000A/emails", None, READ),
    ("get", "/api/emails/threads", None, READ),
    ("get", "/api/emails/threads/THREAD-0000000A", None, READ),
    (
        "post",
        "/api/emails/threads/THREAD-0000000A/messages",
        {"employee_id": "EMP-1001", "text": "Could you confirm your shift?"},
        write(201),
    ),
    ("get", "/api/pending-actions", None, READ),
    ("get", "/api/pending-actions/7", None, READ),
    # Coordinators work the review queue: deciding is theirs too.
    ("post", "/api/pending-actions/7/approve", {}, write(200, coordinator=200)),
    ("post", "/api/pending-actions/7/reject", {"note": "not needed"}, write(200, coordinator=200)),
    ("get", "/api/schema/", None, READ),
    # The docs pages are for people: not logged in → the login page.
    ("get", "/api/docs/", None, {**READ, ANON: 302}),
    ("get", "/api/redoc/", None, {**READ, ANON: 302}),
]

TABLE = [
    pytest.param(method, path, body, role, expected[role], id=f"{method} {path} {role}")
    for method, path, body, expected in ENDPOINTS
    for role in (ANON, OUTSIDER, COORD, AUDITOR)
]


@pytest.mark.parametrize(("method", "path", "body", "role", "status"), TABLE)
def test_the_permission_table(world, request, method, path, body, role, status):
    client = APIClient()
    if role != ANON:
        client.force_login(request.getfixturevalue(role))
    response = getattr(client, method)(path, body, format="json")
    assert response.status_code == status, response.content[:300]


def test_the_table_covers_every_operation_in_the_schema():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    documented = {
        (method, path) for path, operations in schema["paths"].items() for method in operations
    }
    names = {
        "VP-101": "{vanpool_id}",
        "EMP-1001": "{employee_id}",
        "CASE-0000000A": "{case_id}",
        "THREAD-0000000A": "{thread_id}",
        "/7": "/{id}",
    }
    tabled = set()
    for method, path, _, _ in ENDPOINTS:
        for concrete, template in names.items():
            path = path.replace(concrete, template)
        tabled.add((method, path))
    docs = {("get", "/api/schema/"), ("get", "/api/docs/"), ("get", "/api/redoc/")}
    assert tabled - docs == documented


def test_a_token_authenticates_and_a_bad_one_is_refused(world, auditor):
    token = Token.objects.create(user=auditor)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/vanpools").status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = client.get("/api/vanpools")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_anonymous_callers_are_told_how_to_authenticate(world):
    response = APIClient().get("/api/cases")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {
        "error": {
            "code": "not_authenticated",
            "message": "Authentication credentials were not provided.",
        }
    }


def test_a_session_write_needs_the_csrf_token(world, auditor):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(auditor)
    response = client.post("/api/vanpools/VP-101/audit")
    assert response.status_code == 403
    assert "CSRF" in response.json()["error"]["message"]


def test_a_token_write_needs_no_csrf_token(world, auditor):
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=auditor).key}")
    assert client.post("/api/vanpools/VP-101/audit").status_code == 202


def test_an_inactive_staff_user_is_refused_even_with_a_token(world):
    user = UserFactory(username="gone", is_staff=True, is_active=False, groups=["Auditors"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert client.get("/api/vanpools").status_code == 401


def test_staff_without_any_group_are_refused(world):
    client = APIClient()
    client.force_login(UserFactory(username="bare", is_staff=True))
    assert client.get("/api/vanpools").status_code == 403
    assert client.get("/api/schema/").status_code == 200  # the schema is for any staff
