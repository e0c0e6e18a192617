"""COORDINATOR_SCOPE=sites: every route, one table (route, role, in or out of scope → status).

The coordinator coordinates VP-101 (the vanpool names them) and every vanpool
at Andover DC (a CoordinatorSite row): VP-301. VP-201, at Columbus DC, is
someone else's. Everything of VP-201 must answer as an unknown ID does (404),
be left out of every list, and no filter, lookup or choice list may name it.
"""

import csv
import datetime as dt
import io
import json
import re

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.core.management.color import no_style
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from rest_framework.test import APIClient

from cases.models import CaseLesson, CaseReview, PendingAction
from tests.factories import (
    AgentRunFactory,
    CaseEventFactory,
    CaseFactory,
    EmailThreadFactory,
    EmployeeFactory,
    LeaveFactory,
    MessageFactory,
    PendingActionFactory,
    RiderFactory,
    UserFactory,
    VanpoolFactory,
    VerificationFactory,
)
from vanpools.models import (
    BadgeSwipe,
    CoordinatorSite,
    Employee,
    ParkingPermit,
    RideDay,
    Trip,
    VanpoolMonth,
)
from vanpools.scope import (
    VANPOOL_PATHS,
    coordinated_vanpools,
    is_scoped,
    vanpool_of,
    vanpools_for,
)

pytestmark = pytest.mark.django_db

IN, OUT = "in", "out"
COORD, AUDITOR = "coordinator", "auditor"
SITES = {"VP-101": "Fremont Campus", "VP-301": "Andover DC", "VP-201": "Columbus DC"}
# The three vanpools' records, numbered so that their IDs say whose they are.
NUMBERS = {"VP-101": 1, "VP-301": 3, "VP-201": 2}


@pytest.fixture(autouse=True)
def _scoped(settings):
    settings.COORDINATOR_SCOPE = "sites"


@pytest.fixture
def world(coordinator, auditor):
    """Each vanpool with a rider, leave, a case and everything a case has."""
    other = UserFactory(username="other-coordinator", is_staff=True, groups=["Coordinators"])
    CoordinatorSite.objects.create(user=coordinator, work_site="Andover DC")
    made = {}
    for vanpool_id, site in SITES.items():
        n = NUMBERS[vanpool_id]
        owner = coordinator if vanpool_id == "VP-101" else other
        van = VanpoolFactory(vanpool_id=vanpool_id, work_site=site, coordinator=owner)
        employee = EmployeeFactory(employee_id=f"EMP-{n}000", home_address=f"{n} Elm St")
        seat = RiderFactory(vanpool=van, employee=employee)
        LeaveFactory(employee=employee)
        case = CaseFactory(
            vanpool=van,
            case_id=f"CASE-0000000{n}",
            meta={"reason": "location_mismatch", "rider_flags": {employee.employee_id: {}}},
        )
        VerificationFactory(case=case)
        CaseEventFactory(case=case)
        thread = EmailThreadFactory(case=case, thread_id=f"THREAD-0000000{n}")
        message = MessageFactory(thread=thread, employee=employee)
        action = PendingActionFactory(
            pk=n,
            kind=PendingAction.Kind.REVIEW_EMAIL,
            case=case,
            payload={
                "subject": "About your seat",
                "text": "Thanks.",
                "employee_id": employee.employee_id,
            },
        )
        AgentRunFactory(case=case, vanpool=van)
        the_day = dt.date(2026, 10, 5)
        Trip.objects.create(
            vanpool=van, date=the_day, trip_ref=f"T-{n}", driver=employee, passengers=5
        )
        RideDay.objects.create(
            employee=employee, vanpool=van, date=the_day, source="trip", ref=f"T-{n}"
        )
        BadgeSwipe.objects.create(employee=employee, date=the_day, time=dt.time(7, 55), site=site)
        ParkingPermit.objects.create(
            permit_id=f"P-{n}", employee=employee, lot="North", valid_from=the_day
        )
        VanpoolMonth.objects.create(vanpool=van, month=the_day.replace(day=1), vehicle_miles=900)
        CaseReview.objects.create(
            case=case, score=80, passed=True, justification="adequate", backend="rules"
        )
        CaseLesson.objects.create(
            case=case, reason="location_mismatch", site=site, outcome="dismissed", sentence="."
        )
        made[vanpool_id] = {
            "vanpool": van,
            "employee": employee,
            "seat": seat,
            "case": case,
            "thread": thread,
            "message": message,
            "action": action,
        }
    # The cards were given their numbers: on PostgreSQL the sequence must move past them,
    # or the next card made without one takes number 1 again.
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), [PendingAction]):
            cursor.execute(sql)
    return made


def obj(world, scope: str, name: str):
    return world["VP-101" if scope == IN else "VP-201"][name]


# --- The table --------------------------------------------------------------------------------
# (surface, method, path template, body): {role: {scope: status}}. Templates name the
# record by attribute ({case.case_id}, {seat.pk}); each row is run in scope and out of it.

FOUND = {COORD: {IN: 200, OUT: 404}, AUDITOR: {IN: 200, OUT: 200}}
# A write the coordinator may not make at all: the permission answers first, in or out.
NOT_THEIRS = {COORD: {IN: 403, OUT: 403}, AUDITOR: {IN: 200, OUT: 200}}
# Coordinators read the admin; adding, changing and deleting there is the Auditors'.
REFUSED = {COORD: {IN: 403, OUT: 403}}

ROUTES = [
    # The dashboard
    ("dashboard", "get", "/queue/{action.pk}/", None, FOUND),
    (
        "dashboard",
        "post",
        "/queue/{action.pk}/decide/",
        {"decision": "reject", "note": "x"},
        {COORD: {IN: 302, OUT: 404}, AUDITOR: {IN: 302, OUT: 302}},
    ),
    (
        "dashboard",
        "post",
        "/queue/{action.pk}/claim/",
        {},
        {COORD: {IN: 302, OUT: 404}, AUDITOR: {IN: 302, OUT: 302}},
    ),
    ("dashboard", "get", "/cases/{case.case_id}/", None, FOUND),
    ("dashboard", "post", "/cases/{case.case_id}/ask/", {"question": "Why did it fail?"}, FOUND),
    ("dashboard", "get", "/vanpools/{vanpool.vanpool_id}/", None, FOUND),
    ("dashboard", "get", "/employees/{employee.employee_id}/", None, FOUND),
    # The admin beyond each model's own pages (those are ADMIN_ROUTES, from the registry)
    ("admin", "get", "/admin/vanpools/employee/import/", None, REFUSED),
    (
        "admin",
        "get",
        "/admin/r/{case_type}/{case.pk}/",
        None,
        # No model of ours has a page of its own to send to: unknown and known alike.
        {COORD: {IN: 404, OUT: 404}, AUDITOR: {IN: 404, OUT: 404}},
    ),
    # The API
    ("api", "get", "/api/vanpools/{vanpool.vanpool_id}", None, FOUND),
    ("api", "get", "/api/vanpools/{vanpool.vanpool_id}/riders", None, FOUND),
    (
        "api",
        "post",
        "/api/vanpools/{vanpool.vanpool_id}/audit",
        None,
        {COORD: {IN: 403, OUT: 403}, AUDITOR: {IN: 202, OUT: 202}},
    ),
    ("api", "get", "/api/employees/{employee.employee_id}", None, FOUND),
    ("api", "get", "/api/employees/{employee.employee_id}/shifts", None, FOUND),
    ("api", "get", "/api/cases/{case.case_id}", None, FOUND),
    ("api", "get", "/api/cases/{case.case_id}/emails", None, FOUND),
    ("api", "patch", "/api/cases/{case.case_id}", {"reply_deadline": None}, NOT_THEIRS),
    ("api", "get", "/api/emails/threads/{thread.thread_id}", None, FOUND),
    (
        "api",
        "post",
        "/api/emails/threads/{thread.thread_id}/messages",
        {"employee_id": "{employee.employee_id}", "text": "Could you confirm your shift?"},
        {COORD: {IN: 403, OUT: 403}, AUDITOR: {IN: 201, OUT: 201}},
    ),
    ("api", "get", "/api/pending-actions/{action.pk}", None, FOUND),
    ("api", "post", "/api/pending-actions/{action.pk}/reject", {"note": "not needed"}, FOUND),
    (
        "api",
        "post",
        "/api/pending-actions/{action.pk}/approve",
        {"edits": {"subject": "About your seat", "text": "Thanks."}},
        {COORD: {IN: 200, OUT: 404}, AUDITOR: {IN: 200, OUT: 200}},
    ),
]

# The record of each model the world makes, by the name the path templates use.
RECORD_OF = {
    "vanpools.vanpool": "vanpool",
    "vanpools.employee": "employee",
    "vanpools.rider": "seat",
    "vanpools.leave": "leave",
    "cases.case": "case",
    "cases.verification": "verification",
    "cases.caseevent": "event",
    "cases.pendingaction": "action",
    "cases.casereview": "review",
    "cases.caselesson": "lesson",
    "outreach.emailthread": "thread",
    "outreach.message": "message",
    "agents.agentrun": "run",
    "vanpools.trip": "trip",
    "vanpools.rideday": "ride_day",
    "vanpools.badgeswipe": "swipe",
    "vanpools.parkingpermit": "permit",
    "vanpools.vanpoolmonth": "month",
}


def admin_routes() -> list[tuple]:
    """Every admin page of every model that belongs to a vanpool, from the admin's registry.

    A model registered later gets its rows here without anyone writing them; one
    the world has no record of fails below until RECORD_OF names it.
    """
    from django.contrib import admin
    from simple_history.admin import SimpleHistoryAdmin

    rows = []
    for model, model_admin in admin.site._registry.items():
        label = model._meta.label_lower
        if not VANPOOL_PATHS.get(label):
            continue
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}"
        record = RECORD_OF.get(label, label)
        rows += [
            ("admin", "get", base + "/", None, {COORD: {IN: 200, OUT: 200}}),
            ("admin", "get", base + "/add/", None, REFUSED),
            ("admin", "get", f"{base}/{{{record}.pk}}/change/", None, FOUND),
            ("admin", "get", f"{base}/{{{record}.pk}}/history/", None, FOUND),
            ("admin", "get", f"{base}/{{{record}.pk}}/delete/", None, REFUSED),
            ("admin", "post", f"{base}/{{{record}.pk}}/change/", {}, REFUSED),
        ]
        if isinstance(model_admin, SimpleHistoryAdmin):
            version = f"{base}/{{{record}.pk}}/history/{{{record}_version}}/"
            rows.append(("admin", "get", version, None, FOUND))
    return rows


ADMIN_ROUTES = admin_routes()

TABLE = [
    pytest.param(
        surface,
        method,
        path,
        body,
        role,
        scope,
        expected[role][scope],
        id=f"{method} {path} {role} {scope}",
    )
    for surface, method, path, body, expected in ROUTES + ADMIN_ROUTES
    for role in expected
    for scope in (IN, OUT)
]


def records(world, scope: str) -> dict:
    """The names the path templates use, for the in- or out-of-scope vanpool."""
    mine = world["VP-101" if scope == IN else "VP-201"]
    case = mine["case"]
    names = {
        **mine,
        "leave": mine["employee"].leaves.get(),
        "verification": case.verifications.get(),
        "event": case.events.get(),
        "run": case.agent_runs.get(),
        "review": case.reviews.get(),
        "lesson": case.lesson,
        "case_type": ContentType.objects.get_for_model(case).pk,
        "trip": case.vanpool.trips.get(),
        "ride_day": RideDay.objects.get(vanpool=case.vanpool),
        "swipe": BadgeSwipe.objects.get(employee=mine["employee"]),
        "permit": ParkingPermit.objects.get(employee=mine["employee"]),
        "month": case.vanpool.months.get(),
    }
    for name, record in list(names.items()):
        if hasattr(record, "history"):
            names[f"{name}_version"] = record.history.order_by("-history_id")[0].history_id
    return names


def fill(template: str, names: dict) -> str:
    return template.format(**names)


def client_for(surface: str, user):
    client = APIClient() if surface == "api" else Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(("surface", "method", "path", "body", "role", "scope", "status"), TABLE)
def test_the_scope_table(world, request, surface, method, path, body, role, scope, status):
    names = records(world, scope)
    client = client_for(surface, request.getfixturevalue(role))
    url = fill(path, names)
    if surface == "api":
        data = {k: fill(v, names) if isinstance(v, str) else v for k, v in (body or {}).items()}
        response = getattr(client, method)(url, data, format="json")
    else:
        response = getattr(client, method)(url, body or {})
    assert response.status_code == status, response.content[:300]


# --- Every route is in the table, or says why it shows no vanpool's records -------------------

# URL names (a trailing "*": every name that begins so) and why no vanpool's rows are there.
NO_VANPOOLS_RECORDS = {
    "health": "a load balancer's probe",
    "favicon": "a static icon",
    "login": "signing in",
    "logout": "signing out",
    "account_*": "signing in (django-allauth)",
    "mfa_*": "the user's own second factor",
    "openid_connect_*": "single sign-on",
    "socialaccount_*": "single sign-on",
    "anymail:*": "the email provider's webhooks: no user, a shared secret",
    "api-index": "the list of the API's resources",
    "api-schema": "the API's description",
    "api-docs": "the API's description, for people",
    "api-redoc": "the API's description, for people",
    "api-not-found": "a 404 for any path the API does not have",
    "admin:index": "the list of the admin's models",
    "admin:app_list": "the list of one app's models",
    "admin:login": "signing in",
    "admin:logout": "signing out",
    "admin:password_change*": "the user's own password",
    "admin:jsi18n": "the admin's translations",
    "admin:auth_*": "staff accounts: superusers'",
    "admin:axes_*": "sign-in attempts: Auditors'",
    "admin:django_q_*": "the task queue: superusers'",
    "admin:account_*": "staff email addresses: superusers'",
    "admin:socialaccount_*": "single sign-on settings: superusers'",
    "admin:mfa_*": "second factors: superusers'",
    "admin:authtoken_*": "API tokens: superusers'",
    # Models whose rows are the whole program's (VANPOOL_PATHS gives them no path)
    "admin:vanpools_shift_*": "shifts are the program's, shared by every site",
    "admin:vanpools_coordinatorsite_*": "who coordinates which site: every coordinator reads it",
    "admin:vanpools_datacoverage_*": "which dates each import covers: no rider's data",
    "admin:vanpools_holiday_*": "holidays are the program's calendar",
}
# Pages for riders, not staff: what they show is decided by the signed link in the rider's
# email, never by who is signed in, so a staff user's scope has nothing to narrow there.
RIDER_FACING = {
    "answer-page": "a rider's answer page: a signed link per rider and case, no login",
}
# Covered by the tests further down, by name.
TESTED_BELOW = {
    "review-queue": "test_the_queue_and_the_program_page_count_the_coordinators_vanpools_only",
    "program": "test_the_queue_and_the_program_page_count_the_coordinators_vanpools_only",
    "admin:autocomplete": (
        "test_the_admins_filters_and_autocomplete_offer_only_the_coordinators_sites"
    ),
}


def url_names(patterns, namespace: str = "") -> set[str]:
    found = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            found |= url_names(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            found.add(namespace + pattern.name)
    return found


class _Stand:
    """Stands for any record in a path template, with IDs of the shapes the URLs take."""

    IDS = {
        "case_id": "CASE-00000001",
        "vanpool_id": "VP-101",
        "employee_id": "EMP-1000",
        "thread_id": "THREAD-00000001",
    }

    def __getattr__(self, name: str) -> str:
        return self.IDS.get(name, "1")

    def __format__(self, spec: str) -> str:
        return "1"


def names_in_the_table() -> set[str]:
    names = set(TESTED_BELOW)
    templates = [route[2] for route in ROUTES + ADMIN_ROUTES]
    templates += [path for _, path, _ in LISTS] + [out for _, out, _ in TRICKS]
    for template in templates:
        stand = {field: _Stand() for field in re.findall(r"{(\w+)", template)}
        match = resolve(fill(template, stand).split("?")[0])
        names.add(f"{match.namespace}:{match.url_name}" if match.namespace else match.url_name)
    return names


def exempt(name: str) -> bool:
    return name in RIDER_FACING or any(
        name == rule or (rule.endswith("*") and name.startswith(rule[:-1]))
        for rule in NO_VANPOOLS_RECORDS
    )


def test_every_route_is_in_the_scope_table_or_says_why_no_vanpools_records_are_there():
    untested = sorted(
        name
        for name in url_names(get_resolver().url_patterns)
        if not exempt(name) and name not in names_in_the_table()
    )
    assert untested == [], "add each to ROUTES (or NO_VANPOOLS_RECORDS with the reason)"


def test_a_staff_sign_in_opens_nothing_on_a_rider_facing_page(world, coordinator):
    """The link decides: a coordinator, even of that vanpool, gets what anyone gets without it."""
    case = world["VP-101"]["case"]
    for name in RIDER_FACING:
        path = reverse(name, args=[case.case_id, "not-the-riders-token"])
        anyone, staff = Client().get(path), client_for("dashboard", coordinator).get(path)
        assert staff.status_code == anyone.status_code >= 400
        assert staff.content == anyone.content


def test_the_world_has_a_record_of_every_model_the_admin_shows_by_vanpool():
    labels = {row[2].split("/")[2] + "." + row[2].split("/")[3] for row in ADMIN_ROUTES}
    assert sorted(labels - set(RECORD_OF)) == []


def test_an_out_of_scope_id_answers_as_an_unknown_one_does(world, coordinator):
    api = client_for("api", coordinator)
    out = api.get("/api/cases/CASE-00000002")
    unknown = api.get("/api/cases/CASE-0000000F")
    assert (out.status_code, out.json()) == (unknown.status_code, unknown.json())
    page = client_for("dashboard", coordinator)
    assert page.get("/cases/CASE-00000002/").content == page.get("/cases/CASE-0000000F/").content


# --- Lists: what is in scope is there, the rest is not -----------------------------------------

LISTS = [
    ("dashboard", "/cases/", "CASE-0000000{n}"),
    ("dashboard", "/vanpools/", "VP-{n}01"),
    ("admin", "/admin/vanpools/vanpool/", "VP-{n}01"),
    ("admin", "/admin/vanpools/employee/", "EMP-{n}000"),
    ("admin", "/admin/vanpools/rider/", "EMP-{n}000"),
    ("admin", "/admin/vanpools/leave/", "EMP-{n}000"),
    ("admin", "/admin/cases/case/", "CASE-0000000{n}"),
    ("admin", "/admin/cases/verification/", "CASE-0000000{n}"),
    ("admin", "/admin/cases/caseevent/", "CASE-0000000{n}"),
    ("admin", "/admin/cases/pendingaction/", "CASE-0000000{n}"),
    ("admin", "/admin/outreach/emailthread/", "THREAD-0000000{n}"),
    ("admin", "/admin/outreach/message/", "THREAD-0000000{n}"),
    ("admin", "/admin/agents/agentrun/", "CASE-0000000{n}"),
    ("api", "/api/vanpools", "VP-{n}01"),
    ("api", "/api/employees", "EMP-{n}000"),
    ("api", "/api/cases", "CASE-0000000{n}"),
    ("api", "/api/emails/threads", "THREAD-0000000{n}"),
    ("api", "/api/pending-actions", "CASE-0000000{n}"),
]


@pytest.mark.parametrize(("surface", "path", "marker"), LISTS, ids=[p for _, p, _ in LISTS])
def test_every_list_shows_the_coordinators_vanpools_and_no_other(
    world, coordinator, auditor, surface, path, marker
):
    mine = client_for(surface, coordinator).get(path).content.decode()
    everyone = client_for(surface, auditor).get(path).content.decode()
    for n in (1, 3):
        assert marker.format(n=n) in mine, (n, path)
    assert marker.format(n=2) not in mine
    assert marker.format(n=2) in everyone


def test_the_queue_and_the_program_page_count_the_coordinators_vanpools_only(world, coordinator):
    client = client_for("dashboard", coordinator)
    queue = client.get("/")
    assert [card.action.pk for card in queue.context["cards"]] == [1, 3]
    assert queue.context["waiting"] == 2
    program = client.get("/program/")
    assert program.context["open_total"] == 2
    assert program.context["audit_run"] is None


# --- Query-string tricks ----------------------------------------------------------------------

TRICKS = [
    # (surface, path naming the out-of-scope record, the same path naming an unknown one)
    ("api", "/api/employees?vanpool=VP-201", "/api/employees?vanpool=VP-999"),
    ("api", "/api/cases?vanpool=VP-201", "/api/cases?vanpool=VP-999"),
    ("api", "/api/vanpools?site=Columbus DC", "/api/vanpools?site=Nowhere"),
    ("api", "/api/emails/threads?vanpool=VP-201", "/api/emails/threads?vanpool=VP-999"),
    ("api", "/api/emails/threads?case=CASE-00000002", "/api/emails/threads?case=CASE-0000000F"),
    ("api", "/api/pending-actions?case=CASE-00000002", "/api/pending-actions?case=CASE-0000000F"),
    ("dashboard", "/?site=Columbus DC", "/?site=Nowhere"),
    ("dashboard", "/cases/?site=Columbus DC", "/cases/?site=Nowhere"),
    ("dashboard", "/vanpools/?site=Columbus DC", "/vanpools/?site=Nowhere"),
    ("dashboard", "/vanpools/?q=VP-201", "/vanpools/?q=VP-999"),
    (
        "admin",
        "/admin/vanpools/employee/?memberships__vanpool__vanpool_id=VP-201",
        "/admin/vanpools/employee/?memberships__vanpool__vanpool_id=VP-999",
    ),
    (
        "admin",
        "/admin/vanpools/employee/?leaves__employee__memberships__vanpool__work_site=Columbus DC",
        "/admin/vanpools/employee/?leaves__employee__memberships__vanpool__work_site=Nowhere",
    ),
    (
        "admin",
        "/admin/cases/case/?vanpool__work_site=Columbus DC",
        "/admin/cases/case/?vanpool__work_site=Nowhere",
    ),
    ("admin", "/admin/vanpools/rider/?q=EMP-2000", "/admin/vanpools/rider/?q=EMP-9999"),
    ("admin", "/admin/vanpools/vanpool/?q=EMP-2000", "/admin/vanpools/vanpool/?q=EMP-9999"),
    (
        "admin",
        "/admin/cases/case/?o=2.-1&vanpool__vanpool_id=VP-201",
        "/admin/cases/case/?o=2.-1&vanpool__vanpool_id=VP-999",
    ),
]


@pytest.mark.parametrize(("surface", "out", "unknown"), TRICKS, ids=[t[1] for t in TRICKS])
def test_a_filter_naming_an_out_of_scope_record_answers_as_for_an_unknown_one(
    world, coordinator, surface, out, unknown
):
    client = client_for(surface, coordinator)
    named, given = client.get(out), client.get(unknown)
    assert named.status_code == given.status_code
    # The page may echo what was asked for; beyond that it says nothing of VP-201.
    body = named.content.decode().replace(out.rsplit("=", 1)[-1], "")
    for text in ("VP-201", "EMP-2000", "CASE-00000002", "THREAD-00000002", "Columbus DC"):
        assert text not in body, text
    if surface == "api" and named.status_code == 200:
        assert named.json()["count"] == given.json()["count"] == 0


def test_the_admins_filters_and_autocomplete_offer_only_the_coordinators_sites(world, coordinator):
    client = client_for("admin", coordinator)
    for path in ("/admin/cases/case/", "/admin/vanpools/rider/", "/admin/vanpools/vanpool/"):
        page = client.get(path).content.decode()
        assert "Andover DC" in page and "Fremont Campus" in page, path
        assert "Columbus DC" not in page, path
    found = client.get(
        "/admin/autocomplete/",
        {"app_label": "cases", "model_name": "case", "field_name": "vanpool", "term": "VP"},
    ).json()
    assert sorted(row["text"].split(" ")[0] for row in found["results"]) == ["VP-101", "VP-301"]


def test_an_admin_export_leaves_out_selected_cases_outside_the_scope(world, coordinator):
    client = client_for("admin", coordinator)
    selected = [world["VP-101"]["case"].pk, world["VP-201"]["case"].pk]
    response = client.post(
        "/admin/cases/case/", {"action": "export_csv", "_selected_action": selected}
    )
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    exported = " ".join(" ".join(row) for row in rows)
    assert "CASE-00000001" in exported
    assert "CASE-00000002" not in exported


def test_a_decision_naming_an_out_of_scope_thread_is_refused_as_an_unknown_one(world, coordinator):
    card = PendingActionFactory(
        kind=PendingAction.Kind.MATCH_INBOUND,
        case=world["VP-101"]["case"],
        message=MessageFactory(thread=None, direction="inbound", from_email="x@example.com"),
        payload={"from": "x@example.com"},
    )
    api = client_for("api", coordinator)

    def approve(thread: str) -> dict:
        response = api.post(
            f"/api/pending-actions/{card.pk}/approve",
            {"edits": {"thread": thread, "employee_id": "EMP-1000"}},
            format="json",
        )
        assert response.status_code == 400
        return json.loads(response.content)["error"]

    out, unknown = approve("THREAD-00000002"), approve("THREAD-0000000F")
    assert out["message"].replace("00000002", "X") == unknown["message"].replace("0000000F", "X")


# --- The rule itself ------------------------------------------------------------------------


def test_a_coordinator_coordinates_their_named_vanpools_and_their_sites(world, coordinator):
    assert sorted(vanpools_for(coordinator).values_list("vanpool_id", flat=True)) == [
        "VP-101",
        "VP-301",
    ]


def test_the_digests_reading_of_the_rule_agrees_with_each_users_own(world, coordinator):
    """coordinated_vanpools (many users, three queries) gives each what vanpools_for gives them."""
    users = list(User.objects.filter(is_staff=True))
    read = coordinated_vanpools(user.pk for user in users)
    scoped = [user for user in users if is_scoped(user)]
    assert len(scoped) == 2  # the coordinator and the other coordinator
    for user in scoped:
        assert read.get(user.pk, set()) == {(v.pk, v.work_site) for v in vanpools_for(user)}
    assert {v.pk for v in read[coordinator.pk]} == {
        world["VP-101"]["vanpool"].pk,
        world["VP-301"]["vanpool"].pk,
    }


def test_the_vanpool_of_a_card_is_its_cases_else_its_seats(world):
    case_card = world["VP-201"]["action"]
    seat_card = PendingActionFactory(
        kind=PendingAction.Kind.MATCH_INBOUND, case=None, rider=world["VP-301"]["seat"]
    )
    read = dict(
        PendingAction.objects.annotate(van=vanpool_of(PendingAction, "vanpool_id")).values_list(
            "pk", "van"
        )
    )
    assert (read[case_card.pk], read[seat_card.pk]) == ("VP-201", "VP-301")


def test_auditors_and_everyone_under_scope_all_see_every_vanpool(
    world, coordinator, auditor, settings
):
    assert not is_scoped(auditor)
    assert vanpools_for(auditor).count() == 3
    settings.COORDINATOR_SCOPE = "all"
    assert not is_scoped(coordinator)
    api = client_for("api", coordinator)
    assert api.get("/api/cases/CASE-00000002").status_code == 200


def test_every_model_in_the_admin_says_how_it_reaches_its_vanpool():
    from django.contrib import admin

    from vanpools.admin_scope import ScopedAdmin

    ours = {"vanpools", "cases", "outreach", "agents"}
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label in ours:
            assert isinstance(model_admin, ScopedAdmin), model
            assert model._meta.label_lower in VANPOOL_PATHS, model


def test_a_coordinator_reads_history_without_home_street_or_coordinates(
    world, coordinator, auditor
):
    employee: Employee = world["VP-101"]["employee"]
    employee.home_address, employee.home_zip = "9 Oak Ave", "94536"
    employee.save()
    path = f"/admin/vanpools/employee/{employee.pk}/history/"
    theirs = client_for("admin", coordinator).get(path).content.decode()
    ours = client_for("admin", auditor).get(path).content.decode()
    assert "94536" in theirs and "94536" in ours
    assert "Oak Ave" not in theirs and "Elm St" not in theirs
    assert "9 Oak Ave" in ours
    version = employee.history.order_by("-history_id").first().history_id
    form = client_for("admin", coordinator).get(f"{path}{version}/").content.decode()
    assert "Oak Ave" not in form and "94536" in form


def test_a_history_version_cannot_be_written_back(world, auditor):
    employee = world["VP-101"]["employee"]
    version = employee.history.order_by("history_id").first().history_id
    path = f"/admin/vanpools/employee/{employee.pk}/history/{version}/"
    assert client_for("admin", auditor).post(path, {}).status_code == 405
