"""Lifecycle scenarios: a whole case scripted, run through the product on a frozen clock.

A program is built, then events (audit, replies as raw email, bounces,
record changes, deadline sweeps, people's decisions) are applied at offsets
on a clock that only moves forward, through the same functions the webhook,
the workers and the dashboard call, with follow-on tasks run in-process. The
database is emptied before each scenario, so scenarios cannot see each other.
The format is checked in ``lifecycle_format``.
"""

import contextlib
import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from django.contrib.auth import get_user_model
from django.core.management.color import no_style
from django.db import connection
from django.test.utils import override_settings
from django.utils import timezone

from cases.kinds import CancelMembership
from evals.harness.evidence import checked, policy_evidence, specialist_evidence
from evals.harness.lifecycle_format import LIFECYCLE_START, expected_lifecycle, parse_offset
from evals.harness.lifecycle_mail import bounce_bytes, reply_bytes
from evals.harness.records import leave_spans, point, shift_fields, stored_zip, weekly
from evals.harness.results import CaseResult, Checked
from vanpools.geo import zip_as_given
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool

EVAL_DECIDER = "eval-coordinator"


class FrozenClock:
    """``django.utils.timezone.now`` held still, moved only by ``move_to``.

    The product reads the time only through ``timezone.now()`` (and
    ``localdate()``, which calls it), so patching that one function freezes
    audits, deadlines, sweeps and row timestamps alike — without time-machine,
    which is a test-only dependency and absent from production installs.
    """

    def __init__(self, start: dt.datetime) -> None:
        self.now = start
        self._patch = mock.patch.object(timezone, "now", lambda: self.now)

    def __enter__(self) -> "FrozenClock":
        self._patch.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._patch.stop()

    def move_to(self, moment: dt.datetime) -> None:
        self.now = max(self.now, moment)


@dataclass
class Scenario:
    case: dict[str, Any]
    vanpool_id: str
    decider: Any
    errors: list[str] = field(default_factory=list)
    answers: list[tuple[str, list[str], Any]] = field(default_factory=list)
    replies: int = 0


def run_lifecycle_case(case: dict[str, Any]) -> CaseResult:
    from poolpatrol.queue import run_inline

    empty_scratch_database()
    start = dt.datetime.fromisoformat(case.get("start", LIFECYCLE_START))
    with (
        FrozenClock(start) as clock,
        override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"),
        run_inline(),
    ):
        scenario = Scenario(case, case["program"]["vanpool"]["id"], _build_program(case))
        with _recording_answers(scenario):
            for index, event in enumerate(case["events"]):
                clock.move_to(start + parse_offset(event["at"]))
                try:
                    _apply(scenario, event)
                except Exception as exc:  # a crash is a finding, not the end of the run
                    scenario.errors.append(f"events[{index}] {event['do']}: {exc!r}")
        got = _observe(scenario)
    expected = expected_lifecycle(case)
    compared = {key: got[key] for key in expected}
    return CaseResult(
        id=case["id"],
        kind="lifecycle",
        expected=expected,
        got=got,
        correct=compared == expected and not got["errors"],
        mix=case.get("mix", "arrival"),
        checked=_lifecycle_checks(scenario),
    )


def empty_scratch_database() -> None:
    """Delete every row (keeping content types and permissions) before a scenario.

    Refuses unless the connection is a throw-away database: the command's
    scratch database or a test database.
    """
    name = str(connection.settings_dict["NAME"])
    if not ("poolpatrol-scratch-" in name or "test" in Path(name).name or "memory" in name):
        raise RuntimeError(f"refusing to empty {name!r}: lifecycle scenarios need a scratch DB")
    keep = {"django_content_type", "auth_permission", "auth_group", "auth_group_permissions"}
    tables = [
        table
        for table in connection.introspection.django_table_names(
            only_existing=True, include_views=False
        )
        if table not in keep
    ]
    statements = connection.ops.sql_flush(
        no_style(), tables, reset_sequences=False, allow_cascade=True
    )
    connection.ops.execute_sql_flush(statements)


def _build_program(case: dict[str, Any]) -> Any:
    program = case["program"]
    van = program["vanpool"]
    pickup_lat, pickup_lng = point(van.get("pickup"), "program.vanpool.pickup")
    shifts = {
        shift_id: Shift.objects.create(**shift_fields(shift_id, shift))
        for shift_id, shift in program.get("shifts", {}).items()
    }
    vanpool = Vanpool.objects.create(
        vanpool_id=van["id"],
        name=str(van.get("name", case["id"]))[:120],
        work_site=van.get("work_site", "Fremont Campus"),
        pickup_address=van.get("pickup_address", ""),
        pickup_lat=pickup_lat,
        pickup_lng=pickup_lng,
        pickup_zip=stored_zip(van.get("pickup_zip", "")),
        max_commute_miles=van.get("max_miles"),
        schedule=weekly(van["schedule"], "vanpool.schedule") if van.get("schedule") else [],
    )
    for index, rider in enumerate(program["riders"]):
        first, _, last = str(rider.get("name", f"Rider {index + 1}")).partition(" ")
        home_lat, home_lng = point(rider.get("home"), "home")
        employee = Employee.objects.create(
            employee_id=rider["employee_id"],
            first_name=first,
            last_name=last or "Eval",
            email=rider.get("email", f"{rider['employee_id'].lower()}@example.com"),
            work_site=vanpool.work_site,
            home_zip=stored_zip(rider["home_zip"]),
            home_zip_as_given=zip_as_given(str(rider["home_zip"] or "")),
            home_lat=home_lat,
            home_lng=home_lng,
            time_type=rider.get("time_type", "full_time"),
            status=rider.get("status", "active"),
            shift=shifts.get(rider.get("shift", "")),
        )
        for begin, end in leave_spans(rider.get("pto", [])):
            Leave.objects.create(employee=employee, start_date=begin, end_date=end)
        Rider.objects.create(vanpool=vanpool, employee=employee, joined=dt.date(2026, 1, 5))
    return get_user_model().objects.create_user(
        username=EVAL_DECIDER, email="coordinator@example.com", is_staff=True, is_superuser=True
    )


def _apply(scenario: Scenario, event: dict[str, Any]) -> None:
    from caseloop.audits import audit_vanpool
    from caseloop.loop.deadlines import process_timeouts
    from outreach.inbound import receive_raw

    kind = event["do"]
    if kind == "audit":
        audit_vanpool(scenario.vanpool_id)
    elif kind == "sweep":
        process_timeouts()
    elif kind == "reply":
        scenario.replies += 1
        receive_raw(
            reply_bytes(
                event,
                vanpool_id=scenario.vanpool_id,
                case_id=scenario.case["id"],
                number=scenario.replies,
            ),
            provider="evaluate",
        )
    elif kind == "bounce":
        receive_raw(bounce_bytes(event, case_id=scenario.case["id"]), provider="evaluate")
    elif kind == "record_change":
        _change_record(event)
    elif kind == "decide":
        _decide(scenario, event)


def _change_record(event: dict[str, Any]) -> None:
    employee = Employee.objects.get(employee_id=event["employee"])
    if "home_zip" in event:
        employee.home_zip = stored_zip(event["home_zip"])
        employee.home_zip_as_given = zip_as_given(str(event["home_zip"] or ""))
        if "home" not in event:
            employee.home_lat = employee.home_lng = None  # a new address: old coordinates go
    if "home" in event:
        employee.home_lat, employee.home_lng = point(event["home"], "home")
    if "shift" in event:
        employee.shift = Shift.objects.get(shift_id=event["shift"]) if event["shift"] else None
    if "time_type" in event:
        employee.time_type = event["time_type"]
    if "email" in event:
        employee.email = event["email"]
        employee.email_undeliverable_at = None
    employee.save()
    for begin, end in leave_spans(event.get("pto", [])):
        Leave.objects.create(employee=employee, start_date=begin, end_date=end)


def _decide(scenario: Scenario, event: dict[str, Any]) -> None:
    """A coordinator decides the pending action the scenario names, as the dashboard would."""
    from cases.models import PendingAction

    queued = PendingAction.objects.filter(
        kind=event["action"], status=PendingAction.Status.PENDING
    ).order_by("created_at", "id")
    pending: Iterable[PendingAction] = queued
    employee = event.get("employee")
    if employee:
        pending = [
            a
            for a in queued.select_related("rider__employee")
            if (a.rider and a.rider.employee.employee_id == employee) or a.ask.about() == employee
        ]
    action = next(iter(pending), None)
    who = f" for {employee}" if employee else ""
    if event.get("expect_refused"):
        _decide_stale(scenario, event, action, who)
        return
    if action is None:
        scenario.errors.append(f"no pending {event['action']}{who} to {event['decision']}")
        return
    _carry_out(scenario, event, action)


def _carry_out(scenario: Scenario, event: dict[str, Any], action: Any) -> None:
    from caseloop import decisions

    note = event.get("note", "")
    if event["decision"] == "reject":
        decisions.reject(action, by=scenario.decider, note=note)
        return
    edits = dict(event.get("edits", {}))
    if event.get("override"):
        edits |= {"override": True, "override_reason": event.get("override_reason", note)}
    decisions.approve(action, by=scenario.decider, note=note, edits=edits)


def _decide_stale(scenario: Scenario, event: dict[str, Any], pending: Any, who: str) -> None:
    """A coordinator acts on an action from a page opened earlier: it must be refused."""
    from caseloop.decisions import AlreadyDecided, InvalidDecision
    from cases.models import PendingAction

    if pending is not None:
        scenario.errors.append(f"{event['action']}{who} was still pending, not refused")
        return
    stale = PendingAction.objects.filter(kind=event["action"]).order_by("-id")
    if event.get("employee"):
        stale = stale.filter(payload__employee_id=event["employee"])
    action = stale.first()
    if action is None:
        scenario.errors.append(f"no {event['action']}{who} was ever asked for")
        return
    try:
        _carry_out(scenario, event, action)
    except (AlreadyDecided, InvalidDecision):
        return
    scenario.errors.append(f"a stale {event['action']}{who} went through")


@contextlib.contextmanager
def _recording_answers(scenario: Scenario) -> Iterator[None]:
    """Keep each answer the loop writes to a rider, with the facts it was written from."""
    from outreach.replies.answers import answer_question as original

    def answer_question(question: str, facts: Any) -> list[str]:
        paragraphs = original(question, facts)
        scenario.answers.append((facts.employee_id, paragraphs, facts))
        return paragraphs

    # Patched where the loop looks it up, so every answer it writes passes through here.
    with mock.patch("caseloop.loop.buckets.answer_question", answer_question):
        yield


def _observe(scenario: Scenario) -> dict[str, Any]:
    from cases.models import Case, PendingAction
    from outreach.models import Message

    case = Case.objects.filter(vanpool__vanpool_id=scenario.vanpool_id).order_by("-id").first()
    inbound = Message.objects.filter(direction=Message.Direction.INBOUND).order_by("id")
    proposed = PendingAction.objects.of(CancelMembership)
    return {
        "status": case.status if case else "none",
        "outcome": case.outcome if case else "",
        "human_decisions": PendingAction.objects.filter(decided_by__isnull=False).count(),
        "cancelled": sorted(
            Rider.objects.filter(status=Rider.Status.CANCELLED).values_list(
                "employee__employee_id", flat=True
            )
        ),
        "proposed": sorted(set(proposed.values_list("rider__employee__employee_id", flat=True))),
        "emails_sent": Message.objects.filter(
            direction=Message.Direction.OUTBOUND, status=Message.Status.SENT
        ).count(),
        "buckets": [m.bucket or m.kind or m.status for m in inbound],
        "cases": Case.objects.count(),
        "reaudits": case.reaudit_count if case else 0,
        "waiting_on_people": sorted(
            PendingAction.objects.filter(status=PendingAction.Status.PENDING).values_list(
                "kind", flat=True
            )
        ),
        "errors": scenario.errors,
    }


def _lifecycle_checks(scenario: Scenario) -> list[Checked]:
    """Faithfulness of every specialist reasoning and every answer in the scenario."""
    from agents.models import AgentRun
    from cases.models import Verification

    results = []
    for verification in Verification.objects.order_by("id"):
        run = AgentRun.objects.filter(verification=verification).select_related("parent").first()
        facts = (run.parent.input.get("facts", {}) if run and run.parent else {}) or {}
        assert verification.audit_date is not None  # every audit dates what it stores
        evidence = specialist_evidence(
            verification.evidence,
            facts,
            verification.audit_date,
            list(verification.rider_flags),
        )
        results.append(
            checked(f"{verification.check_type} reasoning", verification.reasoning, evidence)
        )
    for employee_id, paragraphs, facts in scenario.answers:
        results.append(
            checked(f"answer to {employee_id}", "\n".join(paragraphs), [facts, policy_evidence()])
        )
    return results


def lifecycle_metrics(results: list[CaseResult]) -> dict[str, float | int]:
    total = len(results)
    expected_cancels = {(r.id, e) for r in results for e in r.expected["proposed"]}
    proposed = {(r.id, e) for r in results for e in r.got["proposed"]}
    wrongly_cancelled = sum(
        len(set(r.got["cancelled"]) - set(r.expected["cancelled"])) for r in results
    )
    arrivals = [r for r in results if r.mix == "arrival"]
    return {
        "lifecycle_cases": total,
        "lifecycle_accuracy": sum(r.correct for r in results) / total,
        "outcome_accuracy": sum(
            (r.got["status"], r.got["outcome"]) == (r.expected["status"], r.expected["outcome"])
            for r in results
        )
        / total,
        "cancel_precision": len(proposed & expected_cancels) / len(proposed) if proposed else 1.0,
        "cancel_recall": (
            len(proposed & expected_cancels) / len(expected_cancels) if expected_cancels else 1.0
        ),
        "wrongful_cancellations": wrongly_cancelled,
        **({"automation_rate": _automation(arrivals)} if arrivals else {}),
        "automation_rate_all": _automation(results),
        "arrival_cases": len(arrivals),
        "human_decisions_per_case": sum(r.got["human_decisions"] for r in results) / total,
        "emails_per_case": sum(r.got["emails_sent"] for r in results) / total,
        "scenario_errors": sum(len(r.got["errors"]) for r in results),
    }


def _automation(results: list[CaseResult]) -> float:
    """The share that ended closed, or never opened a case, with no human decision."""
    settled = [
        r for r in results if r.got["status"] in ("closed", "none") and not r.got["human_decisions"]
    ]
    return len(settled) / len(results)
