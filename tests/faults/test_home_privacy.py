"""Faults 60–64: no home street address or point for coordinators, asked or stored.

60 admin: a coordinator's filter, popup field or search on a home field — on the
employee list or through any relation, and into stored JSON — is refused the
same way whatever the value (Django's 400 for a disallowed lookup), so one
request at a time no longer spells out a street; an auditor's works.
61 API: a query parameter (filter or ordering) naming a home field is a 400
naming it, whatever the value, on every list; an auditor's passes.
62 dashboard: the same on every page.
63 traces: an audit's stored runs keep each rider's home source and distance,
not the point, nor junk coordinates quoted in a sentence; the model's copy of
the facts as well; a coordinator's admin shows none of an older run's point.
64 stored records: the data migrations rewrite runs, evidence, flags, meta,
events, actions, reviews and lessons written before, keeping source and miles.
"""

import json
from importlib import import_module

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from rest_framework.test import APIClient

from agents.models import AgentRun
from agents.prompting import data_block
from caseloop.audits import audit_vanpool
from cases.models import Case, CaseEvent, CaseLesson, Verification
from tests.factories import (
    AgentRunFactory,
    CaseEventFactory,
    CaseFactory,
    EmailThreadFactory,
    EmployeeFactory,
    MessageFactory,
    PendingActionFactory,
    RiderFactory,
    VanpoolFactory,
    VerificationFactory,
)
from tests.llm_server import Scripted, api_error, model_endpoint

pytestmark = pytest.mark.django_db

STREET = "742 Evergreen Terrace, Union City"
HOME = (37.6011, -122.0437)
# Two values for each probe: one that matches the rider's home, one that does
# not. A refused lookup answers both alike; an allowed one tells them apart.
MATCH, MISS = "742", "999"


@pytest.fixture
def scene(db):
    vanpool = VanpoolFactory()
    employee = EmployeeFactory(home_address=STREET, home_lat=HOME[0], home_lng=HOME[1])
    rider = RiderFactory(vanpool=vanpool, employee=employee)
    case = CaseFactory(vanpool=vanpool)
    thread = EmailThreadFactory(case=case)
    MessageFactory(thread=thread, employee=employee)
    PendingActionFactory(case=case, rider=rider)
    # A run as written before homes were withheld: the point under "home".
    AgentRunFactory(
        case=case,
        vanpool=vanpool,
        input={"facts": {"riders": [{"employee_id": employee.employee_id, "home": _point()}]}},
    )
    return {"employee": employee.employee_id, "case": case.case_id, "vanpool": vanpool}


def _point() -> dict[str, float]:
    return {"lat": HOME[0], "lng": HOME[1]}


def _values(param: str) -> tuple[str, str]:
    """A matching and a missing value for a probe on ``param``."""
    for field, value in (("lat", HOME[0]), ("lng", HOME[1])):
        if field in param:
            below, above = str(value - 0.001), str(value + 0.001)
            return (above, below) if param.endswith("__lte") else (below, above)
    return MATCH, MISS


def _client(user, kind=Client):
    client = kind()
    client.force_login(user)
    return client


def _answer(client, url: str) -> tuple[int, bytes]:
    response = client.get(url)
    return response.status_code, response.content


# --- 60 the admin ---------------------------------------------------------------------------

# (change list, lookup): the employee's own fields, through each relation that
# reaches an employee, and into stored JSON where an old trace kept the point.
ADMIN_PROBES = [
    ("vanpools/employee", "home_address__startswith"),
    ("vanpools/employee", "home_address__icontains"),
    ("vanpools/employee", "home_address"),
    ("vanpools/employee", "home_lat__gte"),
    ("vanpools/employee", "home_lng__lte"),
    ("vanpools/employee", "memberships__employee__home_lat__gte"),
    ("vanpools/rider", "employee__home_address__startswith"),
    ("vanpools/rider", "employee__home_lat__gte"),
    ("vanpools/leave", "employee__home_address__startswith"),
    ("vanpools/vanpool", "riders__employee__home_address__startswith"),
    ("outreach/message", "employee__home_lat__gte"),
    ("outreach/emailthread", "messages__employee__home_address__startswith"),
    ("cases/case", "vanpool__riders__employee__home_lat__gte"),
    ("cases/pendingaction", "rider__employee__home_address__startswith"),
    ("cases/verification", "vanpool__riders__employee__home_lng__lte"),
    ("agents/agentrun", "input__facts__riders__0__home__lat__gte"),
    ("agents/agentrun", "vanpool__riders__employee__home_address__startswith"),
]
# What an auditor may ask: the lookups Django allows on the model itself.
AUDITOR_ADMIN_PROBES = [
    ("vanpools/employee", "home_address__startswith"),
    ("vanpools/employee", "home_lat__gte"),
    ("vanpools/employee", "home_lng__lte"),
]


@pytest.mark.parametrize(("page", "param"), ADMIN_PROBES)
def test_fault_60_a_coordinators_admin_refuses_every_home_lookup_alike(
    scene, coordinator, page, param
):
    client = _client(coordinator)
    url = f"/admin/{page}/?{param}="
    match, miss = (_answer(client, url + value) for value in _values(param))
    assert match[0] == 400
    assert match == miss  # the same bytes for a match and a miss: nothing to learn


@pytest.mark.parametrize(("page", "param"), AUDITOR_ADMIN_PROBES)
def test_fault_60_an_auditors_admin_answers_home_lookups(scene, auditor, page, param):
    client = _client(auditor)
    match, miss = (client.get(f"/admin/{page}/?{param}={v}") for v in _values(param))
    assert (match.status_code, miss.status_code) == (200, 200)
    assert match.context["cl"].result_count == 1
    assert miss.context["cl"].result_count == 0


def test_fault_60_a_coordinator_cannot_search_sort_or_pick_by_a_home_field(scene, coordinator):
    client = _client(coordinator)
    # Search covers no home field: a street finds nothing, a street's prefix neither.
    for term in (MATCH, STREET):
        assert client.get("/admin/vanpools/employee/", {"q": term}).context["cl"].result_count == 0
    # A popup keyed on the street would list every address as a value.
    popup = client.get("/admin/vanpools/employee/?_to_field=home_address&_popup=1")
    assert popup.status_code == 400
    changelist = client.get("/admin/vanpools/employee/").context["cl"]
    assert not {"home_address", "home_lat", "home_lng"} & set(changelist.list_display)
    assert not {"home_address", "home_lat", "home_lng"} & set(changelist.sortable_by or [])


# --- 61 the API -----------------------------------------------------------------------------

API_PROBES = [
    ("/api/employees", "home_address__startswith"),
    ("/api/employees", "home_lat__gte"),
    ("/api/employees", "home_address"),
    ("/api/employees", "ordering"),
    ("/api/employees", "o"),
    ("/api/vanpools", "riders__employee__home_lng__lte"),
    ("/api/vanpools", "ordering"),
    ("/api/cases", "vanpool__riders__employee__home_address__startswith"),
    ("/api/cases/{case}/emails", "employee__home_lat__gte"),
    ("/api/emails/threads", "messages__employee__home_address__startswith"),
    ("/api/pending-actions", "rider__employee__home_lat__gte"),
    ("/api/employees/{employee}/shifts", "home_address__startswith"),
]


def _api_url(scene, path: str, param: str, value: str) -> str:
    path = path.format(**scene)
    if param in {"ordering", "o"}:  # the value names the field
        value = "-home_lat" if value == MATCH else "home_address,employee_id"
    return f"{path}?{param}={value}"


@pytest.mark.parametrize(("path", "param"), API_PROBES)
def test_fault_61_a_coordinators_api_refuses_every_home_parameter_alike(
    scene, coordinator, path, param
):
    client = _client(coordinator, APIClient)
    match, miss = (_answer(client, _api_url(scene, path, param, v)) for v in _values(param))
    assert match[0] == 400
    assert param in json.loads(match[1])["error"]["fields"]
    if param not in {"ordering", "o"}:
        assert match == miss


@pytest.mark.parametrize(("path", "param"), API_PROBES)
def test_fault_61_an_auditors_api_takes_the_same_parameters(scene, auditor, path, param):
    client = _client(auditor, APIClient)
    for value in _values(param):
        assert client.get(_api_url(scene, path, param, value)).status_code == 200


# --- 62 the dashboard -----------------------------------------------------------------------

DASHBOARD_PROBES = [
    ("/", "home_address__startswith"),
    ("/cases/", "vanpool__riders__employee__home_lat__gte"),
    ("/cases/{case}/", "home_lng__lte"),
    ("/program/", "home_address"),
    ("/vanpools/", "riders__employee__home_address__startswith"),
    ("/vanpools/{vanpool_id}/", "home_lat__gte"),
    ("/employees/{employee}/", "home_address__startswith"),
    ("/vanpools/", "sort"),
    ("/cases/", "o"),
]


def _dashboard_url(scene, path: str, param: str, value: str) -> str:
    path = path.format(vanpool_id=scene["vanpool"].vanpool_id, **scene)
    if param in {"sort", "o"}:
        value = "home_lat" if value == MATCH else "-employee__home_address"
    return f"{path}?{param}={value}"


@pytest.mark.parametrize(("path", "param"), DASHBOARD_PROBES)
def test_fault_62_a_coordinators_dashboard_refuses_every_home_parameter_alike(
    scene, coordinator, path, param
):
    client = _client(coordinator)
    match, miss = (_answer(client, _dashboard_url(scene, path, param, v)) for v in _values(param))
    assert match[0] == 400
    assert param.encode() in match[1]
    if param not in {"sort", "o"}:
        assert match == miss


@pytest.mark.parametrize(("path", "param"), DASHBOARD_PROBES)
def test_fault_62_an_auditors_dashboard_is_not_refused_for_them(scene, auditor, path, param):
    client = _client(auditor)
    for value in _values(param):
        # The dashboard's forms refuse parameters they do not know on some
        # pages (400 naming the form's own field), never for the home rule.
        response = client.get(_dashboard_url(scene, path, param, value))
        assert b"home-address permission" not in response.content
        assert response.status_code in {200, 400}


# --- 63 traces --------------------------------------------------------------------------------


def _numbers(*points: tuple[float, float]) -> list[str]:
    return [str(number) for point in points for number in point]


def test_fault_63_an_audit_trace_keeps_the_source_and_distance_not_the_point(
    run, coordinator, auditor
):
    vanpool = VanpoolFactory()
    near = EmployeeFactory(home_zip="94587", home_lat=HOME[0], home_lng=HOME[1])
    # Swapped (lng, lat): "junk" to the check, a real home to anyone reading.
    swapped = EmployeeFactory(home_zip="94587", home_lat=-122.0512, home_lng=37.5833)
    for employee in (near, swapped):
        RiderFactory(vanpool=vanpool, employee=employee)
    run(audit_vanpool, vanpool.vanpool_id)
    runs = list(AgentRun.objects.filter(vanpool=vanpool))
    assert runs
    stored = json.dumps([[r.input, r.output, r.error] for r in runs])
    stored += json.dumps(list(Verification.objects.values_list("reasoning", "evidence")))
    stored += json.dumps(list(Case.objects.values_list("meta", flat=True)))
    stored += json.dumps(list(CaseEvent.objects.values_list("note", "data")))
    for number in _numbers(HOME, (-122.0512, 37.5833)):
        assert number not in stored
    root = next(r for r in runs if r.parent_id is None)
    homes = {r["employee_id"]: r["home"] for r in root.input["facts"]["riders"]}
    assert homes[near.employee_id] == {"source": "stored_coordinates"}
    location = next(r for r in runs if r.agent == "location")
    evidence = {item["employee_id"]: item for item in location.output["evidence"]}
    assert evidence[near.employee_id]["home_source"] == "stored_coordinates"
    assert evidence[near.employee_id]["miles"] > 0
    assert evidence[swapped.employee_id]["home_source"] == "zip_centroid"
    assert "not a real location" in evidence[swapped.employee_id]["note"]


def test_fault_63_the_models_trace_stores_its_facts_without_the_point(run, settings):
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_lat=HOME[0], home_lng=HOME[1]))
    # No ZIP, no coordinates: "unknown" to the rules, so the model is asked.
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip="N/A"))
    with model_endpoint(settings) as fake:
        fake.reply(*[Scripted(status=500, body=api_error("down"))] * 8)
        run(audit_vanpool, vanpool.vanpool_id, checks=["location"])
        sent = json.dumps([request.body for request in fake.requests])
    assert str(HOME[0]) in sent  # the model read the facts as they are
    asked = AgentRun.objects.get(vanpool=vanpool, agent="location", backend="openai")
    assert str(HOME[0]) not in asked.input["user"] and str(HOME[1]) not in asked.input["user"]
    assert '"home": {"source": "stored_coordinates"}' in asked.input["user"]
    assert str(vanpool.pickup_lat) in asked.input["user"]  # the program's points stay


def test_fault_63_a_coordinators_admin_shows_no_point_of_an_older_trace(
    scene, coordinator, auditor
):
    run = AgentRun.objects.get(case__case_id=scene["case"])
    page = f"/admin/agents/agentrun/{run.pk}/change/"
    html = _client(coordinator).get(page).content.decode()
    assert str(HOME[0]) not in html and str(HOME[1]) not in html
    assert "stored_coordinates" in html
    assert str(HOME[0]) in _client(auditor).get(page).content.decode()


# --- 64 stored records ------------------------------------------------------------------------


def _migrate_forward(app: str, name: str) -> None:
    """Run one data migration's function on the historical models (no AppendOnly guard)."""
    module = import_module(f"{app}.migrations.{name}")
    state = MigrationExecutor(connection).loader.project_state((app, name))
    module.withhold(state.apps, None)


def test_fault_64_the_data_migrations_withhold_points_already_stored(db):
    vanpool = VanpoolFactory()
    case = CaseFactory(vanpool=vanpool, meta={"rider_flags": {"EMP-1": {"location": "fail"}}})
    quoted = "the stored home coordinates (-122.0512, 37.5833) are not a real location"
    text_block = data_block("facts", {"riders": [{"home": _point(), "employee_id": "EMP-1"}]})
    trace = AgentRunFactory(
        vanpool=vanpool,
        input={"facts": {"riders": [{"employee_id": "EMP-1", "home": _point()}]}},
        output={"evidence": [{"note": quoted, "miles": 12.5, "home_source": "zip_centroid"}]},
    )
    model_trace = AgentRunFactory(vanpool=vanpool, input={"user": text_block}, output=None)
    verification = VerificationFactory(
        vanpool=vanpool,
        case=case,
        reasoning=f"Cannot measure EMP-1: {quoted}.",
        evidence=[{"employee_id": "EMP-1", "value": "", "reason": quoted}],
    )
    event = CaseEventFactory(case=case, data={"home": _point(), "home_address": STREET})
    lesson = CaseLesson.objects.create(
        case=case, key_signals={"home_source": "zip_centroid", "note": quoted}, sentence=quoted
    )
    _migrate_forward("agents", "0004_withhold_home_points_in_traces")
    _migrate_forward("cases", "0007_withhold_home_points_in_records")
    trace.refresh_from_db()
    model_trace.refresh_from_db()
    verification.refresh_from_db()
    event.refresh_from_db()
    lesson.refresh_from_db()
    stored = json.dumps(
        [
            trace.input,
            trace.output,
            model_trace.input,
            verification.reasoning,
            verification.evidence,
            event.data,
            lesson.key_signals,
            lesson.sentence,
        ]
    )
    for number in _numbers(HOME, (-122.0512, 37.5833)):
        assert number not in stored
    assert STREET not in stored
    assert trace.input["facts"]["riders"][0]["home"] == {"source": "stored_coordinates"}
    assert trace.output["evidence"][0]["miles"] == 12.5  # the distance stays
    assert trace.output["evidence"][0]["home_source"] == "zip_centroid"
    assert "stored home coordinates are not a real location" in lesson.sentence
    assert '"home": {"source": "stored_coordinates"}' in model_trace.input["user"]
