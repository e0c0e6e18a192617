"""request_review: the one place a person is asked, and where the case then waits."""

import pytest

from cases.kinds import LabelReply, MatchInbound
from cases.lifecycle import request_review
from cases.models import Case, CaseEvent, PendingAction
from tests.factories import CaseFactory

pytestmark = pytest.mark.django_db


def test_it_creates_the_action_and_moves_the_case_to_review_once():
    case = CaseFactory()
    action, moved = request_review(case, LabelReply(), actor="outreach", note="unsure")
    assert action.requested_by == "agent:outreach"
    assert moved is not None and moved.status == Case.Status.HITL_REVIEW
    request_review(moved, LabelReply(), actor="outreach", note="x")
    assert CaseEvent.objects.filter(case=case, to_status=Case.Status.HITL_REVIEW).count() == 1
    assert PendingAction.objects.filter(case=case).count() == 2


def test_it_leaves_the_case_where_it_is_when_told_to():
    case = CaseFactory()
    _, same = request_review(case, MatchInbound(), actor="inbound", note="n", hold_in=None)
    assert same is not None and same.status == case.status


def test_without_a_case_only_the_action_is_created():
    action, case = request_review(None, MatchInbound(), actor="inbound", note="unmatched")
    assert case is None and action.case is None and action.status == PendingAction.Status.PENDING
