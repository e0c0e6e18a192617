"""Knowledge capture on close, similar past cases and false positives by pattern."""

import datetime as dt
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agents.models import AgentRun
from caseloop import decisions
from caseloop.audits import audit_vanpool
from caseloop.lessons import (
    capture_lesson,
    false_positive_counts_by_pattern,
    similar_past_cases,
    similar_past_cases_for,
)
from caseloop.loop.deadlines import process_timeouts
from caseloop.tests.test_loop import FAR_ZIP, NEAR_ZIP, deliver, far_rider, pre_cancelled, reply
from cases.lifecycle import transition
from cases.models import Case, CaseLesson, PendingAction
from tests.factories import CaseFactory, EmployeeFactory, RiderFactory, VanpoolFactory
from tests.llm_server import Scripted, api_error, completion, model_endpoint

pytestmark = pytest.mark.django_db
Outcome = Case.Outcome


@pytest.fixture
def van():
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=FAR_ZIP))
    return vanpool


@pytest.fixture
def case(van, run):
    run(audit_vanpool, van.vanpool_id)
    return Case.objects.get(vanpool=van)


def fix_home(employee):
    employee.home_zip = NEAR_ZIP
    employee.save()


# --- A lesson for each way a case closes ---------------------------------------------------


def test_a_silent_fix_caught_at_the_deadline_leaves_a_resolved_lesson(case, van, run, _frozen_time):
    far = far_rider(van).employee_id
    fix_home(far_rider(van))
    _frozen_time.shift(dt.timedelta(days=7, minutes=1))
    run(process_timeouts)
    lesson = CaseLesson.objects.get()
    assert (lesson.case, lesson.outcome) == (case, Outcome.RESOLVED)
    assert lesson.pattern == "location_mismatch:silent_fix"
    assert (lesson.reason, lesson.site) == ("location_mismatch", van.work_site)
    # The signals describe what was flagged, not the passing re-audit.
    assert lesson.key_signals["flagged_riders"] == [far]
    assert lesson.key_signals["max_miles"] == 385.3
    assert lesson.key_signals["reaudit_triggers"] == ["timeout"]
    assert lesson.sentence.startswith(f"{case.case_id} (location mismatch at Fremont Campus)")
    assert "caught at the deadline" in lesson.sentence
    assert lesson.sentence.count(".") >= 1 and "\n" not in lesson.sentence
    assert AgentRun.objects.filter(agent="knowledge", case=case).count() == 1


def test_an_update_that_fixes_the_record_is_its_own_pattern(case, van, run):
    far = far_rider(van)
    fix_home(far)
    deliver(run, reply(case, far, "I moved last month and updated my address in the portal."))
    assert CaseLesson.objects.get().pattern == "location_mismatch:updated_record"


def test_an_approved_cancellation_leaves_a_cancelled_lesson(case, run, _frozen_time, coordinator):
    case = pre_cancelled(case, run, _frozen_time)
    action = PendingAction.objects.get(kind="cancel_membership")
    run(decisions.approve, action, by=coordinator)
    lesson = CaseLesson.objects.get()
    assert (lesson.outcome, lesson.pattern) == (Outcome.CANCELLED, "location_mismatch:no_reply")
    signals = lesson.key_signals
    assert signals["cancellations_approved"] == 1 and signals["human_decisions"] == 1
    assert signals["supervisor"] == {"score": 100, "passed": True, "justification": "strong"}
    assert signals["emails_sent"] == 2  # the first letter and the cancellation notice
    assert "1 seat(s) cancelled after 7 day(s) and 1 re-audit(s)" in lesson.sentence


def test_a_rejected_cancellation_leaves_a_dismissed_lesson(case, run, _frozen_time, coordinator):
    case = pre_cancelled(case, run, _frozen_time)
    action = PendingAction.objects.get(kind="cancel_membership")
    run(decisions.reject, action, by=coordinator, note="medical exemption on file")
    lesson = CaseLesson.objects.get()
    assert (lesson.outcome, lesson.pattern) == (Outcome.DISMISSED, "location_mismatch:no_reply")
    assert lesson.key_signals["cancellations_rejected"] == 1
    assert "medical exemption on file" in lesson.key_signals["closing_note"]
    assert lesson.key_signals["closed_by"] == "coordinator"
    assert "false positive" in lesson.sentence


def test_a_lesson_is_captured_once(case, run, _frozen_time, coordinator):
    case = pre_cancelled(case, run, _frozen_time)
    run(decisions.reject, PendingAction.objects.get(kind="cancel_membership"), by=coordinator)
    first = CaseLesson.objects.get()
    assert capture_lesson(case.pk) == first
    assert CaseLesson.objects.count() == 1
    assert AgentRun.objects.filter(agent="knowledge").count() == 1


def test_an_open_case_has_no_lesson(case):
    assert capture_lesson(case.pk) is None
    assert not CaseLesson.objects.exists()


def test_closing_queues_capture_only_after_commit(case, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        transition(case, Case.Status.CLOSED, actor="test", outcome=Outcome.DISMISSED)
    assert not CaseLesson.objects.exists()
    for callback in callbacks:
        callback()
    assert CaseLesson.objects.get().outcome == Outcome.DISMISSED


# --- With a model --------------------------------------------------------------------------


@pytest.fixture
def server(settings):
    with model_endpoint(settings) as fake:
        yield fake


def closed(case: Case) -> Case:
    return transition(case, Case.Status.CLOSED, actor="test", outcome=Outcome.DISMISSED)


def test_a_model_may_phrase_the_sentence(case, server):
    server.reply_json(completion(json.dumps({"sentence": "Written by the model."})))
    lesson = capture_lesson(closed(case).pk)
    assert (lesson.sentence, lesson.backend) == ("Written by the model.", "openai")
    assert lesson.pattern == "location_mismatch:no_reply"  # the rules' always


def test_when_the_model_fails_the_rules_sentence_stands(case, server):
    server.reply(Scripted(status=500, body=api_error("boom")))
    lesson = capture_lesson(closed(case).pk)
    assert lesson.backend == "rules" and lesson.sentence.startswith(case.case_id)
    assert "ModelUnavailable" in AgentRun.objects.get(agent="knowledge", backend="openai").error


# --- Similar past cases --------------------------------------------------------------------


def past_case(site: str, reason: str, outcome: str, pattern: str = "", *, days_ago: int = 1):
    vanpool = VanpoolFactory(work_site=site)
    case = CaseFactory(
        vanpool=vanpool,
        status=Case.Status.CLOSED,
        outcome=outcome,
        closed_at=timezone.now(),
        meta={"reason": reason, "failed_checks": ["location"]},
    )
    return CaseLesson.objects.create(
        case=case,
        reason=reason,
        site=site,
        outcome=outcome,
        pattern=pattern or f"{reason}:no_reply",
        sentence=f"{case.case_id} closed {outcome}.",
        created_at=timezone.now() - dt.timedelta(days=days_ago),
    )


@pytest.fixture
def history():
    return [
        past_case("Fremont Campus", "location_mismatch", Outcome.CANCELLED, days_ago=3),
        past_case("Fremont Campus", "location_mismatch", Outcome.CANCELLED, days_ago=2),
        past_case("Fremont Campus", "location_mismatch", Outcome.DISMISSED, days_ago=1),
        past_case("Fremont Campus", "location_mismatch", Outcome.RESOLVED, days_ago=4),
        past_case("Fremont Campus", "shift_mismatch", Outcome.CANCELLED),
        past_case("Sunnyvale", "location_mismatch", Outcome.CANCELLED),
    ]


def test_similar_past_cases_share_reason_and_site_in_two_queries(case, history):
    case = Case.objects.select_related("vanpool").get(pk=case.pk)
    with CaptureQueriesContext(connection) as queries:
        similar = similar_past_cases(case, limit=2)
        recent = [(lesson.case.case_id, lesson.outcome) for lesson in similar.recent]
    assert len(queries) == 2
    assert (similar.reason, similar.site, similar.total) == (
        "location_mismatch",
        "Fremont Campus",
        4,
    )
    assert similar.by_outcome == {"resolved": 1, "cancelled": 2, "dismissed": 1}
    assert recent == [
        (history[2].case.case_id, "dismissed"),
        (history[1].case.case_id, "cancelled"),
    ]


def test_a_case_is_not_similar_to_itself(history):
    own = history[0].case
    own = Case.objects.select_related("vanpool").get(pk=own.pk)
    assert similar_past_cases(own).total == 3


def test_a_case_with_no_history_has_zero_counts(case):
    similar = similar_past_cases(Case.objects.select_related("vanpool").get(pk=case.pk))
    assert similar.total == 0 and similar.recent == []
    assert similar.by_outcome == {"resolved": 0, "cancelled": 0, "dismissed": 0}


def test_similar_past_cases_for_a_page_of_cases_in_two_queries(history):
    open_cases = []
    for site, reason in [
        ("Fremont Campus", "location_mismatch"),
        ("Sunnyvale", "location_mismatch"),
        ("Fremont Campus", "both"),
    ]:
        open_cases.append(
            CaseFactory(
                vanpool=VanpoolFactory(work_site=site),
                meta={"reason": reason, "failed_checks": ["location"]},
            )
        )
    cases = list(Case.objects.filter(pk__in=[c.pk for c in open_cases]).select_related("vanpool"))
    with CaptureQueriesContext(connection) as queries:
        found = similar_past_cases_for(cases, limit=2)
        recent = {pk: [lesson.case.case_id for lesson in s.recent] for pk, s in found.items()}
    assert len(queries) == 2
    fremont, sunnyvale, both = (found[c.pk] for c in open_cases)
    assert (fremont.total, fremont.by_outcome["cancelled"]) == (4, 2)
    assert recent[open_cases[0].pk] == [history[2].case.case_id, history[1].case.case_id]
    assert (sunnyvale.total, sunnyvale.site) == (1, "Sunnyvale")
    assert (both.total, both.recent) == (0, [])
    assert similar_past_cases_for([]) == {}


# --- False positives by pattern ------------------------------------------------------------


def decided(lesson: CaseLesson, status: str) -> None:
    PendingAction.objects.create(
        kind=PendingAction.Kind.CANCEL_MEMBERSHIP,
        case=lesson.case,
        status=status,
        decided_at=timezone.now(),
        requested_by="agent:outreach",
    )


def test_rejected_cancellations_count_as_false_positives_by_pattern_in_one_query():
    far_silent = [
        past_case("Fremont Campus", "location_mismatch", Outcome.DISMISSED) for _ in range(2)
    ]
    far_silent.append(past_case("Fremont Campus", "location_mismatch", Outcome.CANCELLED))
    decided(far_silent[0], "rejected")
    decided(far_silent[1], "rejected")
    decided(far_silent[2], "approved")
    decided(far_silent[2], "approved")  # two riders on one case: still one case
    shift = past_case("Sunnyvale", "shift_mismatch", Outcome.CANCELLED, "shift_mismatch:escalated")
    decided(shift, "approved")
    past_case("Fremont Campus", "location_mismatch", Outcome.RESOLVED)  # never proposed
    with CaptureQueriesContext(connection) as queries:
        counts = false_positive_counts_by_pattern()
    assert len(queries) == 1
    assert [(c.pattern, c.proposed, c.false_positives) for c in counts] == [
        ("location_mismatch:no_reply", 3, 2),
        ("shift_mismatch:escalated", 1, 0),
    ]
    assert counts[0].rate == pytest.approx(2 / 3)
    assert [c.pattern for c in false_positive_counts_by_pattern(site="Sunnyvale")] == [
        "shift_mismatch:escalated"
    ]


def test_a_real_rejection_is_counted(case, run, _frozen_time, coordinator):
    case = pre_cancelled(case, run, _frozen_time)
    run(decisions.reject, PendingAction.objects.get(kind="cancel_membership"), by=coordinator)
    [count] = false_positive_counts_by_pattern()
    assert (count.pattern, count.proposed, count.false_positives) == (
        "location_mismatch:no_reply",
        1,
        1,
    )


# --- Admin ---------------------------------------------------------------------------------


def test_auditors_read_lessons_in_the_admin_and_nobody_edits_them(client, auditor, history):
    client.force_login(auditor)
    lesson = history[0]
    assert client.get(reverse("admin:cases_caselesson_changelist")).status_code == 200
    assert client.get(reverse("admin:cases_caselesson_change", args=[lesson.pk])).status_code == 200
    assert client.get(reverse("admin:cases_caselesson_add")).status_code == 403


# --- On the dashboard ----------------------------------------------------------------------


def test_the_case_page_shows_similar_past_cases_with_their_outcomes(client, coordinator, history):
    open_case = CaseFactory(
        vanpool=VanpoolFactory(work_site="Fremont Campus"),
        meta={"reason": "location_mismatch", "failed_checks": ["location"]},
    )
    client.force_login(coordinator)
    html = client.get(reverse("case-detail", args=[open_case.case_id])).content.decode()
    assert "Similar past cases" in html
    assert "4 closed cases with the same reason (location_mismatch) at Fremont Campus" in html
    assert "2 cancelled" in html and "1 dismissed" in html
    assert history[2].case.case_id in html  # the newest similar case, linked


def test_the_cancellation_card_shows_similar_past_cases(
    case, run, _frozen_time, client, coordinator, history
):
    pre_cancelled(case, run, _frozen_time)
    client.force_login(coordinator)
    html = client.get(reverse("review-queue")).content.decode()
    assert "Similar past cases" in html
    assert "closed cases with the same reason (location_mismatch) at" in html


def test_the_program_page_counts_false_positives_by_pattern(client, coordinator):
    rejected = past_case("Fremont Campus", "location_mismatch", Outcome.DISMISSED)
    approved = past_case("Fremont Campus", "location_mismatch", Outcome.CANCELLED)
    decided(rejected, "rejected")
    decided(approved, "approved")
    client.force_login(coordinator)
    html = client.get(reverse("program")).content.decode()
    assert "False positives by pattern" in html
    assert "<code>location_mismatch:no_reply</code>" in html
    assert 'data-label="Rate" class="num">50%</td>' in html
