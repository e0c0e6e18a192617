"""Faults 36–40: who may get in, forged requests, framing, the deploy check and brute force.

36 authorisation: a logged-in outsider (neither staff nor in a group) and an
anonymous caller are refused on the dashboard, on a decision, in the admin and
on the API; a coordinator is refused what only auditors may do (admin edits,
the task queue, API writes, home street addresses).
37 CSRF: a session's POST without the token, or from a foreign origin, is
refused (403) and changes nothing; with the token the same POST goes through.
38 framing: every kind of page answers with X-Frame-Options DENY and CSP
frame-ancestors 'none', error pages included.
39 deploy check: `manage.py check --deploy` under production settings, in a
fresh process (settings load once per process), reports no issues.
40 brute force: failed logins lock the username from that address (a 429 page,
never a 500); the right password is refused until the cool-off has passed.
"""

import datetime as dt
from dataclasses import dataclass

import pytest
from axes.models import AccessAttempt
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cases.models import Case, PendingAction
from outreach.models import Message
from tests.factories import (
    CaseFactory,
    EmailThreadFactory,
    EmployeeFactory,
    PendingActionFactory,
    RiderFactory,
    VanpoolFactory,
)
from tests.qcluster_support import manage, process_env
from vanpools.models import Employee, Vanpool

pytestmark = pytest.mark.django_db

STREET = "12 Elm Street, Union City"
PASSWORD = "correct horse battery staple"  # every UserFactory user's
HTMX = {"HTTP_HX_REQUEST": "true"}


@dataclass
class Scene:
    """One vanpool under review: a rider, a case, its thread and a decision waiting."""

    vanpool: Vanpool
    case: Case
    action: PendingAction
    employee_id: str
    thread_id: str

    @property
    def ids(self) -> dict[str, object]:
        return {
            "action": self.action.pk,
            "case": self.case.case_id,
            "vanpool": self.vanpool.vanpool_id,
            "employee": self.employee_id,
            "thread": self.thread_id,
        }

    def decide_url(self) -> str:
        return f"/queue/{self.action.pk}/decide/"

    def approval(self) -> dict[str, str]:
        """The dashboard form that approves: the undecided check ruled a pass."""
        return {"decision": "approve", f"ruling_{self.employee_id}": "pass"}

    def api_approval(self) -> dict[str, object]:
        return {"edits": {"rulings": {self.employee_id: "pass"}}}

    def assert_undecided(self) -> None:
        self.action.refresh_from_db()
        self.case.refresh_from_db()
        assert self.action.status == PendingAction.Status.PENDING
        assert self.action.decided_by is None and self.action.decided_at is None
        assert self.case.status == Case.Status.HITL_REVIEW

    def assert_approved_by(self, user) -> None:
        self.action.refresh_from_db()
        self.case.refresh_from_db()
        assert self.action.status == PendingAction.Status.APPROVED
        assert self.action.decided_by == user
        assert (self.case.status, self.case.outcome) == (Case.Status.CLOSED, Case.Outcome.RESOLVED)


@pytest.fixture
def scene(db) -> Scene:
    employee = EmployeeFactory(home_address=STREET, home_lat=37.6, home_lng=-122.0)
    rider = RiderFactory(employee=employee)
    emp = employee.employee_id
    case = CaseFactory(
        vanpool=rider.vanpool,
        status=Case.Status.HITL_REVIEW,
        meta={"reason": "unknown", "failed_checks": [], "rider_flags": {emp: {"shift": "unknown"}}},
    )
    thread = EmailThreadFactory(case=case)
    action = PendingActionFactory(
        kind=PendingAction.Kind.DECIDE_VERIFICATION,
        case=case,
        payload={"checks": ["shift"], "riders": {emp: {"shift": "unknown"}}, "details": ""},
    )
    return Scene(rider.vanpool, case, action, emp, thread.thread_id)


def logged_in(user, client_class=Client, **kwargs) -> Client:
    client = client_class(**kwargs)
    client.force_login(user)
    return client


# --- 36: authorisation ---------------------------------------------------------------------

DASHBOARD_PAGES = [
    "/",
    "/queue/{action}/",
    "/queue/{action}/?step=confirm",
    "/cases/",
    "/cases/{case}/",
    "/program/",
    "/vanpools/",
    "/vanpools/{vanpool}/",
    "/employees/{employee}/",
]
ADMIN_PAGES = [
    "/admin/",
    "/admin/cases/pendingaction/",
    "/admin/cases/pendingaction/{action}/change/",
    "/admin/vanpools/employee/",
    "/admin/django_q/schedule/",
]
API_READS = [
    "/api/pending-actions",
    "/api/pending-actions/{action}",
    "/api/cases",
    "/api/cases/{case}",
    "/api/cases/{case}/emails",
    "/api/vanpools",
    "/api/vanpools/{vanpool}/riders",
    "/api/employees/{employee}",
    "/api/emails/threads/{thread}",
    "/api/schema/",
]


@pytest.mark.parametrize("page", DASHBOARD_PAGES)
def test_fault_36_an_outsider_is_refused_every_dashboard_page(scene, outsider, page):
    response = logged_in(outsider).get(page.format(**scene.ids))

    assert response.status_code == 403
    assert scene.case.case_id.encode() not in response.content


def test_fault_36_an_outsider_cannot_approve_a_pending_action(scene, outsider):
    dashboard = logged_in(outsider)
    assert dashboard.post(scene.decide_url(), scene.approval()).status_code == 403
    assert dashboard.post(scene.decide_url(), scene.approval(), **HTMX).status_code == 403
    ask = {"question": "Who rides this van?"}
    assert dashboard.post(f"/cases/{scene.case.case_id}/ask/", ask).status_code == 403

    api = logged_in(outsider, APIClient)
    url = f"/api/pending-actions/{scene.action.pk}"
    assert api.post(f"{url}/approve", scene.api_approval(), format="json").status_code == 403
    assert api.post(f"{url}/reject", {"note": "no"}, format="json").status_code == 403

    scene.assert_undecided()


@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_fault_36_an_outsider_is_sent_to_the_admin_login_and_shown_nothing(scene, outsider, page):
    response = logged_in(outsider).get(page.format(**scene.ids))

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/?next=")


def test_fault_36_an_outsider_cannot_change_a_record_through_the_admin(scene, outsider):
    url = f"/admin/vanpools/vanpool/{scene.vanpool.pk}/change/"

    response = logged_in(outsider).post(url, {"name": "Hijacked van", "_save": "Save"})

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
    scene.vanpool.refresh_from_db()
    assert scene.vanpool.name != "Hijacked van"


@pytest.mark.parametrize("path", API_READS)
def test_fault_36_an_outsider_is_refused_by_the_api_with_a_session_or_a_token(
    scene, outsider, path
):
    url = path.format(**scene.ids)
    by_token = APIClient()
    by_token.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=outsider).key}")

    for client in (logged_in(outsider, APIClient), by_token):
        response = client.get(url)
        assert response.status_code == 403, url
        assert scene.case.case_id not in response.content.decode()


def test_fault_36_an_outsider_cannot_write_through_the_api(scene, outsider):
    api = logged_in(outsider, APIClient)
    other = VanpoolFactory()
    opened = {"vanpool": other.vanpool_id, "reason": "unknown"}
    case_url = f"/api/cases/{scene.case.case_id}"

    assert api.post("/api/cases", opened, format="json").status_code == 403
    assert api.patch(case_url, {"status": "open"}, format="json").status_code == 403
    assert api.post(f"/api/vanpools/{other.vanpool_id}/audit").status_code == 403

    assert not Case.objects.filter(vanpool=other).exists()
    scene.assert_undecided()


@pytest.mark.parametrize("page", DASHBOARD_PAGES)
def test_fault_36_an_anonymous_visitor_is_sent_to_the_login_page(scene, client, page):
    response = client.get(page.format(**scene.ids))

    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_fault_36_an_anonymous_decision_is_sent_to_the_login_page_and_changes_nothing(
    scene, client
):
    for extra in ({}, HTMX):
        response = client.post(scene.decide_url(), scene.approval(), **extra)
        assert response.status_code == 302
        assert response["Location"].startswith("/login/?next=")

    scene.assert_undecided()


@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_fault_36_an_anonymous_visitor_is_sent_to_the_admin_login(scene, client, page):
    response = client.get(page.format(**scene.ids))

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/?next=")


@pytest.mark.parametrize("path", API_READS)
def test_fault_36_an_anonymous_api_caller_gets_401_with_the_way_in(scene, path):
    response = APIClient().get(path.format(**scene.ids))

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert b"not_authenticated" in response.content  # JSON, or YAML for the schema


def test_fault_36_an_anonymous_api_write_is_401_and_changes_nothing(scene):
    api = APIClient()
    url = f"/api/pending-actions/{scene.action.pk}/approve"

    assert api.post(url, scene.api_approval(), format="json").status_code == 401
    assert api.post("/api/cases", {"vanpool": scene.vanpool.vanpool_id}).status_code == 401
    for docs in ("/api/docs/", "/api/redoc/"):
        response = api.get(docs)
        assert response.status_code == 302 and response["Location"].startswith("/login/")

    scene.assert_undecided()


@pytest.mark.parametrize(
    "page",
    [
        "/admin/vanpools/vanpool/add/",
        "/admin/vanpools/employee/add/",
        "/admin/cases/pendingaction/add/",
        "/admin/django_q/schedule/",  # the queue itself is listed only with the ORM broker
        "/admin/django_q/failure/",
    ],
)
def test_fault_36_a_coordinator_is_refused_the_admin_pages_only_auditors_have(
    coordinator, auditor, page
):
    assert logged_in(coordinator).get(page).status_code == 403
    assert logged_in(auditor).get(page).status_code == 200


def test_fault_36_a_coordinator_cannot_edit_a_record_in_the_read_only_admin(scene, coordinator):
    url = f"/admin/vanpools/vanpool/{scene.vanpool.pk}/change/"
    admin = logged_in(coordinator)

    page = admin.get(url)
    response = admin.post(url, {"name": "Renamed by a coordinator", "_save": "Save"})

    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert response.status_code == 403
    scene.vanpool.refresh_from_db()
    assert scene.vanpool.name != "Renamed by a coordinator"


def test_fault_36_a_coordinator_cannot_write_through_the_api_but_an_auditor_can(
    scene, coordinator, auditor
):
    coordinator_api = logged_in(coordinator, APIClient)
    other = VanpoolFactory()
    opened = {"vanpool": other.vanpool_id, "reason": "unknown"}
    message = {"employee_id": scene.employee_id, "text": "Could you confirm your shift?"}
    thread_url = f"/api/emails/threads/{scene.thread_id}/messages"
    case_url = f"/api/cases/{scene.case.case_id}"
    outbound = Message.objects.filter(direction=Message.Direction.OUTBOUND)

    assert coordinator_api.post("/api/cases", opened, format="json").status_code == 403
    assert coordinator_api.patch(case_url, {"status": "open"}, format="json").status_code == 403
    assert coordinator_api.post(f"/api/vanpools/{other.vanpool_id}/audit").status_code == 403
    assert coordinator_api.post(thread_url, message, format="json").status_code == 403

    assert not Case.objects.filter(vanpool=other).exists()
    assert not outbound.exists()
    scene.assert_undecided()
    opened_by_auditor = logged_in(auditor, APIClient).post("/api/cases", opened, format="json")
    assert opened_by_auditor.status_code == 201


def test_fault_36_a_coordinator_never_sees_a_home_street_address_an_auditor_does(
    scene, coordinator, auditor
):
    page = f"/employees/{scene.employee_id}/"
    api = f"/api/employees/{scene.employee_id}"

    assert STREET not in logged_in(coordinator).get(page).content.decode()
    body = logged_in(coordinator, APIClient).get(api).json()
    assert (body["home_address"], body["home"]) == (None, None)

    assert STREET in logged_in(auditor).get(page).content.decode()
    assert logged_in(auditor, APIClient).get(api).json()["home_address"] == STREET


def test_fault_36_the_admin_hides_the_street_and_coordinates_from_a_coordinator_too(
    scene, coordinator, auditor
):
    employee = Employee.objects.get(employee_id=scene.employee_id)
    change = f"/admin/vanpools/employee/{employee.pk}/change/"

    as_coordinator = logged_in(coordinator).get(change)

    assert as_coordinator.status_code == 200
    html = as_coordinator.content.decode()
    assert STREET not in html and "home_lat" not in html and "home_lng" not in html
    assert employee.home_zip in html  # what an audit needs stays
    assert STREET in logged_in(auditor).get(change).content.decode()


# --- 37: CSRF ------------------------------------------------------------------------------


def csrf_token(client: Client) -> str:
    """The token a real page hands the browser (the queue renders it for htmx)."""
    assert client.get("/").status_code == 200
    return client.cookies["csrftoken"].value


def test_fault_37_an_approval_without_the_csrf_token_is_403_and_changes_nothing(scene, coordinator):
    browser = logged_in(coordinator, enforce_csrf_checks=True)

    plain = browser.post(scene.decide_url(), scene.approval())
    htmx = browser.post(scene.decide_url(), scene.approval(), **HTMX)
    wrong = browser.post(scene.decide_url(), scene.approval(), HTTP_X_CSRFTOKEN="x" * 64)

    assert plain.status_code == htmx.status_code == wrong.status_code == 403
    scene.assert_undecided()
    # The same approval with the page's token goes through: the token was all it lacked.
    token = csrf_token(browser)
    response = browser.post(scene.decide_url(), scene.approval(), HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 302
    scene.assert_approved_by(coordinator)


def test_fault_37_an_approval_from_a_foreign_origin_is_403_even_with_the_token(scene, coordinator):
    browser = logged_in(coordinator, enforce_csrf_checks=True)
    token = csrf_token(browser)

    response = browser.post(
        scene.decide_url(),
        scene.approval(),
        HTTP_X_CSRFTOKEN=token,
        HTTP_ORIGIN="https://evil.example",
    )

    assert response.status_code == 403
    scene.assert_undecided()


def test_fault_37_an_api_write_on_a_session_without_the_csrf_token_is_403(
    scene, coordinator, auditor
):
    approve_url = f"/api/pending-actions/{scene.action.pk}/approve"
    coordinator_api = logged_in(coordinator, APIClient, enforce_csrf_checks=True)
    auditor_api = logged_in(auditor, APIClient, enforce_csrf_checks=True)
    other = VanpoolFactory()

    approval = coordinator_api.post(approve_url, scene.api_approval(), format="json")
    opening = auditor_api.post(
        "/api/cases", {"vanpool": other.vanpool_id, "reason": "unknown"}, format="json"
    )

    for response in (approval, opening):
        assert response.status_code == 403
        assert "CSRF" in response.json()["error"]["message"]
    scene.assert_undecided()
    assert not Case.objects.filter(vanpool=other).exists()
    # With the session's token the approval is accepted.
    token = csrf_token(coordinator_api)
    accepted = coordinator_api.post(
        approve_url, scene.api_approval(), format="json", HTTP_X_CSRFTOKEN=token
    )
    assert accepted.status_code == 200
    scene.assert_approved_by(coordinator)


def test_fault_37_the_login_form_needs_the_csrf_token(coordinator):
    browser = Client(enforce_csrf_checks=True)

    response = browser.post("/login/", {"username": "coordinator", "password": PASSWORD})

    assert response.status_code == 403
    assert "_auth_user_id" not in browser.session


# --- 38: framing ---------------------------------------------------------------------------

FRAMED = [
    pytest.param(None, "/login/", 200, id="login page"),
    pytest.param(None, "/admin/login/", 200, id="admin login"),
    pytest.param(None, "/api/", 200, id="API index"),
    pytest.param(None, "/api/cases", 401, id="API refusal"),
    pytest.param(None, "/", 302, id="redirect to login"),
    pytest.param("coordinator", "/", 200, id="review queue"),
    pytest.param("coordinator", "/queue/{action}/", 200, id="queue card"),
    pytest.param("coordinator", "/cases/{case}/", 200, id="case page"),
    pytest.param("coordinator", "/api/pending-actions", 200, id="API JSON"),
    pytest.param("coordinator", "/api/docs/", 200, id="Swagger UI"),
    pytest.param("coordinator", "/api/redoc/", 200, id="Redoc"),
    pytest.param("coordinator", "/no/such/page/", 404, id="not found"),
    pytest.param("auditor", "/admin/", 200, id="admin index"),
    pytest.param("auditor", "/admin/cases/pendingaction/{action}/change/", 200, id="admin form"),
    pytest.param("outsider", "/", 403, id="dashboard refusal"),
]


def assert_unframeable(response) -> None:
    assert response["X-Frame-Options"] == "DENY"
    directives = {part.strip() for part in response["Content-Security-Policy"].split(";")}
    assert "frame-ancestors 'none'" in directives
    assert not response.has_header("Content-Security-Policy-Report-Only")


@pytest.mark.parametrize(("role", "page", "status"), FRAMED)
def test_fault_38_pages_refuse_to_be_framed(scene, request, role, page, status):
    client = Client() if role is None else logged_in(request.getfixturevalue(role))

    response = client.get(page.format(**scene.ids))

    assert response.status_code == status
    assert_unframeable(response)


# --- 39: the deploy check ------------------------------------------------------------------


@pytest.mark.slow_process
def test_fault_39_the_deploy_check_passes_under_production_settings(migrated_var_dir):
    env = process_env(
        migrated_var_dir,
        PRODUCTION="true",
        DEBUG="false",
        SECRET_KEY="fault-suite-" + "s3cr3t-" * 8,
        ALLOWED_HOSTS="pool.example",
        WEBHOOK_SECRET="esp:" + "w" * 32,
    )
    # Nothing from the caller's environment may weaken what production turns on.
    env = {name: value for name, value in env.items() if not name.startswith("SECURE_")}

    out = manage(env, "check", "--deploy", "--database", "default", "--fail-level", "DEBUG")

    assert out == "System check identified no issues (0 silenced)."


# --- 40: brute force -----------------------------------------------------------------------


def fail_until_locked(client: Client, limit: int, url: str = "/login/", **extra: str) -> None:
    """``limit`` wrong passwords: the last one locks, none is a server error."""
    for attempt in range(1, limit + 1):
        response = client.post(url, {"username": "coordinator", "password": "wrong"}, **extra)
        assert response.status_code == (429 if attempt == limit else 200), attempt


def assert_locked_out(response, client: Client) -> None:
    assert response.status_code == 429
    assert b"Too many failed logins" in response.content
    assert "_auth_user_id" not in client.session
    assert_unframeable(response)


def test_fault_40_failed_logins_lock_the_account_and_the_right_password_is_refused(
    client, coordinator, settings, _frozen_time
):
    fail_until_locked(client, settings.AXES_FAILURE_LIMIT)

    right = client.post("/login/", {"username": "coordinator", "password": PASSWORD})
    assert_locked_out(right, client)
    # Another browser from the same address fares no better, nor does the admin's login.
    elsewhere = Client()
    admin = elsewhere.post(
        "/admin/login/?next=/admin/", {"username": "coordinator", "password": PASSWORD}
    )
    assert_locked_out(admin, elsewhere)
    # Once the cool-off has passed the right password works again.
    _frozen_time.shift(settings.AXES_COOLOFF_TIME + dt.timedelta(seconds=1))
    after = client.post("/login/", {"username": "coordinator", "password": PASSWORD})
    assert after.status_code == 302
    assert client.session["_auth_user_id"] == str(coordinator.pk)


def test_fault_40_failures_on_the_admin_login_lock_the_dashboard_login_too(
    client, coordinator, settings
):
    fail_until_locked(client, settings.AXES_FAILURE_LIMIT, url="/admin/login/?next=/admin/")

    response = client.post("/login/", {"username": "coordinator", "password": PASSWORD})

    assert_locked_out(response, client)


def test_fault_40_a_forged_forwarded_for_header_does_not_dodge_the_lockout(
    client, coordinator, settings
):
    for attempt in range(1, settings.AXES_FAILURE_LIMIT + 1):
        client.post(
            "/login/",
            {"username": "coordinator", "password": "wrong"},
            HTTP_X_FORWARDED_FOR=f"81.2.69.{attempt}",
        )

    response = client.post(
        "/login/",
        {"username": "coordinator", "password": PASSWORD},
        HTTP_X_FORWARDED_FOR="81.2.69.200",
    )

    assert_locked_out(response, client)


def test_fault_40_an_unknown_username_is_locked_out_alike_so_none_is_revealed(client, settings):
    answers = [
        client.post("/login/", {"username": "no-such-user", "password": "guess"}).status_code
        for _ in range(settings.AXES_FAILURE_LIMIT + 1)
    ]

    assert answers == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429, 429]


def test_fault_40_an_auditor_clears_a_lockout_in_the_admin_and_a_coordinator_cannot(
    client, coordinator, auditor, settings
):
    fail_until_locked(client, settings.AXES_FAILURE_LIMIT)
    attempt = AccessAttempt.objects.get(username="coordinator")
    assert logged_in(coordinator).get("/admin/axes/accessattempt/").status_code == 403

    desk = logged_in(auditor)
    assert desk.get("/admin/axes/accessattempt/").status_code == 200
    cleared = desk.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"})

    assert cleared.status_code == 302
    again = client.post("/login/", {"username": "coordinator", "password": PASSWORD})
    assert again.status_code == 302 and "_auth_user_id" in client.session
