"""The second factor: an authenticator app (TOTP) with recovery codes, and MFA_REQUIRED_FOR.

Codes are computed here with pyotp from the secret the enrolment page shows,
as a person's authenticator app would; time is frozen, so each new code needs
the clock moved on by one 30-second step.
"""

import re

import pyotp
import pytest
from allauth.mfa.models import Authenticator
from axes.models import AccessAttempt
from django.test import Client

PASSWORD = "a-long-enough-password"
ENROL = "/accounts/2fa/totp/activate/"
CODE_PAGE = "/accounts/2fa/authenticate/"
AGAIN = "/accounts/2fa/reauthenticate/"
SECRET = re.compile(r'id="authenticator_secret"[^>]*value="([A-Z2-7]+)"')
HTMX = {"HTTP_HX_REQUEST": "true"}

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def passwords(auditor, coordinator):
    for user in (auditor, coordinator):
        user.set_password(PASSWORD)
        user.save()


@pytest.fixture
def auditors_need_it(settings):
    settings.MFA_REQUIRED_FOR = frozenset({"Auditors"})


def log_in(client: Client, username: str, url: str = "/login/"):
    return client.post(url, {"username": username, "password": PASSWORD})


def enrol(client: Client, _frozen_time) -> pyotp.TOTP:
    """Scan the secret from the enrolment page, answer with the app's code; the app."""
    page = client.get(ENROL)
    assert page.status_code == 200, page
    app = pyotp.TOTP(SECRET.search(page.content.decode()).group(1))
    response = client.post(ENROL, {"code": app.now()})
    assert response.status_code == 302, response.content
    _frozen_time.shift(30)  # a code is good once: the next one comes from the next step
    return app


def held_at(response, url: str) -> bool:
    return response.status_code == 302 and response["Location"].startswith(url)


def test_an_auditor_without_a_second_factor_is_held_at_enrolment(client, auditor, auditors_need_it):
    assert log_in(client, "auditor").status_code == 302

    for page in ("/", "/cases/", "/admin/", "/admin/cases/case/", "/api/cases"):
        assert held_at(client.get(page), f"{ENROL}?next="), page
    htmx = client.get("/", **HTMX)
    assert htmx["HX-Redirect"] == f"{ENROL}?next=%2F"
    enrolment = client.get(ENROL)
    assert enrolment.status_code == 200
    assert b"Your role needs a second factor: set up an authenticator app" in enrolment.content


def test_enrolling_opens_the_dashboard_and_the_admin_and_gives_recovery_codes(
    client, auditor, auditors_need_it, _frozen_time
):
    log_in(client, "auditor")
    page = client.get(ENROL).content.decode()
    assert 'src="data:image/svg+xml;base64,' in page  # the QR code to scan

    enrol(client, _frozen_time)

    codes = client.get("/accounts/2fa/recovery-codes/").content.decode()
    assert len(re.findall(r"\b[0-9]{8}\b", codes)) == 10
    assert client.get("/").status_code == 200
    assert client.get("/admin/").status_code == 200


def test_a_wrong_code_does_not_enrol(client, auditor, auditors_need_it):
    log_in(client, "auditor")
    client.get(ENROL)

    response = client.post(ENROL, {"code": "000000"})

    assert response.status_code == 200
    assert b"Incorrect code" in response.content
    assert not Authenticator.objects.filter(user=auditor).exists()
    assert held_at(client.get("/"), ENROL)


def test_the_next_password_sign_in_asks_for_the_code_before_any_page(
    client, auditor, auditors_need_it, _frozen_time
):
    log_in(client, "auditor")
    app = enrol(client, _frozen_time)
    browser = Client()

    response = log_in(browser, "auditor")

    assert held_at(response, CODE_PAGE)
    assert "_auth_user_id" not in browser.session
    assert held_at(browser.get("/"), "/login/")
    wrong = browser.post(CODE_PAGE, {"code": "000000"})
    assert wrong.status_code == 200 and b"Incorrect code" in wrong.content
    right = browser.post(CODE_PAGE, {"code": app.now()})
    assert right.status_code == 302 and right["Location"] == "/"
    assert browser.get("/").status_code == 200


def test_the_admin_login_asks_for_the_code_too(client, auditor, auditors_need_it, _frozen_time):
    log_in(client, "auditor")
    app = enrol(client, _frozen_time)
    browser = Client()

    response = log_in(browser, "auditor", url="/admin/login/?next=/admin/")

    assert held_at(response, CODE_PAGE)
    done = browser.post(CODE_PAGE, {"code": app.now()})
    assert done["Location"] == "/admin/"
    assert browser.get("/admin/").status_code == 200


def test_a_recovery_code_signs_in_once_in_place_of_the_app(
    client, auditor, auditors_need_it, _frozen_time
):
    log_in(client, "auditor")
    enrol(client, _frozen_time)
    code = re.findall(
        r"\b[0-9]{8}\b", client.get("/accounts/2fa/recovery-codes/").content.decode()
    )[0]

    first, second = Client(), Client()
    log_in(first, "auditor")
    assert first.post(CODE_PAGE, {"code": code})["Location"] == "/"
    log_in(second, "auditor")
    assert second.post(CODE_PAGE, {"code": code}).status_code == 200
    assert "_auth_user_id" not in second.session


def test_guessing_codes_is_cut_off_after_a_few_tries(
    client, auditor, auditors_need_it, _frozen_time
):
    log_in(client, "auditor")
    app = enrol(client, _frozen_time)
    browser = Client()
    log_in(browser, "auditor")
    for _ in range(5):
        browser.post(CODE_PAGE, {"code": "000000"})

    response = browser.post(CODE_PAGE, {"code": app.now()})

    assert b"Too many failed login attempts" in response.content
    assert "_auth_user_id" not in browser.session


def test_failed_passwords_still_lock_the_account_with_a_second_factor_required(
    client, auditor, auditors_need_it, settings
):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post("/login/", {"username": "auditor", "password": "wrong"})

    response = log_in(client, "auditor")

    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    assert AccessAttempt.objects.get(username="auditor").failures_since_start >= 5


def test_a_coordinator_goes_straight_in_when_only_auditors_need_it(
    client, coordinator, auditors_need_it
):
    log_in(client, "coordinator")

    assert client.get("/").status_code == 200


def test_all_holds_every_staff_user(client, coordinator, settings):
    settings.MFA_REQUIRED_FOR = frozenset({"all"})

    log_in(client, "coordinator")

    assert held_at(client.get("/"), ENROL)


def test_nobody_is_held_by_default(client, auditor):
    log_in(client, "auditor")

    assert client.get("/").status_code == 200


def test_a_session_that_never_passed_the_factor_is_asked_for_a_code(
    client, auditor, auditors_need_it, _frozen_time
):
    log_in(client, "auditor")
    app = enrol(client, _frozen_time)
    # A session made before the rule was switched on: signed in, never asked.
    old = Client()
    old.force_login(auditor)

    assert held_at(old.get("/cases/"), f"{AGAIN}?next=%2Fcases%2F")
    response = old.post(f"{AGAIN}?next=/cases/", {"code": app.now()})
    assert response["Location"] == "/cases/"
    assert old.get("/cases/").status_code == 200


def test_switching_the_app_off_holds_them_at_enrolment_again(
    client, auditor, auditors_need_it, _frozen_time
):
    # A lost phone: signed in with a recovery code, the old app off, a new one on.
    log_in(client, "auditor")
    enrol(client, _frozen_time)

    response = client.post("/accounts/2fa/totp/deactivate/")

    assert response.status_code == 302
    assert not Authenticator.objects.filter(user=auditor, type=Authenticator.Type.TOTP).exists()
    assert held_at(client.get("/"), ENROL)
    enrol(client, _frozen_time)
    assert client.get("/").status_code == 200


def test_a_coordinator_who_chose_a_second_factor_is_asked_for_it(client, coordinator, _frozen_time):
    log_in(client, "coordinator")
    enrol(client, _frozen_time)

    assert held_at(log_in(Client(), "coordinator"), CODE_PAGE)


def test_signing_in_over_another_account_keeps_the_code_just_given(
    outsider, auditor, auditors_need_it, _frozen_time
):
    enrolling = Client()
    log_in(enrolling, "auditor")
    app = enrol(enrolling, _frozen_time)
    browser = Client()
    browser.force_login(outsider)

    response = log_in(browser, "auditor", url="/admin/login/?next=/admin/")
    assert held_at(response, CODE_PAGE)
    browser.post(CODE_PAGE, {"code": app.now()})

    assert browser.get("/admin/").status_code == 200
