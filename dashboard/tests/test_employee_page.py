"""An employee's page: profile, shift, seats (with cancellations), cases; addresses minimised."""

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.factories import (
    CaseFactory,
    EmployeeFactory,
    PendingActionFactory,
    RiderFactory,
    VanpoolFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def employee():
    return EmployeeFactory(
        employee_id="EMP-7",
        first_name="Ana",
        last_name="Lopez",
        home_address="12 Elm Street, Union City",
        home_zip="90026",
    )


def page(client, user, employee_id="EMP-7"):
    client.force_login(user)
    return client.get(reverse("employee-detail", args=[employee_id]))


def test_coordinators_see_zip_and_distance_but_not_the_street(client, coordinator, employee):
    RiderFactory(employee=employee)

    html = page(client, coordinator).content.decode()

    assert "12 Elm Street" not in html
    assert "90026" in html
    assert "commute miles" in html and "over the 50-mile limit" in html
    assert "street address hidden" in html


def test_users_with_the_address_permission_see_the_street(client, auditor, employee):
    RiderFactory(employee=employee)

    html = page(client, auditor).content.decode()

    assert "12 Elm Street, Union City" in html
    assert "street address hidden" not in html


def test_the_page_shows_profile_and_shift(client, coordinator, employee):
    html = page(client, coordinator).content.decode()

    assert "Ana Lopez" in html and "EMP-7" in html
    assert "Mon–Fri 07:00–16:00" in html
    assert "No active seat to measure to" in html


def test_cancelled_memberships_show_who_when_and_why(client, coordinator, employee):
    old = VanpoolFactory(vanpool_id="VP-OLD")
    RiderFactory(
        employee=employee,
        vanpool=old,
        status="cancelled",
        cancelled_at=timezone.now(),
        cancelled_by=coordinator,
        cancel_reason="CASE-1: location check failed; approved by coordinator.",
    )
    RiderFactory(employee=employee, vanpool=VanpoolFactory(vanpool_id="VP-NEW"))

    html = page(client, coordinator).content.decode()

    assert "VP-OLD" in html and "VP-NEW" in html
    assert "CASE-1: location check failed; approved by coordinator." in html
    assert "by coordinator" in html


def test_case_history_lists_cases_that_flagged_the_employee_or_acted_on_their_seat(
    client, coordinator, employee
):
    seat = RiderFactory(employee=employee)
    flagged = CaseFactory(
        vanpool=seat.vanpool,
        status="closed",
        outcome="resolved",
        closed_at=timezone.now(),
        meta={"reason": "shift_mismatch", "rider_flags": {"EMP-7": {"shift": "fail"}}},
    )
    acted = CaseFactory(vanpool=seat.vanpool, meta={"reason": "location_mismatch"})
    PendingActionFactory(case=acted, rider=seat)
    other = CaseFactory(
        vanpool=VanpoolFactory(), meta={"rider_flags": {"EMP-9": {"shift": "fail"}}}
    )

    html = page(client, coordinator).content.decode()

    assert flagged.case_id in html and "shift: fail" in html
    assert acted.case_id in html
    assert other.case_id not in html


def test_an_unknown_employee_is_a_404(client, coordinator):
    assert page(client, coordinator, "EMP-NOPE").status_code == 404


def test_outsiders_are_refused(client, outsider, employee):
    assert page(client, outsider).status_code == 403


def test_names_are_escaped(client, coordinator):
    EmployeeFactory(employee_id="EMP-8", first_name="<img src=x onerror=alert(1)>")

    html = page(client, coordinator, "EMP-8").content.decode()

    assert "<img src=x" not in html and "&lt;img src=x" in html


@pytest.mark.parametrize("history", [1, 12])
def test_the_employee_page_queries_do_not_grow_with_history(
    client, coordinator, employee, django_assert_max_num_queries, history
):
    for _ in range(history):
        van = VanpoolFactory()
        seat = RiderFactory(
            employee=employee,
            vanpool=van,
            status="cancelled",
            cancelled_at=timezone.now(),
            cancelled_by=coordinator,
        )
        case = CaseFactory(
            vanpool=van,
            status="closed",
            outcome="cancelled",
            closed_at=timezone.now(),
            meta={"rider_flags": {"EMP-7": {"location": "fail"}}},
        )
        PendingActionFactory(case=case, rider=seat)
    RiderFactory(employee=employee)
    client.force_login(coordinator)

    with django_assert_max_num_queries(8):
        response = client.get(reverse("employee-detail", args=["EMP-7"]))
    assert response.status_code == 200
    assert response.content.decode().count("cancelled") >= history


@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        ({"preferred_language": "vi"}, "Vietnamese (from the roster)"),
        (
            {"preferred_language": "vi", "requested_language": "en"},
            "English (the rider asked for it by reply)",
        ),
        ({}, "English (the program&#x27;s default)"),
    ],
)
def test_the_page_says_which_language_the_rider_is_written_to_in(
    client, coordinator, fields, shown
):
    EmployeeFactory(employee_id="EMP-8", **fields)
    html = page(client, coordinator, "EMP-8").content.decode()
    assert shown in html
    if "requested_language" in fields:
        assert "(roster: Vietnamese)" in html
