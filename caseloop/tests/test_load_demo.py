"""manage.py load_demo, and the facts the demo data claims about itself.

seeded.json is the ground truth later audits are scored against, so the tests
recompute its distances independently (haversine x circuity, here) instead of
trusting the generator.
"""

import csv
import importlib.util
import io
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import zipcodes
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.http import HttpRequest
from django.test import override_settings

from tests.factories import UserFactory, VanpoolFactory
from vanpools.demo import DEMO_PROGRAM, load_demo_program
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool
from vanpools.schedules import parse_compact_weekly, parse_weekly

DEMO_DIR = DEMO_PROGRAM.parent
PROGRAM: dict[str, Any] = json.loads(DEMO_PROGRAM.read_text(encoding="utf-8"))
SEEDED: dict[str, Any] = json.loads((DEMO_DIR / "seeded.json").read_text(encoding="utf-8"))
VANS = {van["vanpool_id"]: van for van in PROGRAM["vanpools"]}
EMPLOYEES = {employee["employee_id"]: employee for employee in PROGRAM["employees"]}
PASSWORD = "vanpool-demo-test-password"
EARTH_RADIUS_MILES = 3958.8


def login(client, **credentials):
    """Log in through the authentication backends, django-axes included (it needs a request)."""
    request = HttpRequest()
    request.META["REMOTE_ADDR"] = "127.0.0.1"
    return client.login(request=request, **credentials)


def load_demo(*args: str) -> str:
    # The simulated past weeks have their own tests (test_demo_history.py); these are
    # about the program, the logins and today's audit.
    out = io.StringIO()
    call_command("load_demo", "--no-history", *args, stdout=out)
    return out.getvalue()


def table_counts() -> dict[str, int]:
    return {
        "shifts": Shift.objects.count(),
        "vanpools": Vanpool.objects.count(),
        "employees": Employee.objects.count(),
        "riders": Rider.objects.count(),
        "leaves": Leave.objects.count(),
        "users": get_user_model().objects.count(),
    }


def printed_password(output: str, username: str) -> str:
    match = re.search(rf"^\s*{username}\s+\S+\s+password: (\S+)$", output, re.MULTILINE)
    assert match, output
    return match[1]


@pytest.fixture(autouse=True)
def _scratch_var_dir(settings, tmp_path):
    """The command keeps the demo passwords under VAR_DIR: never the checkout's var/."""
    settings.VAR_DIR = tmp_path


# The command -------------------------------------------------------------------


def test_it_loads_the_demo_program(db):
    load_demo("--password", PASSWORD)
    assert Vanpool.objects.count() == len(PROGRAM["vanpools"]) >= 25
    assert Employee.objects.count() == len(PROGRAM["employees"]) >= 150
    assert Shift.objects.count() == len(PROGRAM["shifts"]) >= 5
    assert Vanpool.objects.values("work_site").distinct().count() == 3
    seated = [row for row in PROGRAM["employees"] if "vanpool_id" in row]
    assert Rider.objects.filter(status=Rider.Status.ACTIVE).count() == len(seated)
    assert Employee.objects.filter(memberships__isnull=True).count() >= 10
    assert Leave.objects.filter(kind=Leave.Kind.LEAVE, employee__status="on_leave").exists()
    assert set(Vanpool.objects.values_list("status", flat=True)) == {
        "active",
        "inactive",
        "suspended",
    }


@pytest.mark.parametrize(
    ("username", "group"), [("auditor", "Auditors"), ("coordinator", "Coordinators")]
)
def test_it_makes_staff_logins_that_reach_the_admin(db, client, username, group):
    load_demo("--password", PASSWORD)
    user = get_user_model().objects.get(username=username)
    assert user.is_staff and not user.is_superuser
    assert list(user.groups.values_list("name", flat=True)) == [group]
    assert login(client, username=username, password=PASSWORD)
    assert client.get("/admin/").status_code == 200


def test_it_gives_the_demo_coordinator_the_vans_without_one(db):
    other = UserFactory(username="rosa", is_staff=True)
    VanpoolFactory(vanpool_id="VP-101", coordinator=other)
    load_demo("--password", PASSWORD)
    coordinator = get_user_model().objects.get(username="coordinator")
    assert Vanpool.objects.get(vanpool_id="VP-101").coordinator == other
    assert Vanpool.objects.filter(coordinator=coordinator).count() == len(VANS) - 1


def test_it_prints_a_random_password_once(db, client, monkeypatch):
    monkeypatch.delenv("DEMO_PASSWORD", raising=False)
    first = load_demo()
    assert "http://127.0.0.1:8000/ (the coordinators' dashboard)" in first
    assert "http://127.0.0.1:8000/admin/" in first
    password = printed_password(first, "auditor")
    assert password != printed_password(first, "coordinator")
    assert login(client, username="auditor", password=password)

    second = load_demo()
    assert password not in second
    assert "password: unchanged" in second
    assert login(client, username="auditor", password=password)


def test_it_takes_the_password_from_the_environment(db, client, monkeypatch):
    monkeypatch.setenv("DEMO_PASSWORD", PASSWORD)
    output = load_demo()
    assert printed_password(output, "coordinator") == PASSWORD
    assert login(client, username="coordinator", password=PASSWORD)


def test_it_changes_nothing_the_second_time(db, client):
    load_demo("--password", PASSWORD)
    before = table_counts()
    output = load_demo("--password", "a-different-password")
    assert table_counts() == before
    assert "everything unchanged" in output
    assert re.search(rf"employees\s+0\s+0\s+{len(EMPLOYEES)}$", output, re.MULTILINE)
    # An existing user keeps the password they have.
    assert login(client, username="auditor", password=PASSWORD)

    result = load_demo_program()
    assert result.changed_nothing
    assert all(
        count["created"] == count["updated"] == 0 for count in result.imported.counts.values()
    )


def test_it_resets_passwords_when_asked(db, client):
    load_demo("--password", PASSWORD)
    output = load_demo("--reset-passwords", "--password", "new-demo-password")
    assert printed_password(output, "auditor") == "new-demo-password"
    assert not login(client, username="auditor", password=PASSWORD)
    assert login(client, username="auditor", password="new-demo-password")


def test_a_rerun_keeps_the_passwords_and_says_where_they_are(db, client, monkeypatch, tmp_path):
    monkeypatch.delenv("DEMO_PASSWORD", raising=False)
    first = load_demo("--no-audit")
    passwords = {name: printed_password(first, name) for name in ("auditor", "coordinator")}
    kept = tmp_path / "demo-logins.txt"
    assert kept.stat().st_mode & 0o777 == 0o600
    assert {line.split()[0]: line.split()[1] for line in kept.read_text().splitlines()[1:]} == (
        passwords
    )

    second = load_demo("--no-audit")
    for name, password in passwords.items():
        assert password not in second
        assert re.search(rf"^\s*{name}\s.*unchanged, kept in {re.escape(str(kept))}", second, re.M)
        assert login(client, username=name, password=password)


def test_a_rerun_does_not_point_at_a_password_that_no_longer_works(db, monkeypatch):
    monkeypatch.delenv("DEMO_PASSWORD", raising=False)
    load_demo("--no-audit")
    auditor = get_user_model().objects.get(username="auditor")
    auditor.set_password("changed-in-the-admin")
    auditor.save()
    second = load_demo("--no-audit")
    assert re.search(r"^\s*auditor\s.*password: unchanged \(", second, re.M)
    assert re.search(r"^\s*coordinator\s.*unchanged, kept in", second, re.M)


def test_a_rerun_keeps_everyone_logged_in(db, client):
    load_demo("--password", PASSWORD, "--no-audit")
    assert login(client, username="coordinator", password=PASSWORD)
    assert client.get("/").status_code == 200

    load_demo("--no-audit")
    assert client.get("/").status_code == 200

    load_demo("--no-audit", "--reset-passwords")
    assert client.get("/").status_code == 302  # a new password ends the session


@override_settings(PRODUCTION=True)
def test_it_keeps_no_password_file_in_production(db, tmp_path):
    load_demo("--password", PASSWORD, "--force", "--no-audit")
    assert not (tmp_path / "demo-logins.txt").exists()


@override_settings(PRODUCTION=True)
def test_it_refuses_in_production(db):
    with pytest.raises(CommandError, match="PRODUCTION"):
        load_demo("--password", PASSWORD)
    assert table_counts()["vanpools"] == 0


@override_settings(PRODUCTION=True)
def test_it_loads_in_production_when_forced(db):
    load_demo("--password", PASSWORD, "--force")
    assert Vanpool.objects.count() == len(VANS)


# The data ----------------------------------------------------------------------


def centroid(zip_code: str) -> tuple[float, float]:
    (row,) = zipcodes.matching(zip_code)
    return float(row["lat"]), float(row["long"])


def commute_miles(employee: dict[str, Any]) -> float:
    """As the audit measures it: stored home coordinates, else the ZIP centroid."""
    van = VANS[employee["vanpool_id"]]
    if "home_lat" in employee:
        home = (employee["home_lat"], employee["home_lng"])
    else:
        home = centroid(employee["home_zip"])
    lat1, lng1, lat2, lng2 = map(math.radians, (*home, van["pickup_lat"], van["pickup_lng"]))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    )
    miles = 2 * EARTH_RADIUS_MILES * math.asin(math.sqrt(h))
    return miles * settings.COMMUTE_CIRCUITY_FACTOR


def limit(vanpool_id: str) -> int:
    return VANS[vanpool_id].get("max_commute_miles") or settings.DEFAULT_MAX_COMMUTE_MILES


def test_every_zip_is_a_real_one():
    zips = [van["pickup_zip"] for van in VANS.values()]
    zips += [employee["home_zip"] for employee in EMPLOYEES.values()]
    assert [code for code in zips if not zipcodes.matching(code)] == []


def test_leading_zero_zips_survive_the_import(db):
    leading_zero = {
        employee_id: employee["home_zip"]
        for employee_id, employee in EMPLOYEES.items()
        if employee["home_zip"].startswith("0")
    }
    assert len(leading_zero) >= 20
    assert any("-" in code for code in leading_zero.values())
    load_demo_program(password=PASSWORD)
    stored = dict(
        Employee.objects.filter(employee_id__in=leading_zero).values_list("employee_id", "home_zip")
    )
    assert stored == leading_zero


def test_the_seeded_problems_name_real_riders_of_their_vans():
    for item in SEEDED["problems"] + SEEDED["not_problems"]:
        if item["kind"] == "vanpool_rules":  # about the van: its month and the rules it fails
            assert VANS[item["vanpool_id"]]["status"] == "active", item
            assert re.fullmatch(r"\d{4}-\d{2}", item["month"]) and item["rules_failed"], item
            continue
        assert EMPLOYEES[item["employee_id"]]["vanpool_id"] == item["vanpool_id"], item
    kinds = {problem["kind"] for problem in SEEDED["problems"]}
    assert kinds == {
        "location",
        "shift",
        "both",
        "unknown",
        "ridership",
        "parking",
        "vanpool_rules",
    }
    rules = {
        rule
        for p in SEEDED["problems"]
        if p["kind"] == "vanpool_rules"
        for rule in p["rules_failed"]
    }
    assert rules == {"seats", "occupancy", "commute"}  # each §132(f) rule, on a van of its own


def test_the_seeded_location_problems_are_over_their_vans_limits():
    far = [problem for problem in SEEDED["problems"] if problem["kind"] in ("location", "both")]
    assert far
    for problem in far:
        miles = commute_miles(EMPLOYEES[problem["employee_id"]])
        assert miles > limit(problem["vanpool_id"]), problem
        assert miles == pytest.approx(problem["commute_miles"], abs=0.01)


def test_no_other_rider_is_over_the_limit():
    seeded_far = {
        problem["employee_id"]
        for problem in SEEDED["problems"]
        if problem["kind"] in ("location", "both")
    }
    over = {
        employee_id
        for employee_id, employee in EMPLOYEES.items()
        if "vanpool_id" in employee and commute_miles(employee) > limit(employee["vanpool_id"])
    }
    assert over == seeded_far


def test_the_clean_vanpools_riders_are_within_the_limit():
    flagged = {problem["vanpool_id"] for problem in SEEDED["problems"]}
    assert len(SEEDED["clean_vanpools"]) >= 12
    assert flagged.isdisjoint(SEEDED["clean_vanpools"])
    for employee in EMPLOYEES.values():
        if employee.get("vanpool_id") in SEEDED["clean_vanpools"]:
            assert commute_miles(employee) <= limit(employee["vanpool_id"]), employee


def weekly(schedule: str | list[dict[str, str]]) -> set[tuple[str, str, str]]:
    spans = parse_compact_weekly(schedule) if isinstance(schedule, str) else parse_weekly(schedule)
    return {(span.day, span.start, span.end) for span in spans}


def test_the_seeded_shift_problems_are_the_only_riders_off_their_vans_schedule():
    shifts = {shift["shift_id"]: shift for shift in PROGRAM["shifts"]}
    off = set()
    for vanpool_id, van in VANS.items():
        riders = [e for e in EMPLOYEES.values() if e.get("vanpool_id") == vanpool_id]
        if "schedule" in van:
            # A rider fits when each of their days is one the van runs, at the same hours.
            runs = weekly(van["schedule"])
            for rider in riders:
                shift = shifts[rider["shift_id"]]
                if "schedule" not in shift or not weekly(shift["schedule"]) <= runs:
                    off.add(rider["employee_id"])
        else:
            (majority, _), *_ = Counter(rider["shift_id"] for rider in riders).most_common()
            off |= {rider["employee_id"] for rider in riders if rider["shift_id"] != majority}
    seeded = {
        problem["employee_id"]
        for problem in SEEDED["problems"]
        if problem["kind"] in ("shift", "both", "unknown")
    }
    assert off == seeded


@pytest.mark.parametrize(("tag", "side"), [("borderline_over", 1), ("borderline_under", -1)])
def test_the_borderline_riders_are_within_a_mile_of_the_limit(tag, side):
    (item,) = [item for item in SEEDED["problems"] + SEEDED["not_problems"] if item["tag"] == tag]
    employee = EMPLOYEES[item["employee_id"]]
    assert "home_lat" in employee, "borderline distances come from stored coordinates"
    over_by = commute_miles(employee) - limit(item["vanpool_id"])
    assert 0 < side * over_by < 1


def test_the_committed_files_are_what_the_generator_writes(monkeypatch):
    spec = importlib.util.spec_from_file_location("demo_generate", DEMO_DIR / "generate.py")
    assert spec and spec.loader
    generate = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the file runs.
    monkeypatch.setitem(sys.modules, spec.name, generate)
    spec.loader.exec_module(generate)
    program, seeded, files, _ = generate.build()
    assert json.loads(json.dumps(program)) == PROGRAM
    assert json.loads(json.dumps(seeded)) == SEEDED
    for name, rows in files.items():
        with (DEMO_DIR / "records" / name).open(encoding="utf-8", newline="") as committed:
            assert list(csv.reader(committed)) == rows, name
    assert generate.CIRCUITY == settings.COMMUTE_CIRCUITY_FACTOR
    assert generate.DEFAULT_LIMIT == settings.DEFAULT_MAX_COMMUTE_MILES


def test_the_demo_file_is_in_the_documented_shape():
    assert set(PROGRAM) == {"shifts", "vanpools", "employees"}
    assert all(re.fullmatch(r"VP-\d{3}", van_id) for van_id in VANS)
    assert all(isinstance(employee["home_zip"], str) for employee in EMPLOYEES.values())
    assert all("coordinator_email" not in van for van in VANS.values())


def test_it_reports_where_the_file_is(db):
    output = load_demo("--password", PASSWORD)
    assert output.startswith(f"Imported {Path('fixtures', 'demo', 'program.json')}:")


# A seeded problem as the audit records it: (vanpool, check, employee; "" for the van).
SEEDED_CHECKS = {
    "location": ("location",),
    "shift": ("shift",),
    "both": ("location", "shift"),
    "ridership": ("ridership",),
    "parking": ("parking",),
    "vanpool_rules": ("vanpool_rules",),
    # A schedule only HR's words describe: a person judges both checks that read it.
    "unknown": ("shift", "ridership"),
}


def seeded_findings() -> dict[str, set[tuple[str, str, str]]]:
    """What today's audit must find, failing or left to a person: the seeded problems only."""
    found: dict[str, set[tuple[str, str, str]]] = {"fail": set(), "unknown": set()}
    for problem in SEEDED["problems"]:
        verdict = "unknown" if problem["kind"] == "unknown" else "fail"
        for check in SEEDED_CHECKS[problem["kind"]]:
            found[verdict].add((problem["vanpool_id"], check, problem.get("employee_id", "")))
    return found


def audit_findings() -> dict[str, set[tuple[str, str, str]]]:
    """What the open cases hold: each rider's failing or undecided checks, each van's."""
    from cases.models import Case

    found: dict[str, set[tuple[str, str, str]]] = {"fail": set(), "unknown": set()}
    for case in Case.objects.exclude(status=Case.Status.CLOSED).select_related("vanpool"):
        van = case.vanpool.vanpool_id
        for employee_id, checks in case.meta.get("rider_flags", {}).items():
            for check, verdict in checks.items():
                found[verdict].add((van, check, employee_id))
        if "vanpool_rules" in case.meta.get("failed_checks", []):
            found["fail"].add((van, "vanpool_rules", ""))
    return found


def van_rules_failed() -> dict[str, tuple[str, list[str]]]:
    """Each van's §132(f) rules its judged month fails, from the open cases' evidence."""
    from cases.models import Verification

    failed = {}
    for row in Verification.objects.filter(
        check_type="vanpool_rules",
        verdict="fail",
        case__status__in=["open", "pending_reply", "hitl_review"],
    ).select_related("case__vanpool"):
        for item in row.evidence:
            if item.get("type") == "vanpool_month":
                rules = [rule for rule, verdict in item["rules"].items() if verdict == "fail"]
                failed[row.case.vanpool.vanpool_id] = (item["month"], rules)
    return failed


def assert_finds_the_seeded_problems_and_no_other() -> None:
    assert audit_findings() == seeded_findings()
    assert van_rules_failed() == {
        problem["vanpool_id"]: (problem["month"], problem["rules_failed"])
        for problem in SEEDED["problems"]
        if problem["kind"] == "vanpool_rules"
    }


@pytest.mark.django_db
def test_it_audits_the_whole_program_after_loading_it():
    from cases.models import Case

    output = load_demo("--password", PASSWORD)
    assert "Auditing every vanpool:" in output
    cases = {
        case.vanpool.vanpool_id: case.meta.get("reason")
        for case in Case.objects.select_related("vanpool")
    }
    assert cases == {case["vanpool_id"]: case["reason"] for case in SEEDED["expected_cases"]}
    # Each seeded rider, van and check, and nobody else: riders who ride enough pass.
    assert_finds_the_seeded_problems_and_no_other()
    assert "unchanged (already audited)" in load_demo("--password", PASSWORD)


@pytest.mark.django_db
def test_it_counts_only_the_emails_this_run_sent(monkeypatch):
    from types import SimpleNamespace

    from outreach.models import Message

    # Outside a test's transaction the command's sends run as each audit
    # commits, before it counts them; here they would wait for the test's end.
    monkeypatch.setattr("poolpatrol.queue.transaction", SimpleNamespace(on_commit=lambda fn: fn()))

    first = load_demo("--password", PASSWORD)
    sent = Message.objects.filter(direction="outbound", status="sent").count()
    assert sent > 0
    assert f"Outreach: {sent} emails to flagged riders" in first
    second = load_demo("--password", PASSWORD)
    assert Message.objects.filter(direction="outbound").count() == sent
    assert "Outreach: no new emails to flagged riders." in second
    assert f"Outreach: {sent} emails" not in second


@pytest.mark.django_db
def test_it_loads_without_auditing_when_asked():
    from cases.models import Verification

    load_demo("--password", PASSWORD, "--no-audit")
    assert not Verification.objects.exists()
