"""Rules the database itself enforces, whatever code path writes the row."""

import datetime as dt

import pytest
from django.db import IntegrityError
from django.utils import timezone

from cases.models import Case
from tests.factories import (
    CaseFactory,
    EmployeeFactory,
    LeaveFactory,
    PendingActionFactory,
    RiderFactory,
    VanpoolFactory,
    VerificationFactory,
)

pytestmark = pytest.mark.django_db


def test_it_refuses_a_second_open_case_for_a_vanpool():
    vanpool = VanpoolFactory()
    CaseFactory(vanpool=vanpool)
    with pytest.raises(IntegrityError):
        CaseFactory(vanpool=vanpool, status=Case.Status.PENDING_REPLY)


def test_it_allows_closed_cases_beside_the_open_one():
    vanpool = VanpoolFactory()
    for _ in range(2):
        CaseFactory(vanpool=vanpool, status="closed", outcome="resolved", closed_at=timezone.now())
    CaseFactory(vanpool=vanpool)
    assert vanpool.cases.count() == 3


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "closed", "outcome": ""},
        {"status": "open", "outcome": "resolved"},
    ],
)
def test_it_refuses_an_outcome_that_does_not_match_the_status(fields):
    with pytest.raises(IntegrityError):
        CaseFactory(closed_at=timezone.now() if fields["status"] == "closed" else None, **fields)


def test_it_gives_an_employee_one_active_seat_at_most():
    employee = EmployeeFactory()
    RiderFactory(employee=employee)
    with pytest.raises(IntegrityError):
        RiderFactory(employee=employee)


def test_it_keeps_cancelled_seats_beside_the_active_one():
    employee = EmployeeFactory()
    RiderFactory(employee=employee, status="cancelled", cancelled_at=timezone.now())
    RiderFactory(employee=employee)
    assert employee.memberships.count() == 2


def test_it_refuses_a_cancelled_seat_without_a_time():
    with pytest.raises(IntegrityError):
        RiderFactory(status="cancelled")


def test_it_refuses_leave_that_ends_before_it_starts():
    with pytest.raises(IntegrityError):
        LeaveFactory(start_date=dt.date(2026, 12, 5), end_date=dt.date(2026, 12, 1))


def test_it_refuses_half_a_coordinate():
    with pytest.raises(IntegrityError):
        EmployeeFactory(home_lat=37.5, home_lng=None)


@pytest.mark.parametrize("confidence", [0, 6])
def test_it_keeps_confidence_between_1_and_5(confidence):
    with pytest.raises(IntegrityError):
        VerificationFactory(confidence=confidence)


def test_it_refuses_a_decided_action_without_a_decision_time():
    with pytest.raises(IntegrityError):
        PendingActionFactory(status="approved")
