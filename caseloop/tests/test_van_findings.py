"""A van-level §132(f) finding: a review_vanpool card for its coordinator, no rider letter."""

import datetime as dt

import pytest

from caseloop.audits import audit_vanpool
from caseloop.decisions import approve, reject
from cases.kinds import ReviewVanpool
from cases.models import Case, PendingAction
from outreach.models import Message
from tests.factories import EmployeeFactory, RiderFactory, ShiftFactory, UserFactory, VanpoolFactory
from vanpools.models import Vanpool, VanpoolMonth

pytestmark = pytest.mark.django_db

AUDIT_DATE = dt.date(2026, 11, 23)
NEAR_ZIP = "94587"  # Union City, the pickup's own ZIP
FAR_ZIP = "90026"  # Los Angeles
WEEKDAYS = [
    {"day": d, "start": "07:00", "end": "16:00"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
]


def van_reporting(seats: int, *home_zips: str) -> Vanpool:
    """A van whose operator reported October with ``seats`` seats not counting the driver."""
    vanpool = VanpoolFactory(schedule=WEEKDAYS)
    shift = ShiftFactory(schedule=WEEKDAYS)
    for home_zip in home_zips:
        RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=home_zip, shift=shift))
    VanpoolMonth.objects.create(
        vanpool=vanpool, month=dt.date(2026, 10, 1), seats=seats, commute_share=0.9
    )
    return vanpool


def reviewer():
    return UserFactory(username="coordinator", is_superuser=True, is_staff=True)


def test_a_van_below_the_seat_rule_goes_to_its_coordinator_and_no_rider_is_written_to():
    vanpool = van_reporting(4, NEAR_ZIP, NEAR_ZIP)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    case = Case.objects.get()
    assert case.status == "hitl_review"
    action = PendingAction.objects.get(case=case, kind="review_vanpool")
    ask = action.ask_as(ReviewVanpool)
    assert (ask.vanpool_id, ask.month, ask.failed) == (vanpool.vanpool_id, "2026-10", ["seats"])
    assert not Message.objects.exists()


def test_the_same_month_audited_again_asks_once():
    vanpool = van_reporting(4, NEAR_ZIP)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE + dt.timedelta(days=1))
    assert PendingAction.objects.filter(kind="review_vanpool").count() == 1


def test_a_coordinator_who_handles_it_closes_the_van_case_resolved():
    vanpool = van_reporting(4, NEAR_ZIP)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    action = PendingAction.objects.get(kind="review_vanpool")
    decided = approve(action, by=reviewer(), note="replaced with a 12-seat van")
    case = Case.objects.get()
    assert (decided.status, case.status, case.outcome) == ("approved", "closed", "resolved")
    assert decided.result["case_closed"] is True


def test_a_finding_the_coordinator_calls_wrong_closes_dismissed():
    vanpool = van_reporting(4, NEAR_ZIP)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    action = PendingAction.objects.get(kind="review_vanpool")
    reject(action, by=reviewer(), note="the report miscounted the seats")
    case = Case.objects.get()
    assert (case.status, case.outcome) == ("closed", "dismissed")


def test_a_riders_finding_on_the_same_van_is_written_to_as_usual():
    vanpool = van_reporting(4, NEAR_ZIP, FAR_ZIP)
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    case = Case.objects.get()
    assert case.status == "open"
    assert not PendingAction.objects.filter(kind="review_vanpool").exists()
