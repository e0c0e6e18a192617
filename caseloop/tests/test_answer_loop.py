"""What each choice on the answer page leads to in the loop: the design's table, for answers."""

import datetime as dt
import re

import pytest
from django.conf import settings
from django.core import mail
from django.test import Client
from django.utils import timezone

from caseloop import decisions
from caseloop.audits import audit_vanpool
from cases.models import Case, CaseEvent, PendingAction
from outreach.models import Message
from tests.factories import EmployeeFactory, RiderFactory, ShiftFactory, VanpoolFactory
from vanpools.models import DataCoverage, ParkingPermit, RideDay, Rider

pytestmark = pytest.mark.django_db

NEAR_ZIP = "94587"
FAR_ZIP = "90026"
PAGE = re.compile(r"/answer/CASE-[0-9A-F]{8}/[A-Za-z0-9_-]+/")
Status = Case.Status
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")


@pytest.fixture
def van():
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Nadia", home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Farid", home_zip=FAR_ZIP))
    return vanpool


@pytest.fixture
def far(van):
    return van.riders.get(employee__home_zip=FAR_ZIP).employee


@pytest.fixture
def case(van, run):
    run(audit_vanpool, van.vanpool_id)
    return Case.objects.get(vanpool=van)


def answer(run, choice: str, **data: str) -> Case:
    page = PAGE.search(mail.outbox[0].body).group(0)
    client = Client()
    assert run(client.post, page, {"choice": choice, **data}).status_code == 303
    message = Message.objects.filter(answer_link__isnull=False).latest("pk")
    assert message.status == Message.Status.PROCESSED
    return Case.objects.get(pk=message.thread.case_id)


def test_address_updated_rechecks_now_and_a_fixed_record_resolves_with_no_person(case, far, run):
    far.home_zip = NEAR_ZIP
    far.save()
    case = answer(run, "address_updated")
    assert (case.status, case.outcome) == (Status.CLOSED, Case.Outcome.RESOLVED)
    assert not PendingAction.objects.exists()
    assert Message.objects.filter(template="resolved", employee=far).count() == 1


def test_address_updated_on_a_record_still_failing_says_it_still_shows(case, far, run):
    case = answer(run, "address_updated")
    assert case.status == Status.PENDING_REPLY and case.reaudit_count == 1
    assert Message.objects.filter(template="still_shows", employee=far).count() == 1


def test_address_right_is_read_like_a_reply(case, far, run):
    answer(run, "address_right", text="What ZIP do you have on file for me?")
    stored = Message.objects.get(answer_link__isnull=False)
    assert stored.bucket == "question"
    assert Message.objects.filter(template="answer", employee=far).count() == 1


def test_a_question_is_answered_and_the_case_keeps_waiting(case, far, run):
    case = answer(run, "question", text="How far is too far?")
    assert case.status == Status.PENDING_REPLY
    assert Message.objects.filter(template="answer", employee=far).count() == 1


def test_words_that_escalate_go_to_a_person_whatever_was_chosen(case, run):
    case = answer(
        run, "question", text="I will be contacting my union rep and a lawyer about this."
    )
    assert case.status == Status.HITL_REVIEW
    assert PendingAction.objects.get(status="pending").kind == "review_email"


def test_talk_to_a_person_holds_a_drafted_holding_reply_for_review(case, run):
    case = answer(run, "talk_to_person")
    assert case.status == Status.HITL_REVIEW
    action = PendingAction.objects.get(status="pending")
    assert action.kind == "review_email" and action.payload["template"] == "holding_reply"
    assert "answer page" in action.payload["reasoning"]


@pytest.mark.parametrize(
    "choice, data",
    [
        ("staying_elsewhere", {"until": "2027-01-15"}),
        ("not_me", {}),
    ],
)
def test_choices_that_need_judgement_go_to_a_person_saying_what_was_chosen(case, run, choice, data):
    case = answer(run, choice, **data)
    assert case.status == Status.HITL_REVIEW
    label = PendingAction.objects.get(status="pending", kind="label_reply")
    assert "on the answer page" in label.payload["why"]
    if "until" in data:
        assert data["until"] in label.payload["why"]


def test_giving_up_the_seat_proposes_a_cancellation_recording_the_riders_request(
    case, far, run, coordinator
):
    case = answer(run, "give_up_seat")
    assert case.status == Status.PRE_CANCEL
    action = PendingAction.objects.get(status="pending")
    stored = Message.objects.get(answer_link__isnull=False)
    assert action.kind == "cancel_membership" and action.rider.employee == far
    assert action.payload["requested_by"] == stored.message_id
    assert "answer page" in action.payload["why"]
    run(decisions.approve, action, by=coordinator)  # one click: no override needed
    case.refresh_from_db()
    assert (case.status, case.outcome) == (Status.CLOSED, Case.Outcome.CANCELLED)
    assert Rider.objects.get(pk=action.rider_id).status == Rider.Status.CANCELLED


def test_an_answer_after_an_escalation_goes_to_a_person_as_a_reply_would(case, run):
    answer(run, "talk_to_person")
    answer(run, "address_updated")
    assert PendingAction.objects.filter(status="pending").count() == 2
    assert CaseEvent.objects.filter(case=case).exists()


def test_a_shift_finding_offers_the_shift_choices_and_rechecks_on_a_new_shift(run):
    day = ShiftFactory()
    night = ShiftFactory(
        name="Night",
        schedule=[{"day": d, "start": "22:00", "end": "06:30"} for d in WEEKDAYS],
        overnight=True,
    )
    vanpool = VanpoolFactory()
    for _ in range(2):
        RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP, shift=day))
    late = EmployeeFactory(home_zip=NEAR_ZIP, shift=night)
    RiderFactory(vanpool=vanpool, employee=late)
    run(audit_vanpool, vanpool.vanpool_id)
    page = PAGE.search(mail.outbox[0].body).group(0)
    body = Client().get(page).content.decode()
    assert "HR has my new shift" in body and "on leave until" in body
    assert "home address with HR" not in body
    late.shift = day
    late.save()
    case = answer(run, "shift_updated")
    assert (case.status, case.outcome) == (Status.CLOSED, Case.Outcome.RESOLVED)


def test_a_parking_finding_offers_the_returned_permit_and_rechecks_on_it(run):
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=NEAR_ZIP))
    holder = EmployeeFactory(home_zip=NEAR_ZIP)
    RiderFactory(vanpool=vanpool, employee=holder)
    DataCoverage.objects.create(kind="permits", work_site="")
    permit = ParkingPermit.objects.create(
        permit_id="P-5521", employee=holder, lot="Garage B", valid_from=dt.date(2026, 1, 5)
    )
    run(audit_vanpool, vanpool.vanpool_id)
    page = PAGE.search(mail.outbox[0].body).group(0)
    body = Client().get(page).content.decode()
    assert "returned my parking permit" in body
    assert "home address with HR" not in body and "badge in" not in body
    permit.status = ParkingPermit.Status.RETURNED
    permit.save()
    case = answer(run, "permit_returned")
    assert (case.status, case.outcome) == (Status.CLOSED, Case.Outcome.RESOLVED)
    assert not PendingAction.objects.exists()


def test_a_ridership_finding_offers_rides_not_recorded_which_a_person_hears_out(run):
    hours = [{"day": d, "start": "07:00", "end": "15:30"} for d in WEEKDAYS]
    vanpool = VanpoolFactory(schedule=hours)
    steady, seldom = (
        EmployeeFactory(home_zip=NEAR_ZIP, shift=ShiftFactory(schedule=hours)) for _ in range(2)
    )
    for employee in (steady, seldom):
        RiderFactory(vanpool=vanpool, employee=employee, joined=dt.date(2026, 1, 5))
    today = timezone.localdate()
    start = today - dt.timedelta(days=settings.RIDERSHIP_WINDOW_DAYS)
    DataCoverage.objects.create(kind="trips", vanpool=vanpool, start=start, end=today)
    days = [start + dt.timedelta(days=n) for n in range(settings.RIDERSHIP_WINDOW_DAYS)]
    for day in (d for d in days if d.weekday() < 5):
        RideDay.objects.create(vanpool=vanpool, employee=steady, date=day, source="trip")
    run(audit_vanpool, vanpool.vanpool_id)
    page = PAGE.search(mail.outbox[0].body).group(0)
    body = Client().get(page).content.decode()
    assert "always badge in" in body and "returned my parking permit" not in body
    case = answer(run, "rides_not_recorded")
    assert case.status == Status.HITL_REVIEW
    label = PendingAction.objects.get(status="pending", kind="label_reply")
    assert "always badge in" in label.payload["why"]
