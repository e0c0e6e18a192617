"""What riders read: per-rider facts from a real audit, and the emails rendered from them."""

import dataclasses
import datetime as dt
import re

import pytest
from django.utils import timezone

from caseloop.audits import audit_vanpool
from cases.models import Case
from outreach.compose import (
    TEMPLATES,
    TEXT_WIDTH,
    RiderFacts,
    initial_template_for,
    render_email,
    rider_facts,
)
from tests.factories import (
    EmployeeFactory,
    LeaveFactory,
    RiderFactory,
    ShiftFactory,
    VanpoolFactory,
)
from vanpools.models import Employee, Vanpool

pytestmark = pytest.mark.django_db

AUDIT_DATE = dt.date(2026, 11, 23)  # a Monday; tests/conftest.py freezes time on it
VAN_HOURS = [
    {"day": d, "start": "07:00", "end": "15:30"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
]
NIGHTS = [{"day": d, "start": "22:00", "end": "06:30"} for d in ("Sun", "Mon", "Tue", "Wed", "Thu")]
SWING = [{"day": d, "start": "15:00", "end": "23:30"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")]
NEAR_ZIP = "94587"  # Union City: the pickup's own ZIP
SACRAMENTO = "95814"  # ~89 commute miles from the Union City pickup
FRESNO = "93721"  # ~164 commute miles


def shift(schedule: list[dict], name: str) -> object:
    return ShiftFactory(name=name, schedule=schedule, overnight=schedule is NIGHTS)


def ride(vanpool: Vanpool, **employee_fields: object) -> Employee:
    employee = EmployeeFactory(**employee_fields)
    RiderFactory(vanpool=vanpool, employee=employee)
    return employee


def audited(vanpool: Vanpool) -> Case:
    audit_vanpool(vanpool.vanpool_id, audit_date=AUDIT_DATE)
    return Case.objects.get(vanpool=vanpool)


@pytest.fixture
def van() -> Vanpool:
    vanpool = VanpoolFactory(vanpool_id="VP-110", name="Tri-Valley Express", schedule=VAN_HOURS)
    ride(vanpool, first_name="Dana", home_zip=NEAR_ZIP, shift=shift(VAN_HOURS, "Day"))
    return vanpool


@pytest.fixture
def two_riders(van: Vanpool) -> tuple[Case, Employee, Employee]:
    """Ana fails both checks on a swing shift; Zed fails both on nights, from elsewhere."""
    ana = ride(van, first_name="Ana", home_zip=SACRAMENTO, shift=shift(SWING, "Swing"))
    zed = ride(
        van, first_name="Zed", last_name="Quintero", home_zip=FRESNO, shift=shift(NIGHTS, "Night")
    )
    return audited(van), ana, zed


def flat(text: str) -> str:
    """The text as one line: phrases are checked across the body's line wrapping."""
    return " ".join(text.split())


def rendered_all(facts: RiderFacts) -> dict[str, str]:
    """Every template for one rider, subject + text + html in one string each."""
    out = {}
    for name in sorted(TEMPLATES):
        email = render_email(
            name,
            facts,
            answer_paragraphs=["Thanks for asking."],
            question_excerpt="How far is it?",
            coordinator_name="Kim",
        )
        out[name] = "\n".join((email.subject, email.text, email.html))
    return out


# --- Choosing the first letter ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("checks", "template"),
    [
        (["shift"], "shift_mismatch"),
        (["location"], "location_mismatch"),
        (["location", "shift"], "both_mismatch"),
        (["shift", "location"], "both_mismatch"),
        (["ridership"], "ridership_mismatch"),
        (["parking"], "parking_conflict"),
        (["location", "parking"], "several_findings"),
        (["ridership", "parking"], "several_findings"),
        (["shift", "ridership", "location"], "several_findings"),
    ],
)
def test_the_first_letter_is_chosen_by_the_riders_failing_checks(checks, template):
    assert initial_template_for(checks) == template


# The vanpool rules judge the van: no rider is written to about them.
@pytest.mark.parametrize("checks", [[], ["payroll"], ["location", "payroll"], ["vanpool_rules"]])
def test_there_is_no_first_letter_for_checks_it_does_not_know(checks):
    with pytest.raises(ValueError, match="no first letter"):
        initial_template_for(checks)


# --- Facts for one rider -----------------------------------------------------------------------


def test_rider_facts_carry_this_riders_own_distance_and_hours(two_riders):
    case, ana, _ = two_riders
    facts = rider_facts(case, ana)
    assert (facts.first_name, facts.employee_id, facts.case_id) == (
        "Ana",
        ana.employee_id,
        case.case_id,
    )
    assert facts.failed_checks == ("location", "shift")
    assert facts.home_zip == SACRAMENTO
    assert facts.miles is not None and 80 < facts.miles < 100
    assert facts.max_miles == 50
    assert (facts.shift_name, facts.rider_hours, facts.van_hours) == (
        "Swing",
        "Mon–Fri 15:00–23:30",
        "Mon–Fri 07:00–15:30",
    )
    assert facts.days_mismatched == facts.days_compared == 5
    assert facts.tolerance_minutes == 30


def test_rider_facts_list_only_the_checks_this_rider_fails(van):
    far_day = ride(van, home_zip=SACRAMENTO, shift=shift(VAN_HOURS, "Day"))
    ride(van, home_zip=NEAR_ZIP, shift=shift(NIGHTS, "Night"))
    case = audited(van)
    assert case.meta["failed_checks"] == ["location", "shift"]
    assert rider_facts(case, far_day).failed_checks == ("location",)


def test_a_leading_zero_zip_is_kept_in_facts_and_messages():
    andover = VanpoolFactory(
        work_site="Andover Distribution Center",
        pickup_address="Andover Park & Ride, Andover, MA 01810",
        pickup_zip="01810",
        pickup_lat=42.6583,
        pickup_lng=-71.1368,
        schedule=VAN_HOURS,
    )
    day = shift(VAN_HOURS, "Day")
    ride(andover, home_zip="01810", shift=day)
    springfield = ride(andover, home_zip="01103", shift=day)
    facts = rider_facts(audited(andover), springfield)
    assert facts.home_zip == "01103"
    email = render_email("location_mismatch", facts)
    assert "ZIP 01103" in email.text
    assert ">01103<" in email.html


def test_a_van_without_a_timetable_is_explained_as_its_riders_majority_hours():
    vanpool = VanpoolFactory(schedule=[])
    day = shift(VAN_HOURS, "Day")
    ride(vanpool, home_zip=NEAR_ZIP, shift=day)
    ride(vanpool, home_zip=NEAR_ZIP, shift=day)
    swing = ride(vanpool, home_zip=NEAR_ZIP, shift=shift(SWING, "Swing"))
    facts = rider_facts(audited(vanpool), swing)
    assert facts.van_hours_from_riders
    assert "the hours most of its riders work" in flat(render_email("shift_mismatch", facts).text)


def test_leave_days_are_counted_and_said_to_be_left_out(van):
    night = ride(van, home_zip=NEAR_ZIP, shift=shift(NIGHTS, "Night"))
    LeaveFactory(employee=night, start_date=dt.date(2026, 11, 24), end_date=dt.date(2026, 11, 24))
    facts = rider_facts(audited(van), night)
    assert (facts.days_compared, facts.days_on_leave) == (3, 1)
    assert "We left out 1 day of leave or PTO." in flat(render_email("shift_mismatch", facts).text)


def test_the_newest_verification_of_each_check_is_used(van):
    mover = ride(van, home_zip=SACRAMENTO, shift=shift(NIGHTS, "Night"))
    case = audited(van)
    mover.home_zip = FRESNO  # moved even further; only the location check runs again
    mover.save()
    audit_vanpool(van.vanpool_id, audit_date=AUDIT_DATE, checks=["location"])
    facts = rider_facts(case, mover)
    assert facts.home_zip == FRESNO
    assert facts.miles is not None and facts.miles > 150
    assert facts.rider_hours == "Sun–Thu 22:00–06:30"  # the shift check's older row


def test_rider_facts_take_a_bounded_number_of_queries(
    two_riders, django_assert_max_num_queries, django_assert_num_queries
):
    case, ana, _ = two_riders
    for day in range(1, 4):  # re-audits add verifications; the query count must not grow
        audit_vanpool(case.vanpool.vanpool_id, audit_date=AUDIT_DATE + dt.timedelta(days=day))
    fresh_case = Case.objects.get(pk=case.pk)
    fresh_ana = Employee.objects.get(pk=ana.pk)
    with django_assert_max_num_queries(3):  # verifications, vanpool, shift
        rider_facts(fresh_case, fresh_ana)
    loaded = (
        Case.objects.select_related("vanpool").prefetch_related("verifications").get(pk=case.pk)
    )
    loaded_ana = Employee.objects.select_related("shift").get(pk=ana.pk)
    with django_assert_num_queries(0):
        facts = rider_facts(loaded, loaded_ana)
    assert facts == rider_facts(fresh_case, fresh_ana)


def test_the_deadline_is_the_last_whole_day_before_the_reply_deadline(two_riders):
    case, ana, _ = two_riders
    case.reply_deadline = dt.datetime(2026, 11, 30, 9, 0, tzinfo=timezone.get_current_timezone())
    facts = rider_facts(case, ana)
    assert facts.deadline == dt.date(2026, 11, 29)
    assert facts.deadline_text == "Sunday, November 29"
    assert "by Sunday, November 29" in flat(render_email("both_mismatch", facts).text)


def test_an_open_case_without_a_deadline_yet_shows_the_one_outreach_will_set(two_riders):
    case, ana, _ = two_riders
    assert case.reply_deadline is None
    # REPLY_WAIT_DAYS (7) from the frozen Monday 09:00; the last whole day is the Sunday.
    assert rider_facts(case, ana).deadline == dt.date(2026, 11, 29)


def test_a_message_without_a_deadline_does_not_invent_one(two_riders):
    case, ana, _ = two_riders
    facts = dataclasses.replace(rider_facts(case, ana), deadline=None)
    email = render_email("reminder", facts)
    assert email.subject.startswith("Reminder: please check your record")
    assert " by " not in email.subject
    assert "If we don't hear from you and your record still doesn't match" in flat(email.text)


# --- What each message says --------------------------------------------------------------------


def test_the_location_letter_gives_the_riders_zip_distance_limit_and_pickup(van):
    sam = ride(van, first_name="Sam", home_zip=SACRAMENTO, shift=shift(VAN_HOURS, "Day"))
    facts = rider_facts(audited(van), sam)
    email = render_email("location_mismatch", facts)
    assert email.subject == (
        f"Action needed: please check your home address for vanpool VP-110 ({facts.case_id})"
    )
    for body in (flat(email.text), email.html):
        assert "95814" in body
        assert f"{facts.miles_text} miles" in body
        assert "50 miles" in body
        assert "Union City BART" in body
        assert facts.portal_url in body
        assert "Sunday, November 29" in body
    assert "Your work hours" not in email.text  # a location letter says nothing of hours
    assert "Hello Sam," in email.text


def test_the_shift_letter_gives_the_riders_hours_the_vans_and_the_tolerance(van):
    nora = ride(van, first_name="Nora", home_zip=NEAR_ZIP, shift=shift(NIGHTS, "Night"))
    email = render_email("shift_mismatch", rider_facts(audited(van), nora))
    for body in (flat(email.text), email.html):
        assert "Night" in body
        assert "Sun–Thu 22:00–06:30" in body
        assert "Mon–Fri 07:00–15:30" in body
        assert "30 minutes" in body
    assert "On all 4 workdays we compared, yours did not." in flat(email.text)
    assert "Where you live" not in email.text
    assert "ask them to change it" in flat(email.text)  # a shift may be HR's to change


def test_the_both_letter_gives_distance_and_hours(two_riders):
    case, ana, _ = two_riders
    email = render_email("both_mismatch", rider_facts(case, ana))
    assert "Where you live" in email.text and "Your work hours" in email.text
    assert "95814" in email.text and "15:00–23:30" in email.text
    assert "home address or shift" in flat(email.text)


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_template_renders_a_one_line_subject_a_text_and_an_html_body(two_riders, template):
    case, ana, _ = two_riders
    facts = rider_facts(case, ana)
    email = render_email(
        template, facts, answer_paragraphs=["First.", "Second."], coordinator_name="Kim Lee"
    )
    assert email.subject and "\n" not in email.subject and email.subject == email.subject.strip()
    assert case.case_id in email.subject
    assert email.text.startswith("Hello Ana,\n")
    assert facts.contact_email in email.text and case.case_id in email.text
    assert email.html.startswith("<!DOCTYPE html>") and email.html.endswith("</html>")
    assert '<html lang="en">' in email.html and "Hello Ana," in email.html
    # Text bodies read on their own: no markup, no blank-line runs, wrapped lines.
    assert "<" not in email.text and "{%" not in email.text and "{{" not in email.text
    assert "\n\n\n" not in email.text
    assert all(len(line) <= TEXT_WIDTH or "://" in line for line in email.text.splitlines())


@pytest.mark.parametrize(
    ("template", "says"),
    [
        ("still_shows", ["checked your record again", "still does not match", "95814"]),
        ("reminder", ["A reminder", "Sunday, November 29", "15:00–23:30"]),
        ("resolved", ["now matches", "nothing more you need to do"]),
        ("cancelled", ["has been cancelled", "95814", "If you think this is a mistake"]),
        ("holding_reply", ["program coordinator, Kim Lee,", "follow up with you personally"]),
        ("answer", ["First.\n\nSecond."]),
    ],
)
def test_follow_ups_and_decisions_say_what_happened(two_riders, template, says):
    case, ana, _ = two_riders
    email = render_email(
        template,
        rider_facts(case, ana),
        answer_paragraphs=["First.", "Second."],
        coordinator_name="Kim Lee",
    )
    for phrase in says:
        assert phrase in (email.text if "\n" in phrase else flat(email.text))


def test_decisions_point_to_the_program_address_not_a_reply(two_riders):
    # A reply on a closed case is only filed, so closed-case letters do not invite one.
    case, ana, _ = two_riders
    for template in ("resolved", "cancelled"):
        email = render_email(template, rider_facts(case, ana))
        assert "Reply to this email" not in email.text
        assert "Questions? Write to" in email.text


def test_the_cancellation_says_why_whom_to_contact_and_how_to_ride_again(two_riders):
    case, ana, _ = two_riders
    facts = rider_facts(case, ana)
    text = render_email("cancelled", facts).text
    assert "Why\n" in text and "Riding again\n" in text
    assert facts.contact_email in text and facts.portal_url in text


def test_an_answer_quotes_the_question_on_one_line_and_escapes_it_in_html(two_riders):
    case, ana, _ = two_riders
    email = render_email(
        "answer",
        rider_facts(case, ana),
        answer_paragraphs=["See https://portal.example.com/my-profile & reply."],
        question_excerpt="Is <i>this</i>\nright?",
    )
    assert "> Is <i>this</i> right?\n" in email.text
    assert "Is &lt;i&gt;this&lt;/i&gt; right?" in email.html
    assert '<a href="https://portal.example.com/my-profile"' in email.html
    assert "&amp; reply." in email.html


def test_html_escapes_a_riders_name_and_text_keeps_it_as_written(van):
    odd = ride(van, first_name="<b>O'Neil & Co</b>", home_zip=SACRAMENTO, shift=shift(SWING, "S"))
    facts = rider_facts(audited(van), odd)
    for template in sorted(TEMPLATES):
        email = render_email(template, facts, answer_paragraphs=["ok"])
        assert "&lt;b&gt;O&#x27;Neil &amp; Co&lt;/b&gt;" in email.html
        assert "<b>O'Neil" not in email.html
        assert "Hello <b>O'Neil & Co</b>," in email.text


@pytest.mark.parametrize("name", ["nope", "../base", "emails/answer", "", "_layout"])
def test_an_unknown_template_is_refused(two_riders, name):
    case, ana, _ = two_riders
    with pytest.raises(ValueError, match="unknown email template"):
        render_email(name, rider_facts(case, ana))


# --- Co-riders never see each other ------------------------------------------------------------


def test_a_message_to_one_rider_never_contains_a_co_riders_data(two_riders):
    case, ana, zed = two_riders
    zed_facts = rider_facts(case, zed)
    assert set(case.meta["rider_flags"]) == {ana.employee_id, zed.employee_id}
    for template, message in rendered_all(rider_facts(case, ana)).items():
        for secret in (
            zed.first_name,
            zed.last_name,
            zed.employee_id,
            zed.email,
            zed.home_zip,
            zed_facts.miles_text,
            "22:00",  # Zed's night hours
            "Night",
        ):
            assert secret not in message, f"{template} leaks {secret!r}"
        # Nor the unflagged co-rider, Dana.
        assert "Dana" not in message and NEAR_ZIP not in message.replace("Union City, CA 94587", "")


def test_each_rider_is_told_about_their_own_numbers(two_riders):
    case, ana, zed = two_riders
    ana_text = render_email("both_mismatch", rider_facts(case, ana)).text
    zed_text = render_email("both_mismatch", rider_facts(case, zed)).text
    assert re.search(r"ZIP 95814\) is about \d+\.\d miles", flat(ana_text))
    assert re.search(r"ZIP 93721\) is about \d+\.\d miles", flat(zed_text))
    assert "FRESNO" not in ana_text.upper() and "93721" not in ana_text
