"""The demo's simulated quarter (caseloop/demo_history.py), played through the real workflow.

The history commits as it goes and its follow-on work (outreach, sends,
re-audits, the supervisor) runs on commit, as in the command: the tests that
play it use real transactions. Time is frozen at conftest.FROZEN_NOW, a Monday,
so "this week" starts on 2026-11-23 and the history ends the Sunday before.
"""

import datetime as dt
import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission
from django.core import mail
from django.core.management import call_command
from django.utils import timezone
from pydantic import ValidationError

from caseloop.demo_history import (
    Decision,
    HistoryRefused,
    Scenario,
    ScenarioError,
    build_history,
    decide,
    load_scenario,
    monday_of,
)
from cases.models import Case, CaseEvent, PendingAction
from outreach.models import Message
from tests.factories import UserFactory
from vanpools.demo import DEMO_PROGRAM
from vanpools.importing import import_data
from vanpools.models import Employee, Rider

PROGRAM: dict[str, Any] = json.loads(DEMO_PROGRAM.read_text(encoding="utf-8"))
SEEDED: dict[str, Any] = json.loads((DEMO_PROGRAM.parent / "seeded.json").read_text("utf-8"))
THIS_MONDAY = dt.date(2026, 11, 23)

# Three riders over three weeks: a silent one whose seat is cancelled, one who
# fixes her record (closed with no person involved), and one who escalates,
# is answered by a person, then goes quiet, and whose cancellation is rejected.
SMALL: dict[str, Any] = {
    "weeks": 3,
    "audit_at": "06:00",
    "sweep_at": "07:00",
    "vanpools": ["VP-101", "VP-104", "VP-107"],
    "roster_at": {"weeks_ago": 4, "day": "Fri", "at": "16:00"},
    "riders": [
        {
            "employee_id": "EMP-9001",
            "first_name": "Darnell",
            "last_name": "Okafor",
            "email": "darnell.okafor@example.com",
            "work_site": "Fremont Campus",
            "home_zip": "95823",
            "shift_id": "DAY",
            "vanpool_id": "VP-101",
            "joined": "2022-04-18",
        },
        {
            "employee_id": "EMP-9002",
            "first_name": "Mei-Ling",
            "last_name": "Chen",
            "email": "mei-ling.chen@example.com",
            "work_site": "Fremont Campus",
            "home_zip": "95380",
            "shift_id": "DAY",
            "vanpool_id": "VP-104",
            "joined": "2023-09-05",
        },
        {
            "employee_id": "EMP-9003",
            "first_name": "Rosa",
            "last_name": "Delgado",
            "email": "rosa.delgado@example.com",
            "work_site": "Fremont Campus",
            "home_zip": "95376",
            "shift_id": "4X10",
            "vanpool_id": "VP-107",
            "joined": "2022-10-03",
        },
    ],
    "stories": [
        {
            "title": "silent: cancelled",
            "events": [
                {
                    "weeks_ago": 2,
                    "day": "Tue",
                    "at": "10:15",
                    "decide": {
                        "employee_id": "EMP-9001",
                        "action": "cancel_membership",
                        "decision": "approve",
                        "note": "Moved to Sacramento.",
                    },
                }
            ],
        },
        {
            "title": "fixed: resolved without a person",
            "events": [
                {
                    "weeks_ago": 3,
                    "day": "Tue",
                    "at": "09:00",
                    "roster": {"EMP-9002": {"home_zip": "94551"}},
                },
                {
                    "weeks_ago": 3,
                    "day": "Tue",
                    "at": "12:05",
                    "reply": {
                        "from": "EMP-9002",
                        "text": "Got it. I updated my address in the employee portal, "
                        "I'm back in Livermore.",
                    },
                },
            ],
        },
        {
            "title": "escalated, answered, dismissed",
            "events": [
                {
                    "weeks_ago": 3,
                    "day": "Fri",
                    "at": "16:00",
                    "roster": {"EMP-9003": {"shift_id": "DAY"}},
                },
                {
                    "weeks_ago": 2,
                    "day": "Tue",
                    "at": "09:40",
                    "reply": {
                        "from": "EMP-9003",
                        "text": "I'm on modified duty after knee surgery. My doctor has me on "
                        "eight-hour days for the next two months and HR has the paperwork. "
                        "Please don't take my seat away, I can't drive yet.",
                    },
                },
                {
                    "weeks_ago": 2,
                    "day": "Wed",
                    "at": "15:10",
                    "decide": {
                        "employee_id": "EMP-9003",
                        "action": "review_email",
                        "decision": "approve",
                    },
                },
                {
                    "weeks_ago": 1,
                    "day": "Tue",
                    "at": "11:00",
                    "decide": {
                        "employee_id": "EMP-9003",
                        "action": "cancel_membership",
                        "decision": "reject",
                        "note": "Modified duty until January; keep her seat.",
                    },
                },
                {
                    "weeks_ago": 1,
                    "day": "Tue",
                    "at": "11:30",
                    "roster": {"EMP-9003": {"shift_id": "4X10"}},
                },
            ],
        },
    ],
}


def staff_groups() -> None:
    """The migrations' staff groups; a transactional test may start after a flush took them."""
    decide = Permission.objects.get(
        content_type__app_label="cases", codename="decide_pendingaction"
    )
    for name in ("Auditors", "Coordinators"):
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(decide)


@pytest.fixture
def small_program(transactional_db: None) -> Scenario:
    """The small scenario's three vans and their shifts, imported as HR would, and a coordinator."""
    vans = [van for van in PROGRAM["vanpools"] if van["vanpool_id"] in SMALL["vanpools"]]
    import_data({"shifts": PROGRAM["shifts"], "vanpools": vans})
    staff_groups()
    UserFactory(username="coordinator", is_staff=True, groups=["Coordinators"])
    return Scenario.model_validate(SMALL)


def rows_written() -> dict[str, int]:
    return {
        "cases": Case.objects.count(),
        "events": CaseEvent.objects.count(),
        "actions": PendingAction.objects.count(),
        "messages": Message.objects.count(),
        "riders": Rider.objects.count(),
    }


def week_of(moment: dt.datetime) -> dt.date:
    return monday_of(timezone.localtime(moment).date())


# --- A small quarter ---------------------------------------------------------------------


def test_it_closes_cases_every_way_over_the_weeks_some_by_people_some_alone(small_program):
    result = build_history(small_program)

    assert (result.opened, result.resolved, result.cancelled, result.dismissed) == (3, 1, 1, 1)
    assert (result.first_day, result.last_day) == (dt.date(2026, 11, 2), dt.date(2026, 11, 22))
    assert not Case.objects.exclude(status=Case.Status.CLOSED).exists()
    cases = {case.outcome: case for case in Case.objects.all()}
    # Opened and closed at the moments the story set, over the three weeks.
    assert [week_of(cases[o].closed_at) for o in ("resolved", "cancelled", "dismissed")] == [
        dt.date(2026, 11, 2),
        dt.date(2026, 11, 9),
        dt.date(2026, 11, 16),
    ]
    assert week_of(cases["dismissed"].created_at) == dt.date(2026, 11, 9)
    decided = PendingAction.objects.filter(decided_by__username="coordinator")
    assert sorted(decided.values_list("kind", "status")) == [
        ("cancel_membership", "approved"),
        ("cancel_membership", "rejected"),
        ("review_email", "approved"),
    ]
    # The fixed record was closed by the re-audit her reply set off, no person involved.
    resolved = cases["resolved"]
    assert not resolved.events.filter(actor_user__isnull=False).exists()
    closing = resolved.events.get(from_status="pending_reply", to_status="closed")
    assert closing.actor_agent == "outreach"
    seat = Rider.objects.get(employee__employee_id="EMP-9001")
    assert (seat.status, seat.cancelled_by.username) == ("cancelled", "coordinator")


def test_replies_come_in_and_emails_go_out_through_the_products_own_paths(small_program):
    build_history(small_program)

    replies = Message.objects.filter(direction=Message.Direction.INBOUND).order_by("received_at")
    assert [(m.employee.employee_id, m.bucket, m.status) for m in replies] == [
        ("EMP-9002", "update", "processed"),
        ("EMP-9003", "escalation", "processed"),
    ]
    first = replies[0]
    assert first.subject.startswith("Re: Action needed: please check your home address")
    assert (
        first.thread
        == Message.objects.get(template="location_mismatch", employee=first.employee).thread
    )
    assert first.headers["X-Pool-Patrol-Received-Via"] == "demo-history"
    assert "\n> " in first.text_body  # quoting our email, as mail programs do
    sent = Message.objects.filter(direction=Message.Direction.OUTBOUND, status="sent")
    assert len(mail.outbox) == sent.count() > 5
    templates = set(sent.values_list("template", flat=True))
    assert {"location_mismatch", "shift_mismatch", "reminder", "cancelled"} <= templates
    assert {"resolved", "holding_reply"} <= templates
    assert all(message.sent_at == message.created_at for message in sent)


def test_a_second_run_changes_nothing_and_writes_to_nobody(small_program):
    build_history(small_program)
    before, emails = rows_written(), len(mail.outbox)

    again = build_history(small_program)

    assert not again.built
    assert rows_written() == before
    assert len(mail.outbox) == emails


@pytest.mark.django_db
def test_it_refuses_a_model_backend_and_writes_nothing(settings):
    settings.LLM_BACKEND = "openai"
    with pytest.raises(HistoryRefused, match="LLM_BACKEND=openai"):
        build_history(Scenario.model_validate(SMALL))
    assert not Employee.objects.exists()


# --- The scenario file ---------------------------------------------------------------------


def test_an_event_is_exactly_one_thing():
    both = {
        "weeks_ago": 1,
        "day": "Mon",
        "at": "09:00",
        "roster": {},
        "reply": {"from": "E", "text": "t"},
    }
    broken = {**SMALL, "stories": [{"title": "x", "events": [both]}]}
    with pytest.raises(ValidationError, match="exactly one of roster, reply or decide"):
        Scenario.model_validate(broken)


def test_an_event_after_the_quarter_is_refused():
    late = {"weeks_ago": 9, "day": "Mon", "at": "09:00", "roster": {"EMP-9001": {}}}
    broken = {**SMALL, "stories": [{"title": "x", "events": [late]}]}
    with pytest.raises(ValidationError, match="within the 3 weeks"):
        Scenario.model_validate(broken)


def test_the_demo_history_keeps_to_its_own_riders_on_vans_that_pass_today():
    scenario = load_scenario()
    program_ids = {employee["employee_id"] for employee in PROGRAM["employees"]}
    program_emails = {employee["email"] for employee in PROGRAM["employees"]}
    flagged_today = {case["vanpool_id"] for case in SEEDED["expected_cases"]}
    seats = {row["vanpool_id"] for row in scenario.riders}
    moves = {
        columns["vanpool_id"]
        for story in scenario.stories
        for event in story.events
        for columns in (event.roster or {}).values()
        if "vanpool_id" in columns
    }

    assert program_ids.isdisjoint(scenario.employee_ids)
    assert program_emails.isdisjoint(row["email"] for row in scenario.riders)
    assert set(scenario.vanpools) == set(SEEDED["clean_vanpools"])
    assert seats | moves <= set(scenario.vanpools)
    assert flagged_today.isdisjoint(scenario.vanpools)


# --- The whole demo ------------------------------------------------------------------------


def load_demo(*args: str) -> str:
    out = io.StringIO()
    call_command("load_demo", "--password", "demo-pass-123", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize("flag", ["--no-history", "--no-audit"])
def test_load_demo_can_leave_the_past_weeks_out(flag, tmp_path, settings):
    # --no-audit loads only: the past weeks are audits too.
    settings.VAR_DIR = tmp_path

    output = load_demo(flag)

    assert "Simulat" not in output
    assert not Employee.objects.filter(employee_id="EMP-2001").exists()


@pytest.mark.django_db
def test_load_demo_says_why_it_skips_the_past_weeks_and_audits_today_anyway(tmp_path, settings):
    settings.VAR_DIR = tmp_path
    settings.REPLY_WAIT_DAYS = 5

    output = load_demo()

    assert "skipped: it is scripted for the offline defaults, and here REPLY_WAIT_DAYS=5" in output
    assert "cases opened                       11" in output
    assert not Employee.objects.filter(employee_id="EMP-2001").exists()


@pytest.mark.django_db(transaction=True)
def test_load_demo_plays_the_quarter_once_and_today_finds_what_it_found_without_it(
    tmp_path, settings
):
    settings.VAR_DIR = tmp_path  # the demo keeps its passwords there
    staff_groups()

    output = load_demo()

    assert "Simulated 11 weeks of history (Sep 7 – Nov 22): 22 cases opened" in output
    assert "Outreach: 10 emails to flagged riders" in output
    expected = {case["vanpool_id"] for case in SEEDED["expected_cases"]}
    still_open = Case.objects.exclude(status=Case.Status.CLOSED)
    assert set(still_open.values_list("vanpool__vanpool_id", flat=True)) == expected
    assert still_open.filter(created_at__date__lt=THIS_MONDAY).count() == 0
    outcomes = set(Case.objects.values_list("outcome", flat=True))
    assert outcomes == {"", "resolved", "cancelled", "dismissed"}
    # Cases opened in every one of the twelve weeks the program page charts.
    opened_weeks = {week_of(case.created_at) for case in Case.objects.all()}
    assert opened_weeks == {THIS_MONDAY - dt.timedelta(weeks=n) for n in range(12)}
    before, emails = rows_written(), len(mail.outbox)

    assert "already there from an earlier run: nothing changed" in load_demo()
    assert rows_written() == before
    assert len(mail.outbox) == emails


@pytest.mark.django_db
def test_a_label_the_reader_did_not_need_is_skipped_but_a_missing_cancellation_is_an_error():
    label = Decision(
        employee_id="EMP-1", action="label_reply", decision="approve", bucket="question"
    )
    assert decide(label) is None  # read confidently: nothing waits for a person
    cancel = Decision(employee_id="EMP-1", action="cancel_membership", decision="approve")
    with pytest.raises(ScenarioError, match="no cancel_membership is waiting for EMP-1"):
        decide(cancel)
