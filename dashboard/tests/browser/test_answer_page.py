"""A rider answers from the link in their email, in a real browser, at 1280 and 390 px.

One test per choice, in English and in Arabic (right to left): the page is
opened from the first notice's link, read by axe-core (labels, contrast,
names), checked not to pan sideways on a phone, and answered with JavaScript
switched off (the page needs none); the answer lands on the case's thread and
the loop acts on it.
"""

import datetime as dt
import re

import pytest
from django.conf import settings
from django.core import mail
from django.utils import timezone, translation

from caseloop.audits import audit_vanpool
from cases.models import Case
from dashboard.tests.browser import axe, scenes
from dashboard.tests.browser.conftest import DESKTOP, PHONE
from outreach.answer_page import BY_NAME
from outreach.models import Message
from tests.factories import EmployeeFactory, RiderFactory, ShiftFactory, VanpoolFactory
from vanpools.models import DataCoverage, Employee, ParkingPermit, RideDay

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

PAGE = re.compile(r"https?://[^/\s]+(/answer/CASE-[0-9A-F]{8}/[A-Za-z0-9_-]+/)")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
# What each choice needs filled in, and what the case shows once the loop has read it.
ANSWERS = {
    "address_updated": ({}, "pending_reply"),
    "address_right": ({"text": "What ZIP do you have on file for me?"}, "pending_reply"),
    "staying_elsewhere": ({"until": "2027-01-15"}, "hitl_review"),
    "shift_updated": ({}, "pending_reply"),
    "on_leave": ({"until": "2027-01-15"}, "hitl_review"),
    "rides_not_recorded": ({}, "hitl_review"),
    "permit_returned": ({}, "pending_reply"),  # the permit is still on record: it still shows
    "give_up_seat": ({}, "pre_cancel"),
    "question": ({"text": "How far is too far?"}, "pending_reply"),
    "talk_to_person": ({}, "hitl_review"),
    "not_me": ({}, "hitl_review"),
}


def shift_case() -> Case:
    """A night-shift rider on a day van: a shift finding."""
    day = ShiftFactory()
    night = ShiftFactory(
        name="Night",
        schedule=[{"day": d, "start": "22:00", "end": "06:30"} for d in WEEKDAYS],
        overnight=True,
    )
    vanpool = VanpoolFactory()
    for _ in range(2):
        RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=scenes.NEAR_ZIP, shift=day))
    RiderFactory(
        vanpool=vanpool,
        employee=EmployeeFactory(first_name="Minh", home_zip=scenes.NEAR_ZIP, shift=night),
    )
    audit_vanpool(vanpool.vanpool_id)
    return Case.objects.get(vanpool=vanpool)


def ridership_case() -> Case:
    """A rider the trip log shows on none of the window's workdays: a ridership finding."""
    hours = [{"day": d, "start": "07:00", "end": "15:30"} for d in WEEKDAYS]
    vanpool = VanpoolFactory(schedule=hours)
    riders = [
        EmployeeFactory(
            first_name=name, home_zip=scenes.NEAR_ZIP, shift=ShiftFactory(schedule=hours)
        )
        for name in ("Dana", "Minh")
    ]
    for employee in riders:
        RiderFactory(vanpool=vanpool, employee=employee, joined=dt.date(2026, 1, 5))
    today = timezone.localdate()
    start = today - dt.timedelta(days=settings.RIDERSHIP_WINDOW_DAYS)
    DataCoverage.objects.create(kind="trips", vanpool=vanpool, start=start, end=today)
    for n in range(settings.RIDERSHIP_WINDOW_DAYS):
        day = start + dt.timedelta(days=n)
        if day.weekday() < 5:
            RideDay.objects.create(vanpool=vanpool, employee=riders[0], date=day, source="trip")
    audit_vanpool(vanpool.vanpool_id)
    return Case.objects.get(vanpool=vanpool)


def parking_case() -> Case:
    """A rider holding a parking permit beside the seat: a parking finding."""
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=scenes.NEAR_ZIP))
    holder = EmployeeFactory(first_name="Minh", home_zip=scenes.NEAR_ZIP)
    RiderFactory(vanpool=vanpool, employee=holder)
    DataCoverage.objects.create(kind="permits", work_site="")
    ParkingPermit.objects.create(
        permit_id="P-5521", employee=holder, lot="Garage B", valid_from=dt.date(2026, 1, 5)
    )
    audit_vanpool(vanpool.vanpool_id)
    return Case.objects.get(vanpool=vanpool)


# The case each choice is offered on, by the finding it fits (any other: a home too far).
CASES = {"shift": shift_case, "ridership": ridership_case, "parking": parking_case}


def sideways_pan(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


@pytest.fixture
def browser_context_args(browser_context_args):
    return {**browser_context_args, "bypass_csp": True}  # axe is added as a script


def speaking(case: Case, lang: str) -> None:
    """The case's riders read ``lang`` (the roster's column); the page follows it."""
    Employee.objects.filter(memberships__vanpool=case.vanpool).update(preferred_language=lang)


@pytest.mark.parametrize("width", [DESKTOP, PHONE], ids=["1280", "390"])
@pytest.mark.parametrize("lang", ["en", "ar"])
@pytest.mark.parametrize("choice", list(ANSWERS))
def test_a_rider_answers_each_choice_without_javascript(
    browser, live_server, screenshots, choice, lang, width
):
    case = CASES.get(BY_NAME[choice].fits, scenes.audited_case)()
    speaking(case, lang)
    path = PAGE.search(mail.outbox[-1].body).group(1)
    url = f"{live_server.url}{path}?choice={choice}"

    looking = browser.new_page(viewport=width, bypass_csp=True)
    looking.goto(url)
    direction = "rtl" if lang == "ar" else "ltr"
    assert looking.locator(f"html[lang={lang}][dir={direction}]").count() == 1
    found = axe.violations(looking)
    assert not found, axe.report(f"answer page ({choice}, {lang})", found)
    assert sideways_pan(looking) <= 0
    looking.close()

    context = browser.new_context(viewport=width, java_script_enabled=False)
    page = context.new_page()
    page.goto(url)
    assert page.locator(f"input[value={choice}]").is_checked()  # the email's button chose it
    fill, then = ANSWERS[choice]
    if "until" in fill:
        page.locator("input[name=until]").fill(fill["until"])
    if "text" in fill:
        page.locator("textarea[name=text]").fill(fill["text"])
    page.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r"\?sent=1$"))
    assert page.get_by_role("status").is_visible()
    with translation.override(lang):
        assert str(BY_NAME[choice].label) in page.locator(".given").inner_text()
    if width == PHONE:
        screenshots(page, f"answer-{choice}" + ("" if lang == "en" else f"-{lang}"), phone=False)
    context.close()

    answer = Message.objects.get(answer_link__isnull=False)
    assert answer.answer["choice"] == choice and answer.status == Message.Status.PROCESSED
    case.refresh_from_db()
    assert case.status == then


def test_a_dead_link_says_what_to_do_at_390_px(browser, live_server):
    page = browser.new_page(viewport=PHONE, bypass_csp=True)
    page.goto(f"{live_server.url}/answer/CASE-00000000/not-a-token/")
    assert "recognise this link" in page.content()
    found = axe.violations(page)
    assert not found, axe.report("refused page", found)
    assert sideways_pan(page) <= 0
