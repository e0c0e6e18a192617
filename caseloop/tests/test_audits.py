"""audit_vanpool: preload, specialists, synthesis, and the case it leaves behind."""

import datetime as dt
import json
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import AgentRun
from caseloop.audits import (
    AlreadyDecided,
    UnknownVanpool,
    audit_vanpool,
    audit_vanpools,
    decide_verification,
)
from cases.models import Case, CaseEvent, PendingAction, Verification
from tests.factories import (
    EmployeeFactory,
    LeaveFactory,
    RiderFactory,
    ShiftFactory,
    UserFactory,
    VanpoolFactory,
)
from vanpools.importer import import_data
from vanpools.models import Vanpool

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"
AUDIT_DATE = dt.date(2026, 11, 23)
FAR_ZIP = "90026"  # Los Angeles: ~380 commute miles from the Union City pickup
NEAR_ZIP = "94587"  # Union City, the pickup's own ZIP
WEEKDAYS = [
    {"day": d, "start": "07:00", "end": "16:00"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
]
NIGHTS = [{"day": d, "start": "22:00", "end": "06:30"} for d in ("Sun", "Mon", "Tue", "Wed", "Thu")]


def van_with(*home_zips: str, shift_schedule=None, **van_fields) -> Vanpool:
    vanpool = VanpoolFactory(schedule=WEEKDAYS, **van_fields)
    shift = ShiftFactory(schedule=shift_schedule or WEEKDAYS, overnight=shift_schedule is NIGHTS)
    for home_zip in home_zips:
        RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=home_zip, shift=shift))
    return vanpool


def test_it_opens_no_case_when_every_check_passes():
    vanpool = van_with(NEAR_ZIP, NEAR_ZIP)
    outcome = audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    assert (outcome.status, outcome.case_action, outcome.case_id) == ("passed", "none", "")
    assert not Case.objects.exists()
    assert Verification.objects.filter(vanpool=vanpool, case=None).count() == 2


def test_it_opens_one_case_with_reason_flags_and_evidence_for_a_far_rider():
    vanpool = van_with(NEAR_ZIP, FAR_ZIP)
    far = vanpool.riders.get(employee__home_zip=FAR_ZIP).employee
    outcome = audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    case = Case.objects.get()
    assert (outcome.status, outcome.case_action, outcome.case_id) == (
        "failed",
        "opened",
        case.case_id,
    )
    assert case.status == "open"
    assert case.meta["reason"] == "location_mismatch"
    assert case.meta["failed_checks"] == ["location"]
    assert case.meta["rider_flags"] == {far.employee_id: {"location": "fail"}}
    assert far.employee_id in case.meta["details"]
    location = case.verifications.get(check_type="location")
    assert location.verdict == "fail"
    assert any(
        item["employee_id"] == far.employee_id and item["miles"] > 50 for item in location.evidence
    )


def test_it_names_both_when_location_and_shift_fail():
    vanpool = van_with(FAR_ZIP, shift_schedule=NIGHTS)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    case = Case.objects.get()
    assert case.meta["reason"] == "both"
    assert sorted(case.meta["failed_checks"]) == ["location", "shift"]


def test_it_changes_nothing_when_the_same_audit_runs_twice():
    vanpool = van_with(NEAR_ZIP, FAR_ZIP)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    counts = [m.objects.count() for m in (Case, CaseEvent, Verification, AgentRun, PendingAction)]
    again = audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    assert again.status == "unchanged"
    assert [
        m.objects.count() for m in (Case, CaseEvent, Verification, AgentRun, PendingAction)
    ] == counts


def test_it_updates_the_open_case_when_the_findings_change():
    vanpool = van_with(NEAR_ZIP, FAR_ZIP)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    newcomer = EmployeeFactory(home_zip="10001", shift=vanpool.riders.first().employee.shift)
    RiderFactory(vanpool=vanpool, employee=newcomer)
    outcome = audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    case = Case.objects.get()
    assert outcome.case_action == "updated"
    assert newcomer.employee_id in case.meta["rider_flags"]
    assert case.events.filter(note__startswith="findings updated").count() == 1


def test_it_closes_the_open_case_resolved_when_a_reaudit_passes():
    vanpool = van_with(NEAR_ZIP, FAR_ZIP)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    far = vanpool.riders.get(employee__home_zip=FAR_ZIP).employee
    far.home_zip = NEAR_ZIP  # the rider fixed their record in the portal
    far.save()
    outcome = audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    case = Case.objects.get()
    assert (outcome.case_action, case.status, case.outcome) == ("closed", "closed", "resolved")


def test_it_sends_an_unparseable_schedule_to_a_human_not_to_outreach():
    vanpool = van_with(NEAR_ZIP)
    flex = ShiftFactory(schedule=[], schedule_text="varies week to week, see supervisor")
    rider = RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP, shift=flex))
    outcome = audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    case = Case.objects.get()
    assert outcome.status == "unknown"
    assert case.status == "hitl_review"
    assert case.meta["reason"] == "unknown"
    action = PendingAction.objects.get(case=case)
    assert action.kind == "decide_verification"
    assert action.payload["riders"] == {rider.employee.employee_id: {"shift": "unknown"}}


def test_it_moves_on_from_a_reviewers_ruling():
    vanpool = van_with(NEAR_ZIP)
    flex = ShiftFactory(schedule=[], schedule_text="varies week to week, see supervisor")
    rider = RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP, shift=flex))
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    action = PendingAction.objects.get()
    reviewer = UserFactory(username="reviewer")
    case = decide_verification(action, {rider.employee.employee_id: "fail"}, by=reviewer)
    assert case.status == "open"
    assert case.meta["reason"] == "shift_mismatch"
    assert case.meta["rider_flags"] == {rider.employee.employee_id: {"shift": "fail"}}
    action.refresh_from_db()
    assert (action.status, action.decided_by) == ("approved", reviewer)
    with pytest.raises(AlreadyDecided):
        decide_verification(action, {rider.employee.employee_id: "pass"}, by=reviewer)


def test_a_ruling_stands_at_the_next_audit_while_the_fact_is_unchanged():
    vanpool = van_with(NEAR_ZIP)
    flex = ShiftFactory(schedule=[], schedule_text="varies week to week, see supervisor")
    rider = RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP, shift=flex))
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    decide_verification(
        PendingAction.objects.get(), {rider.employee.employee_id: "fail"}, by=UserFactory()
    )

    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE + dt.timedelta(days=7))

    case = Case.objects.get()
    assert case.status != "hitl_review"
    assert case.meta["rider_flags"] == {rider.employee.employee_id: {"shift": "fail"}}
    assert PendingAction.objects.filter(status="pending").count() == 0


def test_a_changed_fact_is_a_new_question_for_the_reviewer():
    vanpool = van_with(NEAR_ZIP)
    flex = ShiftFactory(schedule=[], schedule_text="varies week to week, see supervisor")
    rider = RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP, shift=flex))
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    decide_verification(
        PendingAction.objects.get(), {rider.employee.employee_id: "fail"}, by=UserFactory()
    )
    flex.schedule_text = "mornings mostly, some nights"
    flex.save()

    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE + dt.timedelta(days=7))

    assert Case.objects.get().status == "hitl_review"
    asked = PendingAction.objects.get(status="pending")
    assert (
        asked.payload["inputs"][rider.employee.employee_id]["shift"]
        == "mornings mostly, some nights"
    )


def test_it_closes_the_case_when_the_reviewer_rules_pass():
    vanpool = van_with(NEAR_ZIP)
    flex = ShiftFactory(schedule=[], schedule_text="on call")
    rider = RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP, shift=flex))
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    case = decide_verification(
        PendingAction.objects.get(), {rider.employee.employee_id: "pass"}, by=UserFactory()
    )
    assert (case.status, case.outcome) == ("closed", "resolved")


def test_it_refuses_a_ruling_that_misses_a_rider():
    vanpool = van_with(NEAR_ZIP)
    flex = ShiftFactory(schedule=[], schedule_text="on call")
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP, shift=flex))
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    action = PendingAction.objects.get()
    with pytest.raises(ValueError, match="exactly these riders"):
        decide_verification(action, {"EMP-0000": "pass"}, by=UserFactory())
    action.refresh_from_db()
    assert action.status == "pending"


@pytest.mark.parametrize("status", ["suspended", "inactive"])
def test_it_skips_a_vanpool_that_is_not_active(status):
    vanpool = van_with(FAR_ZIP, status=status)
    outcome = audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    assert (outcome.status, outcome.reason) == ("skipped", f"vanpool is {status}")
    assert not Verification.objects.exists()
    assert not AgentRun.objects.exists()


def test_it_refuses_an_unknown_vanpool():
    with pytest.raises(UnknownVanpool):
        audit_vanpool("VP-404")


def test_it_writes_one_trace_tree_per_audit():
    vanpool = van_with(NEAR_ZIP, FAR_ZIP)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    root = AgentRun.objects.get(parent=None)
    assert (root.agent, root.backend) == ("case_manager", "rules")
    assert sorted(root.children.values_list("agent", flat=True)) == ["location", "shift"]
    assert root.output["case_action"] == "opened"
    for child in root.children.all():
        assert child.verification is not None
        assert child.case_id == root.case_id
        assert child.output["check"] == child.agent


def test_it_needs_no_model_call_for_a_clear_cut_audit():
    vanpool = van_with(NEAR_ZIP, FAR_ZIP)
    outcome = audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    assert (outcome.model_calls, outcome.tokens) == (0, 0)


def test_it_excuses_a_rider_on_leave_during_the_audit_week():
    vanpool = van_with(NEAR_ZIP, shift_schedule=NIGHTS)
    LeaveFactory(
        employee=vanpool.riders.get().employee,
        start_date=AUDIT_DATE - dt.timedelta(days=3),
        end_date=AUDIT_DATE + dt.timedelta(days=10),
    )
    assert audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE).status == "passed"


def queries_for_audit(riders: int) -> int:
    vanpool = van_with(*([NEAR_ZIP] * (riders - 1) + [FAR_ZIP]))
    with CaptureQueriesContext(connection) as captured:
        audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    return len(captured)


def test_it_makes_the_same_number_of_queries_at_3_and_30_riders():
    assert queries_for_audit(3) == queries_for_audit(30)


def test_it_finds_exactly_the_seeded_problems_in_the_demo_program():
    import_data(json.loads((DEMO / "program.json").read_text()))
    seeded = json.loads((DEMO / "seeded.json").read_text())
    outcomes = {
        o.vanpool_id: o
        for o in audit_vanpools(
            Vanpool.objects.values_list("vanpool_id", flat=True), audit_date=AUDIT_DATE
        )
    }
    expected = {case["vanpool_id"]: case for case in seeded["expected_cases"]}
    opened = {o.vanpool_id: o for o in outcomes.values() if o.case_action == "opened"}
    assert set(opened) == set(expected)
    for vanpool_id, case in expected.items():
        assert opened[vanpool_id].reason == case["reason"], vanpool_id
        assert sorted(opened[vanpool_id].flagged) == sorted(case["flagged_employee_ids"]), (
            vanpool_id
        )
    for van in seeded["not_audited"]:
        assert outcomes[van["vanpool_id"]].status == "skipped"
    for vanpool_id in seeded["clean_vanpools"]:
        assert outcomes[vanpool_id].status == "passed", vanpool_id
