"""The vanpool list and a vanpool's page: filters, flags, the map, the week chart."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from dashboard.charts.occupancy import last_months, occupancy_chart
from tests.factories import (
    CaseFactory,
    EmployeeFactory,
    RiderFactory,
    ShiftFactory,
    UserFactory,
    VanpoolFactory,
)
from vanpools.models import Trip, VanpoolMonth

pytestmark = pytest.mark.django_db

NIGHT = [
    {"day": day, "start": "22:00", "end": "06:30"} for day in ("Sun", "Mon", "Tue", "Wed", "Thu")
]


def flagged_case(vanpool, employee_id, reason="location_mismatch", checks=None):
    return CaseFactory(
        vanpool=vanpool,
        status="pending_reply",
        meta={
            "reason": reason,
            "failed_checks": ["location"],
            "rider_flags": {employee_id: checks or {"location": "fail"}},
        },
    )


def make_vans(count, site="Fremont Campus"):
    vans = []
    for _ in range(count):
        van = VanpoolFactory(work_site=site)
        RiderFactory.create_batch(2, vanpool=van)
        vans.append(van)
    return vans


# --- The list ---------------------------------------------------------------------------------


def test_the_list_puts_flagged_vanpools_first_with_their_case_and_reason(client, coordinator):
    quiet, flagged = make_vans(2)
    case = flagged_case(flagged, "EMP-1", reason="shift_mismatch", checks={"shift": "fail"})
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-list")).content.decode()

    assert html.index(flagged.vanpool_id) < html.index(quiet.vanpool_id)
    assert case.case_id in html and "shift mismatch" in html and "1 rider flagged" in html
    assert 'class="flagged"' in html


@pytest.mark.parametrize(
    ("query", "shown", "hidden"),
    [
        ({"flag": "flagged"}, "VP-FLAG", "VP-QUIET"),
        ({"flag": "clear"}, "VP-QUIET", "VP-FLAG"),
        ({"flag": "location_mismatch"}, "VP-FLAG", "VP-QUIET"),
        ({"site": "Andover"}, "VP-QUIET", "VP-FLAG"),
        ({"status": "suspended"}, "VP-QUIET", "VP-FLAG"),
        ({"q": "quiet"}, "VP-QUIET", "VP-FLAG"),
    ],
)
def test_the_filters_narrow_the_list(client, coordinator, query, shown, hidden):
    flagged = VanpoolFactory(vanpool_id="VP-FLAG", name="Loud van")
    VanpoolFactory(vanpool_id="VP-QUIET", name="Quiet van", work_site="Andover", status="suspended")
    flagged_case(flagged, "EMP-1")
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-list"), query).content.decode()

    assert shown in html and hidden not in html


def test_a_reason_filter_skips_vanpools_flagged_for_another_reason(client, coordinator):
    van = VanpoolFactory()
    flagged_case(van, "EMP-1", reason="shift_mismatch")
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-list"), {"flag": "location_mismatch"}).content.decode()

    assert van.vanpool_id not in html


@pytest.mark.parametrize(
    "query",
    [{"site": "Nowhere"}, {"status": "sunk"}, {"flag": "x"}, {"page": "0"}, {"page": "abc"}],
)
def test_bad_filters_are_a_400_that_says_why_not_a_500(client, coordinator, query):
    VanpoolFactory()
    client.force_login(coordinator)

    response = client.get(reverse("vanpool-list"), query)

    assert response.status_code == 400
    assert b"These filters cannot be used" in response.content


def test_an_htmx_filter_request_gets_only_the_rows(client, coordinator):
    VanpoolFactory()
    client.force_login(coordinator)

    response = client.get(reverse("vanpool-list"), {"flag": ""}, headers={"HX-Request": "true"})

    html = response.content.decode()
    assert html.lstrip().startswith('<div id="vanpool-rows">')
    assert "<html" not in html


def test_the_list_is_paginated_and_keeps_the_filters_in_page_links(client, coordinator):
    VanpoolFactory.create_batch(51, status="active")
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-list"), {"status": "active"}).content.decode()

    assert "Page 1 of 2" in html
    assert "?status=active&amp;page=2" in html


@pytest.mark.parametrize("size", [3, 30])
def test_the_list_queries_do_not_grow_with_vanpools(
    client, coordinator, django_assert_max_num_queries, size
):
    for van in make_vans(size):
        flagged_case(van, "EMP-1")
    client.force_login(coordinator)

    with django_assert_max_num_queries(7):
        response = client.get(reverse("vanpool-list"), {"flag": "flagged"})
    assert response.status_code == 200


def test_outsiders_cannot_see_vanpools(client, outsider):
    van = VanpoolFactory()
    client.force_login(outsider)
    assert client.get(reverse("vanpool-detail", args=[van.vanpool_id])).status_code == 403
    assert client.get(reverse("vanpool-list")).status_code == 403


# --- One vanpool ------------------------------------------------------------------------------


@pytest.fixture
def van_with_far_rider():
    van = VanpoolFactory(vanpool_id="VP-200", max_commute_miles=60)
    near = RiderFactory(vanpool=van, employee=EmployeeFactory(employee_id="EMP-NEAR"))
    far = RiderFactory(
        vanpool=van,
        employee=EmployeeFactory(
            employee_id="EMP-FAR", home_zip="90026", home_address="1 Sunset Blvd"
        ),
    )
    flagged_case(van, "EMP-FAR")
    return van, near, far


def test_the_vanpool_page_shows_the_map_with_limit_circle_and_flagged_rider(
    client, coordinator, van_with_far_rider
):
    van, _, _ = van_with_far_rider
    client.force_login(coordinator)

    response = client.get(reverse("vanpool-detail", args=[van.vanpool_id]))

    html = response.content.decode()
    assert response.status_code == 200
    assert 'class="chart vp-map"' in html and 'class="map-limit"' in html
    # The circle is the straight-line radius of the 60 commute-mile limit.
    assert "60 commute mi ≈ 50.0 mi straight line" in html
    # Los Angeles is far outside: drawn on the edge, flagged, with its miles.
    assert "map-home is-flagged is-clipped" in html
    assert "EMP-FAR · " in html and " mi →" in html
    assert "map-pickup" in html and "map-site" in html and "map-scale" in html
    assert "tile" not in html.split('class="chart vp-map"')[1].split("</svg>")[0]


def test_the_riders_table_shows_zip_and_miles_and_marks_riders_over_the_limit(
    client, coordinator, van_with_far_rider
):
    van, _, _ = van_with_far_rider
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-detail", args=[van.vanpool_id])).content.decode()

    assert "ZIP 90026" in html
    assert "over 60" in html
    assert "location: fail" in html


def test_coordinators_never_see_a_riders_street_address_on_the_vanpool_page(
    client, coordinator, van_with_far_rider
):
    van, _, _ = van_with_far_rider
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-detail", args=[van.vanpool_id])).content.decode()

    assert "1 Sunset Blvd" not in html


def test_auditors_with_the_address_permission_see_the_street(client, auditor, van_with_far_rider):
    van, _, _ = van_with_far_rider
    client.force_login(auditor)

    html = client.get(reverse("vanpool-detail", args=[van.vanpool_id])).content.decode()

    assert "1 Sunset Blvd" in html


def test_without_the_permission_the_map_puts_exact_homes_at_their_zip_centre(client, coordinator):
    van = VanpoolFactory()
    # Exact coordinates 0.05° off the ZIP centre of 94587.
    employee = EmployeeFactory(home_zip="94587", home_lat=37.65, home_lng=-122.10)
    RiderFactory(vanpool=van, employee=employee)
    auditor = UserFactory(username="auditor", is_staff=True, groups=["Auditors"])

    def marker_transform(user):
        client.force_login(user)
        html = client.get(reverse("vanpool-detail", args=[van.vanpool_id])).content.decode()
        return html.split('class="map-home')[1].split('transform="')[1].split('"')[0]

    assert marker_transform(coordinator) != marker_transform(auditor)


def test_the_week_chart_marks_a_night_rider_on_a_day_van_as_mismatched(client, coordinator):
    van = VanpoolFactory(schedule=[{"day": "Mon", "start": "07:00", "end": "16:00"}])
    night = ShiftFactory(name="Night", schedule=NIGHT, overnight=True)
    RiderFactory(vanpool=van, employee=EmployeeFactory(employee_id="EMP-NIGHT", shift=night))
    RiderFactory(vanpool=van, employee=EmployeeFactory(employee_id="EMP-DAY"))
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-detail", args=[van.vanpool_id])).content.decode()

    week = html.split('class="chart vp-week"')[1].split("</svg>")[0]
    assert "wk-miss" in week
    # Not colour alone: the mismatch carries a ✕ marker and a title.
    assert 'class="wk-mark wk-mark-mismatch"' in week
    assert "shift does not match the van&#x27;s hours" in week or "shift does not match" in week
    # The night shift is split at midnight: 22:00–24:00 and 00:00–06:30 bars.
    assert week.count("EMP-NIGHT works 22:00–06:30") >= 2
    assert "mismatched rider-day" in html


def test_the_week_chart_does_not_count_leave_as_a_mismatch(client, coordinator):
    van = VanpoolFactory(schedule=[{"day": "Mon", "start": "07:00", "end": "16:00"}])
    night = ShiftFactory(
        schedule=[{"day": "Mon", "start": "22:00", "end": "06:30"}], overnight=True
    )
    employee = EmployeeFactory(shift=night)
    employee.leaves.create(start_date=dt.date(2026, 11, 23), end_date=dt.date(2026, 11, 23))
    RiderFactory(vanpool=van, employee=employee)
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-detail", args=[van.vanpool_id])).content.decode()

    week = html.split('class="chart vp-week"')[1].split("</svg>")[0]
    assert "wk-mark-leave" in week and "wk-miss" not in week


def test_an_unreadable_shift_is_shown_as_such_not_as_a_pass(client, coordinator):
    van = VanpoolFactory()
    text_shift = ShiftFactory(schedule=[], schedule_text="whenever the boss says")
    RiderFactory(vanpool=van, employee=EmployeeFactory(shift=text_shift))
    RiderFactory(vanpool=van)
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-detail", args=[van.vanpool_id])).content.decode()

    assert "Shift cannot be read" in html and "wk-mark-unknown" in html


def test_names_and_reasons_are_escaped_in_the_svg(client, coordinator):
    van = VanpoolFactory(work_site="<script>alert(1)</script>")
    RiderFactory(vanpool=van, employee=EmployeeFactory(first_name="<b>Bo</b>"))
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-detail", args=[van.vanpool_id])).content.decode()

    assert "<script>alert(1)</script>" not in html and "<b>Bo</b>" not in html
    assert "&lt;script&gt;" in html


def test_a_vanpool_with_no_place_to_measure_from_says_so_instead_of_a_map(client, coordinator):
    van = VanpoolFactory(
        pickup_lat=None, pickup_lng=None, pickup_zip="", work_site_lat=None, work_site_lng=None
    )
    RiderFactory(vanpool=van)
    client.force_login(coordinator)

    response = client.get(reverse("vanpool-detail", args=[van.vanpool_id]))

    assert response.status_code == 200
    assert b"No map:" in response.content


def test_cancelled_memberships_are_listed_with_who_and_why(client, coordinator):
    van = VanpoolFactory()
    RiderFactory(
        vanpool=van,
        status="cancelled",
        cancelled_at=timezone.now(),
        cancelled_by=coordinator,
        cancel_reason="CASE-1: location check failed",
    )
    client.force_login(coordinator)

    html = client.get(reverse("vanpool-detail", args=[van.vanpool_id])).content.decode()

    assert "Cancelled memberships" in html and "CASE-1: location check failed" in html


def test_an_unknown_vanpool_is_a_404(client, coordinator):
    client.force_login(coordinator)
    assert client.get(reverse("vanpool-detail", args=["VP-NOPE"])).status_code == 404


@pytest.mark.parametrize("riders", [2, 14])
def test_the_vanpool_page_queries_do_not_grow_with_riders(
    client, coordinator, django_assert_max_num_queries, riders
):
    van = VanpoolFactory()
    for _ in range(riders):
        employee = EmployeeFactory()
        employee.leaves.create(start_date=dt.date(2026, 12, 1), end_date=dt.date(2026, 12, 2))
        RiderFactory(vanpool=van, employee=employee)
    flagged_case(van, "EMP-1")
    client.force_login(coordinator)

    # 3 of them for the occupancy chart's months (trips, ride days, reports).
    with django_assert_max_num_queries(11):
        assert client.get(reverse("vanpool-detail", args=[van.vanpool_id])).status_code == 200


# --- Occupancy by month ----------------------------------------------------------------------


def test_the_vanpool_page_charts_occupancy_by_month_against_the_rule(client, coordinator):
    vanpool = VanpoolFactory(seats=6)
    today = dt.date(2026, 11, 23)
    assert last_months(today, 2) == [dt.date(2026, 9, 1), dt.date(2026, 10, 1)]
    for n, (day, passengers) in enumerate([(dt.date(2026, 9, 8), 4), (dt.date(2026, 10, 6), 2)]):
        Trip.objects.create(vanpool=vanpool, date=day, trip_ref=f"T{n}", passengers=passengers)
    VanpoolMonth.objects.create(vanpool=vanpool, month=dt.date(2026, 8, 1), seats=8)
    chart = occupancy_chart(vanpool, today)
    assert chart is not None
    assert [(row.label, row.value, row.tone) for row in chart.chart.rows] == [
        ("Sep 2026", 67, "bar-ok"),
        ("Oct 2026", 33, "bar-danger"),
    ]
    assert chart.unknown == ["Aug 2026"]  # a report, but no trips that month
    client.force_login(coordinator)
    html = client.get(reverse("vanpool-detail", args=[vanpool.vanpool_id])).content.decode()
    assert "Occupancy by month" in html and "No occupancy for Aug 2026" in html


def test_a_van_with_no_trips_or_reports_has_no_occupancy_chart():
    assert occupancy_chart(VanpoolFactory(), dt.date(2026, 11, 23)) is None
