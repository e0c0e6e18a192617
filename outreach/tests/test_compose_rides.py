"""The letters for a seat held but not ridden and for a parking permit beside a seat."""

import datetime as dt

import pytest

from caseloop.audits import audit_vanpool
from cases.models import Case
from outreach.compose import initial_template_for, render_email, rider_facts
from tests.factories import EmployeeFactory, RiderFactory, ShiftFactory, VanpoolFactory
from vanpools.models import BadgeSwipe, DataCoverage, ParkingPermit, RideDay, Vanpool

pytestmark = pytest.mark.django_db
AUDIT_DATE = dt.date(2026, 11, 23)  # the window: Mon 26 Oct – Sun 22 Nov, 20 weekdays
START, END = dt.date(2026, 10, 26), dt.date(2026, 11, 22)
WEEKDAYS = [START + dt.timedelta(days=n) for n in range(28) if n % 7 < 5]
HOURS = [{"day": d, "start": "07:00", "end": "15:30"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")]


def rider(van: Vanpool, first_name: str, **fields: object):
    fields.setdefault("home_zip", "94587")
    employee = EmployeeFactory(first_name=first_name, shift=ShiftFactory(schedule=HOURS), **fields)
    RiderFactory(vanpool=van, employee=employee, joined=dt.date(2026, 1, 5))
    return employee


@pytest.fixture
def van() -> Vanpool:
    return VanpoolFactory(
        vanpool_id="VP-210", work_site="Harbor DC", schedule=HOURS, pickup_zip="94587"
    )


def aboard(van: Vanpool, employee, days: list[dt.date]) -> None:
    for day in days:
        RideDay.objects.create(
            vanpool=van, employee=employee, date=day, source="trip", ref=f"T-{day}"
        )


def letter(van: Vanpool, employee):
    audit_vanpool(van.vanpool_id, audit_date=AUDIT_DATE)
    case = Case.objects.get(vanpool=van)
    facts = rider_facts(case, employee)
    return facts, render_email(initial_template_for(list(facts.failed_checks)), facts)


def test_a_rider_seen_on_few_trips_is_told_the_count_and_the_rule(van):
    steady, seldom = rider(van, "Dana"), rider(van, "Ana")
    DataCoverage.objects.create(kind="trips", vanpool=van, start=START, end=END)
    aboard(van, steady, WEEKDAYS)
    aboard(van, seldom, WEEKDAYS[:3])
    facts, email = letter(van, seldom)
    assert facts.failed_checks == ("ridership",)
    assert email.subject == f"Action needed: are you still riding vanpool VP-210? ({facts.case_id})"
    text = " ".join(email.text.split())
    assert (
        "The van's trip log shows you aboard on 3 of the last 20 scheduled workdays "
        "(October 26 – November 20)." in text
    )
    assert "ride at least 3 days a week: for you, 12 of these 20 days." in text
    assert "If you ride but aren't always marked on the trip log, reply to this email" in text
    assert "3 of the last 20 scheduled workdays" in email.html


def test_a_rider_seen_only_by_the_gate_is_told_it_is_their_badge(van):
    steady, late = rider(van, "Dana"), rider(van, "Omar")
    DataCoverage.objects.create(kind="badge_swipes", work_site="Harbor DC", start=START, end=END)
    for day in WEEKDAYS:
        BadgeSwipe.objects.create(employee=steady, date=day, time=dt.time(7, 5), site="Harbor DC")
        BadgeSwipe.objects.create(employee=late, date=day, time=dt.time(7, 58), site="Harbor DC")
    for day in WEEKDAYS[:3]:
        BadgeSwipe.objects.create(
            employee=late, date=day, time=dt.time(7, 6), site="Harbor DC", gate="B"
        )
    _, email = letter(van, late)
    text = " ".join(email.text.split())
    assert (
        "Your badge at the work site's gate shows you arriving with the van on 3 of the last "
        "20 scheduled workdays" in text
    )
    assert "within 30 minutes of the van's arrival" in text
    assert "If you ride but don't always badge in, reply to this email and tell us" in text


def test_a_permit_beside_the_seat_is_named_with_its_lot_and_dates(van):
    holder = rider(van, "Lee")
    DataCoverage.objects.create(kind="permits", work_site="")
    ParkingPermit.objects.create(
        permit_id="P-5521", employee=holder, lot="Garage B",
        valid_from=dt.date(2026, 9, 1), valid_to=dt.date(2026, 12, 31),
    )  # fmt: skip
    facts, email = letter(van, holder)
    assert facts.failed_checks == ("parking",)
    text = " ".join(email.text.split())
    assert (
        "Our records show parking permit P-5521 for Garage B, valid from September 1, 2026 to "
        "December 31, 2026, in force alongside your vanpool seat." in text
    )
    assert "If you have returned the permit, or it has ended, reply to say so" in text


def test_a_rider_failing_several_checks_gets_each_finding_in_one_letter(van):
    both = rider(van, "Kim", home_zip="95814")  # Sacramento: far from the pickup
    DataCoverage.objects.create(kind="permits", work_site="")
    ParkingPermit.objects.create(
        permit_id="P-1", employee=both, lot="Lot C", valid_from=dt.date(2026, 1, 1)
    )
    facts, email = letter(van, both)
    assert facts.failed_checks == ("location", "parking")
    assert "Where you live" in email.text and "Parking" in email.text
    assert "If your home address has changed, update it in the employee portal" in email.text
    assert "If you have returned the permit, or it has ended" in " ".join(email.text.split())
    assert "P-1 for Lot C, valid from January 1, 2026 with no end date, in force" in " ".join(
        email.text.split()
    )


def test_a_ridership_letter_reads_in_the_riders_language(van):
    steady, seldom = rider(van, "Dana"), rider(van, "Ana", preferred_language="es")
    DataCoverage.objects.create(kind="trips", vanpool=van, start=START, end=END)
    aboard(van, steady, WEEKDAYS)
    aboard(van, seldom, WEEKDAYS[:3])
    audit_vanpool(van.vanpool_id, audit_date=AUDIT_DATE)
    facts = rider_facts(Case.objects.get(vanpool=van), seldom)
    email = render_email("ridership_mismatch", facts, lang="es")
    text = " ".join(email.text.split())
    assert email.subject.startswith("Acción necesaria: ¿sigue viajando en el vanpool VP-210?")
    assert (
        "muestra que viajó en ella 3 de los últimos 20 días laborables programados "
        "(del 26 de octubre al 20 de noviembre)." in text
    )
    assert "al menos 3 días por semana: en su caso, 12 de estos 20 días." in text
