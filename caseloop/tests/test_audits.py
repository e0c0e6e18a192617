"""audit_vanpool: preload, specialists, synthesis, and the case it leaves behind."""

import datetime as dt
import json
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from agents.models import AgentRun
from caseloop import audits as audits_module
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
from vanpools.importing import import_data
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


# --- Chunks ----------------------------------------------------------------------------------


def audit_rows() -> dict[str, list]:
    """Everything an audit writes, without ids, public ids or times (which differ by run)."""

    def van(case_pk):
        return Case.objects.get(pk=case_pk).vanpool.vanpool_id if case_pk else ""

    return {
        "cases": sorted(
            (c.vanpool.vanpool_id, c.status, c.outcome, json.dumps(c.meta, sort_keys=True))
            for c in Case.objects.select_related("vanpool")
        ),
        "events": sorted(
            (van(e.case_id), e.from_status, e.to_status, e.note, json.dumps(e.data, sort_keys=True))
            for e in CaseEvent.objects.all()
        ),
        "verifications": sorted(
            (
                v.vanpool.vanpool_id,
                van(v.case_id),
                v.check_type,
                v.verdict,
                v.confidence,
                v.reasoning,
                json.dumps(v.evidence),
                json.dumps(v.rider_flags),
                v.backend,
                v.input_hash,
            )
            for v in Verification.objects.select_related("vanpool")
        ),
        "runs": sorted(
            (
                r.agent,
                r.backend,
                van(r.case_id),
                r.parent.agent if r.parent else "",
                r.verification.check_type if r.verification else "",
                json.dumps(r.input, sort_keys=True),
                json.dumps({k: v for k, v in r.output.items() if k != "case_id"}, sort_keys=True),
            )
            for r in AgentRun.objects.select_related("parent", "verification")
        ),
        "actions": sorted(
            (a.kind, van(a.case_id), json.dumps(a.payload, sort_keys=True))
            for a in PendingAction.objects.all()
        ),
    }


def mixed_program() -> list[str]:
    """Vanpools of every kind an audit meets, one of them with a case it will now close."""
    passing, failing, both = van_with(NEAR_ZIP), van_with(NEAR_ZIP, FAR_ZIP), van_with(FAR_ZIP)
    unknown = van_with(NEAR_ZIP)
    flex = ShiftFactory(schedule=[], schedule_text="varies week to week, see supervisor")
    RiderFactory(vanpool=unknown, employee=EmployeeFactory(home_zip=NEAR_ZIP, shift=flex))
    fixed = van_with(NEAR_ZIP, FAR_ZIP)
    audit_vanpool(fixed.vanpool_id, audit_date=AUDIT_DATE - dt.timedelta(days=1))
    far = fixed.riders.get(employee__home_zip=FAR_ZIP).employee
    far.home_zip = NEAR_ZIP
    far.save()
    paused = van_with(FAR_ZIP, status="paused")
    return [v.vanpool_id for v in (passing, failing, both, unknown, fixed, paused)]


def test_a_chunked_audit_writes_exactly_what_one_by_one_audits_write():
    ids = mixed_program()
    with transaction.atomic():
        rollback = transaction.savepoint()
        chunked = audit_vanpools(ids, audit_date=AUDIT_DATE, chunk_size=4)
        chunked_rows = audit_rows()
        transaction.savepoint_rollback(rollback)

    single = [audit_vanpool(vanpool_id, audit_date=AUDIT_DATE) for vanpool_id in ids]
    assert [(o.vanpool_id, o.status, o.case_action) for o in chunked] == [
        (o.vanpool_id, o.status, o.case_action) for o in single
    ]
    assert chunked_rows == audit_rows()
    assert [o.status for o in chunked] == [
        "passed", "failed", "failed", "unknown", "passed", "skipped"
    ]  # fmt: skip


def test_each_chunk_takes_the_same_queries_however_large_the_roster():
    def queries(count: int) -> int:
        ids = [van_with(NEAR_ZIP, NEAR_ZIP).vanpool_id for _ in range(count)]
        with CaptureQueriesContext(connection) as captured:
            audit_vanpools(ids, audit_date=AUDIT_DATE, chunk_size=5)
        return len(captured)

    one_chunk = queries(5)
    assert one_chunk <= 12  # preload, hashes, open cases, and a few inserts: not per vanpool
    assert queries(50) == 10 * one_chunk


def test_an_unchanged_roster_audited_again_writes_nothing():
    ids = mixed_program()
    audit_vanpools(ids, audit_date=AUDIT_DATE)
    before = audit_rows()
    with CaptureQueriesContext(connection) as captured:
        again = audit_vanpools(ids, audit_date=AUDIT_DATE)
    assert {o.status for o in again} == {"unchanged", "skipped"}
    assert audit_rows() == before
    writes = [q for q in captured if q["sql"].split()[0] in ("INSERT", "UPDATE", "DELETE")]
    assert writes == []


def test_one_vanpool_failing_in_a_chunk_rolls_back_only_its_own_case(monkeypatch):
    good, bad = van_with(NEAR_ZIP, FAR_ZIP), van_with(NEAR_ZIP, FAR_ZIP)
    real = audits_module.open_case

    def broken(vanpool, **kwargs):
        if vanpool.pk == bad.pk:
            raise RuntimeError("a bug for this vanpool only")
        return real(vanpool, **kwargs)

    monkeypatch.setattr(audits_module, "open_case", broken)
    outcomes = audit_vanpools([good.vanpool_id, bad.vanpool_id], audit_date=AUDIT_DATE)

    assert [o.status for o in outcomes] == ["failed", "error"]
    assert Case.objects.filter(vanpool=good).count() == 1
    assert not Case.objects.filter(vanpool=bad).exists()
    assert not Verification.objects.filter(vanpool=bad).exists()  # nothing half-written
