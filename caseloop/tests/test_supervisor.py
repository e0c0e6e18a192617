"""The supervisor's review of a case at pre_cancel: checks, assessment, score, task, queries."""

import datetime as dt
import json

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agents import llm
from agents.models import AgentRun
from caseloop.audits import audit_vanpool
from caseloop.loop.reaudit import enter_pre_cancel
from caseloop.supervisor.package import Issue
from caseloop.supervisor.review import (
    latest_pre_cancel_event,
    latest_review,
    latest_reviews_for,
    review_pre_cancel,
    score_issues,
    validate,
)
from caseloop.tests.test_loop import (
    FAR_ZIP,
    NEAR_ZIP,
    deliver,
    far_rider,
    pre_cancelled,
    reply,
)
from cases.models import Case, CaseEvent, CaseReview, PendingAction, Verification
from outreach.models import EmailThread, Message
from tests.factories import (
    DAY_SCHEDULE,
    EmployeeFactory,
    MessageFactory,
    RiderFactory,
    ShiftFactory,
    VanpoolFactory,
)
from tests.llm_server import FakeLLMServer, Scripted, api_error, completion
from vanpools.models import Rider

pytestmark = pytest.mark.django_db
Status = Case.Status


@pytest.fixture
def van():
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Nadia", home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Farid", home_zip=FAR_ZIP))
    return vanpool


@pytest.fixture
def case(van, run):
    """The audit fails the far rider; outreach writes to them."""
    run(audit_vanpool, van.vanpool_id)
    return Case.objects.get(vanpool=van)


@pytest.fixture
def pre_cancel_case(case, run, _frozen_time):
    """No reply by the deadline: the full waiting period, one delivered email, a re-audit."""
    return pre_cancelled(case, run, _frozen_time)


def issue_types(review: CaseReview) -> set[tuple[str, str]]:
    return {(issue["type"], issue["severity"]) for issue in review.issues}


def set_meta(case: Case, **changes: object) -> Case:
    Case.objects.filter(pk=case.pk).update(meta={**case.meta, **changes})
    case.refresh_from_db()
    return case


def latest_location(case: Case) -> Verification:
    return case.verifications.filter(check_type="location").order_by("-created_at", "-id").first()


# --- A sound case passes -------------------------------------------------------------------


def test_it_reviews_a_case_once_when_it_reaches_pre_cancel(pre_cancel_case):
    review = CaseReview.objects.get()
    assert review.case == pre_cancel_case
    assert review.trigger_event == latest_pre_cancel_event(pre_cancel_case)
    assert (review.score, review.passed, review.issues) == (100, True, [])
    assert review.justification == "strong"
    assert review.feedback["checks"] == dict.fromkeys(
        ["summary", "evidence", "consistency", "timeline", "membership", "replies"], "pass"
    )
    assert (review.backend, review.model, review.deterministic_only) == ("rules", "", True)
    run = AgentRun.objects.get(agent="supervisor")
    assert run.case == pre_cancel_case
    assert run.output == {"score": 100, "passed": True, "issues": 0}


def test_the_review_task_run_twice_writes_one_review(pre_cancel_case):
    event = latest_pre_cancel_event(pre_cancel_case)
    first = review_pre_cancel(event.pk)
    second = review_pre_cancel(event.pk)
    assert first == second == CaseReview.objects.get()
    assert AgentRun.objects.filter(agent="supervisor").count() == 1


def test_the_review_task_skips_a_case_that_has_left_pre_cancel(case, run, _frozen_time):
    enter_pre_cancel(case, why="test")  # on_commit not run: no review yet
    event = latest_pre_cancel_event(case)
    deliver(run, reply(case, far_rider(case.vanpool), "Wait, I moved back last week!"))
    assert Case.objects.get(pk=case.pk).status != Status.PRE_CANCEL
    assert review_pre_cancel(event.pk) is None
    assert not CaseReview.objects.exists()


def test_it_never_changes_the_case(pre_cancel_case):
    def snapshot():
        case = Case.objects.get(pk=pre_cancel_case.pk)
        return (
            case.status,
            case.meta,
            case.updated_at,
            case.reaudit_count,
            CaseEvent.objects.count(),
            list(PendingAction.objects.values_list("status", flat=True)),
        )

    set_meta(pre_cancel_case, details="")  # a review with something to say
    before = snapshot()
    validate(pre_cancel_case)
    assert snapshot() == before
    assert CaseReview.objects.count() == 2  # every validation is kept


def test_a_second_validation_is_a_new_row_and_the_first_is_never_overwritten(pre_cancel_case):
    first = CaseReview.objects.get()
    with pytest.raises(ValidationError, match="append-only"):
        first.save()
    second = validate(pre_cancel_case)
    assert second.pk != first.pk
    assert latest_review(pre_cancel_case) == second


# --- Each deterministic check ----------------------------------------------------------------


def test_a_missing_summary_is_a_missing_section(pre_cancel_case):
    review = validate(set_meta(pre_cancel_case, details=""))
    assert issue_types(review) == {("missing_section", "medium")}
    assert review.feedback["checks"]["summary"] == "fail"
    assert (review.score, review.passed) == (85, True)


def test_a_summary_that_does_not_name_the_rider_is_not_substantive(pre_cancel_case):
    review = validate(set_meta(pre_cancel_case, details="Failed the location check."))
    assert [i["type"] for i in review.issues] == ["summary", "summary"]
    assert "EMP-" in review.issues[1]["description"]
    assert (review.score, review.passed) == (90, True)


def test_evidence_without_citations_fails(pre_cancel_case, van):
    verification = latest_location(pre_cancel_case)
    far = far_rider(van).employee_id
    evidence = [
        {**item, "cites": []} if item["employee_id"] == far else item
        for item in verification.evidence
    ]
    Verification.objects.filter(pk=verification.pk).update(evidence=evidence)
    review = validate(pre_cancel_case)
    assert issue_types(review) == {("evidence", "high")}
    assert far in review.issues[0]["description"]
    assert (review.score, review.passed) == (90, False)


def test_a_failed_check_with_no_evidence_for_the_rider_is_a_missing_section(pre_cancel_case, van):
    verification = latest_location(pre_cancel_case)
    far = far_rider(van).employee_id
    evidence = [item for item in verification.evidence if item["employee_id"] != far]
    Verification.objects.filter(pk=verification.pk).update(evidence=evidence)
    review = validate(pre_cancel_case)
    assert ("missing_section", "high") in issue_types(review)
    assert review.feedback["checks"]["evidence"] == "fail"
    assert not review.passed


def test_failed_checks_that_disagree_with_the_latest_verifications_are_inconsistent(
    pre_cancel_case,
):
    review = validate(set_meta(pre_cancel_case, failed_checks=["location", "shift"]))
    assert issue_types(review) == {("consistency", "high")}
    assert "shift" in review.issues[0]["description"]
    assert (review.score, review.passed) == (80, False)


def test_a_flag_the_latest_verification_no_longer_supports_is_inconsistent(pre_cancel_case, van):
    verification = latest_location(pre_cancel_case)
    far = far_rider(van).employee_id
    Verification.objects.filter(pk=verification.pk).update(
        rider_flags={**verification.rider_flags, far: "pass"}, verdict="pass"
    )
    review = validate(pre_cancel_case)
    assert review.feedback["checks"]["consistency"] == "fail"
    assert {i["type"] for i in review.issues} >= {"consistency"}
    assert not review.passed


def test_no_delivered_email_fails_the_timeline(pre_cancel_case):
    Message.objects.filter(direction="outbound").update(status=Message.Status.FAILED)
    review = validate(pre_cancel_case)
    assert issue_types(review) == {("timeline", "high")}
    assert "No email to" in review.issues[0]["description"]
    assert not review.passed


def test_a_bounced_email_is_not_a_delivered_one(pre_cancel_case):
    Message.objects.filter(direction="outbound").update(flags=["bounced"])
    assert not validate(pre_cancel_case).passed


def test_less_than_the_full_waiting_period_fails_the_timeline(pre_cancel_case):
    Message.objects.filter(direction="outbound").update(
        sent_at=timezone.now() - dt.timedelta(days=4)
    )
    review = validate(pre_cancel_case)
    assert issue_types(review) == {("timeline", "high")}
    assert "4.0 days of the 7-day waiting period" in review.issues[0]["description"]


def test_the_waiting_period_runs_from_the_first_delivered_email(pre_cancel_case, settings):
    settings.REPLY_WAIT_DAYS = 8
    assert not validate(pre_cancel_case).passed
    settings.REPLY_WAIT_DAYS = 7
    assert validate(pre_cancel_case).passed


def test_pre_cancel_without_outreach_or_a_reaudit_is_missing_sections(van, run):
    far = far_rider(van)
    far.email_undeliverable_at = timezone.now()
    far.save()
    run(audit_vanpool, van.vanpool_id)  # no email: the address bounced before
    case = enter_pre_cancel(Case.objects.get(vanpool=van), why="by hand")
    review = validate(case)
    missing = [i["description"] for i in review.issues if i["type"] == "missing_section"]
    assert missing == [
        f"No email was ever written to {far.employee_id}.",
        "The case was never re-audited after the outreach.",
    ]
    assert review.score == 70 and not review.passed


def test_the_reaudit_limit_path_still_needs_the_full_waiting_period(case, van, run, _frozen_time):
    far = far_rider(van)
    for day in range(1, 5):
        _frozen_time.shift(dt.timedelta(days=1))
        deliver(run, reply(case, far, f"Ok thanks, noted ({day})."))
    case.refresh_from_db()
    assert case.status == Status.PRE_CANCEL
    review = CaseReview.objects.get(case=case)
    # Four re-audits is past the limit (the policy's second road to pre_cancel),
    # but the rider has had four of the seven days.
    assert issue_types(review) == {("timeline", "high")}
    assert "waiting period" in review.issues[0]["description"]


def test_a_pre_cancel_without_the_deadline_reaudit_or_the_limit_fails(case, van, run, _frozen_time):
    _frozen_time.shift(dt.timedelta(days=8))
    deliver(run, reply(case, far_rider(van), "Ok thanks, noted."))  # re-audit 1, still failing
    case = enter_pre_cancel(Case.objects.get(pk=case.pk), why="by hand")
    review = validate(case)
    assert issue_types(review) == {("timeline", "high")}
    assert (
        "neither the deadline re-audit nor past the re-audit limit"
        in (review.issues[0]["description"])
    )


def test_a_flagged_rider_who_is_no_longer_an_active_member_fails(pre_cancel_case, van):
    Rider.objects.filter(employee=far_rider(van)).update(
        status=Rider.Status.CANCELLED, cancelled_at=timezone.now()
    )
    review = validate(pre_cancel_case)
    assert issue_types(review) == {("membership", "high")}
    assert "not an active member" in review.issues[0]["description"]


def test_an_unclassified_reply_since_the_last_reaudit_fails(pre_cancel_case, van):
    MessageFactory(
        thread=EmailThread.objects.get(case=pre_cancel_case),
        direction=Message.Direction.INBOUND,
        kind=Message.Kind.REPLY,
        employee=far_rider(van),
        status=Message.Status.RECEIVED,
        received_at=timezone.now() + dt.timedelta(minutes=5),
    )
    review = validate(pre_cancel_case)
    assert issue_types(review) == {("reply", "high")}
    assert "has not been classified" in review.issues[0]["description"]


def test_an_unanswered_question_since_the_last_reaudit_fails(pre_cancel_case, van):
    MessageFactory(
        thread=EmailThread.objects.get(case=pre_cancel_case),
        direction=Message.Direction.INBOUND,
        kind=Message.Kind.REPLY,
        employee=far_rider(van),
        status=Message.Status.PROCESSED,
        bucket=Message.Bucket.QUESTION,
        received_at=timezone.now() + dt.timedelta(minutes=5),
    )
    review = validate(pre_cancel_case)
    assert "asked a question that was not answered" in review.issues[0]["description"]


def test_a_reply_waiting_for_a_person_fails(case, van, run, _frozen_time, settings):
    settings.MAX_REAUDITS = 1  # at the limit, a reply during pre_cancel goes to a person
    pre_cancel_case = pre_cancelled(case, run, _frozen_time)
    deliver(run, reply(pre_cancel_case, far_rider(van), "Wait, I moved back last week!"))
    review = validate(pre_cancel_case)
    assert ("reply", "high") in issue_types(review)
    assert "waits for a person" in " ".join(i["description"] for i in review.issues)


def test_replies_before_the_last_reaudit_were_acted_on(case, van, run, _frozen_time):
    deliver(run, reply(case, far_rider(van), "How do you measure the distance?"))  # answered
    case = pre_cancelled(case, run, _frozen_time)
    assert CaseReview.objects.get(case=case).passed


# --- Assessment of the reasoning -------------------------------------------------------------


def test_a_location_flag_within_the_limit_is_a_contradiction_and_weak(pre_cancel_case, van):
    verification = latest_location(pre_cancel_case)
    far = far_rider(van).employee_id
    evidence = [
        {**item, "miles": 31.0} if item["employee_id"] == far else item
        for item in verification.evidence
    ]
    Verification.objects.filter(pk=verification.pk).update(evidence=evidence)
    review = validate(pre_cancel_case)
    assert review.justification == "weak"
    assert issue_types(review) == {("contradiction", "high")}
    assert "within the 50-mile limit" in review.issues[0]["description"]
    assert review.score == 100 - 10 - 15
    assert not review.passed


def test_a_thin_margin_on_a_zip_centroid_is_weak(pre_cancel_case, van):
    verification = latest_location(pre_cancel_case)
    far = far_rider(van).employee_id
    evidence = [
        {**item, "miles": 55.0} if item["employee_id"] == far else item
        for item in verification.evidence
    ]
    Verification.objects.filter(pk=verification.pk).update(evidence=evidence)
    review = validate(pre_cancel_case)
    assert review.justification == "weak"
    assert issue_types(review) == {("gap", "medium")}
    assert (review.score, review.passed) == (80, True)


def test_a_rider_who_only_works_days_the_van_does_not_run_is_adequately_justified(
    run, _frozen_time
):
    vanpool = VanpoolFactory(schedule=DAY_SCHEDULE)  # Mon-Fri
    weekend = ShiftFactory(
        schedule=[{"day": day, "start": "07:00", "end": "16:00"} for day in ("Sat", "Sun")]
    )
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP, shift=weekend))
    run(audit_vanpool, vanpool.vanpool_id)
    case = pre_cancelled(Case.objects.get(vanpool=vanpool), run, _frozen_time)
    review = CaseReview.objects.get(case=case)
    assert review.justification == "adequate"
    assert (review.score, review.passed) == (100, True)


def test_a_low_confidence_verification_caps_the_justification(pre_cancel_case):
    Verification.objects.filter(pk=latest_location(pre_cancel_case).pk).update(confidence=3)
    assert validate(pre_cancel_case).justification == "adequate"


# --- Score ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("issues", "justification", "score"),
    [
        ([], "strong", 100),
        ([], "weak", 85),
        ([Issue("missing_section", "high", "x")], "strong", 85),
        ([Issue("missing_section", "medium", "x")] * 2, "adequate", 70),
        ([Issue("consistency", "high", "x")], "strong", 80),
        ([Issue("gap", "high", "x")], "strong", 90),
        ([Issue("gap", "medium", "x"), Issue("gap", "low", "y")], "strong", 93),
        ([Issue("consistency", "high", "x")] * 6, "weak", 0),  # clamped
    ],
)
def test_it_scores_from_100(issues, justification, score):
    total, arithmetic = score_issues(issues, justification)
    assert total == score
    assert len(arithmetic) == len(issues) + (justification == "weak")


def test_a_score_of_70_with_no_high_issue_passes_and_69_does_not(pre_cancel_case):
    validate(set_meta(pre_cancel_case, details=""))  # 85
    Verification.objects.filter(pk=latest_location(pre_cancel_case).pk).update(confidence=2)
    review = validate(pre_cancel_case)  # −15 summary, −5 low confidence gap, −15 weak = 65
    assert (review.score, review.passed) == (65, False)
    assert not any(i["severity"] == "high" for i in review.issues)


# --- With a model --------------------------------------------------------------------------


@pytest.fixture
def server():
    fake = FakeLLMServer().start()
    yield fake
    fake.stop()


@pytest.fixture
def openai_backend(server, settings):
    settings.LLM_BACKEND = "openai"
    settings.OPENAI_BASE_URL = server.base_url
    settings.OPENAI_API_KEY = "sk-test-dummy"
    settings.LLM_TIMEOUT_SECONDS = 2.0
    settings.LLM_MAX_RETRIES = 0
    llm.reset_breakers()
    llm._shared_client.cache_clear()
    yield server
    llm.reset_breakers()
    llm._shared_client.cache_clear()


def assessment(justification="adequate", contradictions=(), gaps=()) -> str:
    return json.dumps(
        {
            "justification": justification,
            "reasoning": "EMP-1001 lives 385.3 commute miles away; the limit is 50.",
            "contradictions": [{"description": c, "severity": "medium"} for c in contradictions],
            "gaps": [{"description": g, "severity": "low"} for g in gaps],
        }
    )


def test_the_model_assessment_is_merged_conservatively(pre_cancel_case, openai_backend):
    openai_backend.reply_json(
        completion(assessment("adequate", gaps=["No photo of the lease."]), model="gpt-4.1")
    )
    review = validate(pre_cancel_case)
    assert (review.backend, review.model, review.deterministic_only) == (
        "openai",
        "gpt-4.1",
        False,
    )
    assert review.justification == "adequate"  # weaker of rules' strong and model's adequate
    assert issue_types(review) == {("gap", "low")}
    assert review.score == 98 and review.passed
    sent = openai_backend.requests[0].body["messages"][1]["content"]
    assert "<evidence_package>" in sent and "385.3" in sent
    model_run = AgentRun.objects.get(agent="supervisor", parent__isnull=False)
    assert model_run.prompt_version == "supervisor.v1" and model_run.parent is not None


def test_a_model_cannot_talk_the_rules_up(pre_cancel_case, openai_backend):
    Verification.objects.filter(pk=latest_location(pre_cancel_case).pk).update(confidence=2)
    openai_backend.reply_json(completion(assessment("strong")))
    assert validate(pre_cancel_case).justification == "weak"


def test_when_the_model_is_unavailable_the_deterministic_checks_still_decide(
    pre_cancel_case, openai_backend
):
    Message.objects.filter(direction="outbound").update(status=Message.Status.FAILED)
    openai_backend.reply(Scripted(status=500, body=api_error("boom")))
    review = validate(pre_cancel_case)
    assert review.deterministic_only is True
    assert "ModelUnavailable" in review.feedback["model_error"]
    assert issue_types(review) == {("timeline", "high")}
    assert not review.passed
    failed_run = AgentRun.objects.get(agent="supervisor", parent__isnull=False)
    assert failed_run.output == {"fallback": "rules"} and failed_run.error


# --- Queries for the dashboard -------------------------------------------------------------


def test_latest_review_is_one_query(pre_cancel_case):
    newer = validate(pre_cancel_case)
    with CaptureQueriesContext(connection) as queries:
        assert latest_review(pre_cancel_case) == newer
    assert len(queries) == 1
    other = Case.objects.create(vanpool=VanpoolFactory())
    assert latest_review(other) is None


def test_latest_reviews_for_many_cases_is_one_query(pre_cancel_case, run):
    newer = validate(pre_cancel_case)
    others = []
    for _ in range(3):
        vanpool = VanpoolFactory()
        RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=FAR_ZIP))
        run(audit_vanpool, vanpool.vanpool_id)
        other = Case.objects.get(vanpool=vanpool)
        validate(other)
        others.append((other, validate(other)))
    unreviewed = Case.objects.create(vanpool=VanpoolFactory())
    cases = [pre_cancel_case, unreviewed, *(c for c, _ in others)]
    with CaptureQueriesContext(connection) as queries:
        reviews = latest_reviews_for(cases)
    assert len(queries) == 1
    assert reviews[pre_cancel_case.pk] == newer
    assert unreviewed.pk not in reviews
    assert all(reviews[c.pk] == r for c, r in others)
    assert latest_reviews_for([]) == {}


# --- Admin ---------------------------------------------------------------------------------


def test_auditors_read_reviews_in_the_admin_and_nobody_edits_them(client, auditor, pre_cancel_case):
    review = CaseReview.objects.get()
    client.force_login(auditor)
    assert client.get(reverse("admin:cases_casereview_changelist")).status_code == 200
    page = client.get(reverse("admin:cases_casereview_change", args=[review.pk]))
    assert page.status_code == 200
    assert client.get(reverse("admin:cases_casereview_add")).status_code == 403
    assert (
        client.post(reverse("admin:cases_casereview_change", args=[review.pk])).status_code == 403
    )


def test_coordinators_may_read_reviews_and_lessons(coordinator):
    assert coordinator.has_perm("cases.view_casereview")
    assert coordinator.has_perm("cases.view_caselesson")
    assert not coordinator.has_perm("cases.change_casereview")
