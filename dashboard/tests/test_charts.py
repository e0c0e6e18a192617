"""The SVG geometry: projection, clipping, scale bars, week segments and bars."""

import datetime as dt
import math

import pytest

from dashboard.charts import bars, vanpool_map, week
from vanpools.geo import Point, haversine_miles

PICKUP = Point(37.59, -122.02)


def test_it_projects_miles_true_to_scale_in_both_directions():
    projection = vanpool_map.Projection(PICKUP, px_per_mile=2.0, origin_x=100, origin_y=100)
    east = Point(PICKUP.lat, PICKUP.lng + 0.5)
    north = Point(PICKUP.lat + 0.5, PICKUP.lng)

    x_east, y_east = projection.to_xy(east)
    x_north, y_north = projection.to_xy(north)

    assert y_east == pytest.approx(100)
    assert (x_east - 100) / 2 == pytest.approx(haversine_miles(PICKUP, east), rel=0.005)
    assert x_north == pytest.approx(100)
    assert (100 - y_north) / 2 == pytest.approx(haversine_miles(PICKUP, north), rel=0.005)


def test_the_circle_is_the_straight_line_radius_of_the_commute_limit():
    chart = vanpool_map.map_chart(PICKUP, [], limit_miles=60, circuity=1.2)

    assert vanpool_map.straight_line_radius(60, 1.2) == pytest.approx(50)
    assert chart.circle_r / (chart.height / 2 - 34) == pytest.approx(50 / (50 * 1.2))
    assert "60 commute mi ≈ 50.0 mi straight line" in chart.circle_label


def test_a_circuity_below_one_is_refused():
    with pytest.raises(ValueError):
        vanpool_map.straight_line_radius(50, 0.9)


def test_nearby_homes_are_drawn_where_they_are_and_far_ones_are_clipped_with_their_miles():
    near = Point(PICKUP.lat + 0.1, PICKUP.lng)
    far = Point(34.05, -118.24)  # Los Angeles: ~330 miles away
    chart = vanpool_map.map_chart(
        PICKUP,
        [
            vanpool_map.MapPlace("home", near, "EMP-1"),
            vanpool_map.MapPlace("home", far, "EMP-2", flagged=True, miles=170.0),
        ],
        limit_miles=50,
        circuity=1.2,
    )
    near_marker, far_marker = chart.markers

    assert not near_marker.clipped
    assert far_marker.clipped and far_marker.miles == 170.0
    assert chart.clipped_count == 1
    assert 0 <= far_marker.x <= chart.width and 0 <= far_marker.y <= chart.height
    # The arrow points from the pickup towards Los Angeles: south-east.
    assert 0 < far_marker.angle < 90


def test_a_home_just_outside_the_circle_widens_the_frame_instead_of_being_clipped():
    outside = Point(PICKUP.lat + 0.9, PICKUP.lng)  # ~62 miles north, circle ~42
    chart = vanpool_map.map_chart(
        PICKUP, [vanpool_map.MapPlace("home", outside, "EMP-1")], limit_miles=50, circuity=1.2
    )

    marker = chart.markers[0]
    assert not marker.clipped
    assert math.dist((marker.x, marker.y), (chart.circle_x, chart.circle_y)) > chart.circle_r


@pytest.mark.parametrize(
    ("dx", "dy", "expected"),
    [
        (10, 5, (10, 5, False)),
        (400, 0, (100, 0, True)),
        (300, 300, (50, 50, True)),
        (0, -90, (0, -50, True)),
    ],
)
def test_clipping_pulls_a_point_back_onto_the_frame_along_its_bearing(dx, dy, expected):
    assert vanpool_map.clip_to_frame(dx, dy, 100, 50) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("miles", "nice"), [(0.7, 0.5), (1, 1), (3.9, 2), (7, 5), (19, 10), (230, 200)]
)
def test_scale_bars_use_round_distances(miles, nice):
    assert vanpool_map.nice_distance(miles) == pytest.approx(nice)


def test_the_scale_bar_length_matches_its_label():
    chart = vanpool_map.map_chart(PICKUP, [], limit_miles=50, circuity=1.2)
    px_per_mile = chart.circle_r / (50 / 1.2)

    assert chart.scale.length == pytest.approx(float(chart.scale.label.split()[0]) * px_per_mile)


def test_a_day_shift_is_one_segment_on_its_day():
    segments = week.day_segments(week.DaySpanOn(0, "07:00", "15:30"))
    assert segments == [week.Segment(0, 420, 930)]


def test_an_overnight_shift_is_split_at_midnight_into_the_next_day():
    segments = week.day_segments(week.DaySpanOn(3, "22:00", "06:30"))
    assert segments == [week.Segment(3, 1320, 1440), week.Segment(4, 0, 390)]


def test_the_sunday_before_contributes_only_its_monday_morning_and_sunday_night_only_its_evening():
    assert week.day_segments(week.DaySpanOn(-1, "22:00", "06:30")) == [week.Segment(0, 0, 390)]
    assert week.day_segments(week.DaySpanOn(6, "22:00", "06:30")) == [week.Segment(6, 1320, 1440)]


def test_a_shift_ending_at_midnight_leaves_no_empty_sliver():
    assert week.day_segments(week.DaySpanOn(2, "16:00", "00:00")) == [week.Segment(2, 960, 1440)]


def test_bars_sit_inside_their_day_column():
    layout = week.WeekLayout()
    (bar,) = week.bars_for([week.DaySpanOn(1, "12:00", "18:00")], layout)

    assert bar.x == pytest.approx(layout.label_width + 1.5 * layout.day_width, abs=0.1)
    assert bar.width == pytest.approx(layout.day_width / 4, abs=0.2)


def test_mismatched_days_get_a_marker_as_well_as_a_colour():
    row = week.WeekRow(
        "EMP-1", "Pat", "/", True, ["match", "mismatch", "no_van", "leave"] + ["off"] * 3
    )
    week.place_rows([row], week.WeekLayout())

    assert [cell.marker for cell in row.cells[:5]] == ["✓", "✕", "✕", "L", ""]
    assert row.mismatch_count == 2


def test_the_week_runs_monday_to_sunday():
    dates = week.week_dates(dt.date(2026, 11, 26))  # a Thursday
    assert dates[0] == dt.date(2026, 11, 23) and dates[-1] == dt.date(2026, 11, 29)


def test_bars_scale_to_the_largest_value_and_zero_is_empty():
    chart = bars.bar_chart(
        [("a", 10, "bar"), ("b", 5, "bar"), ("c", 0, "bar")],
        width=300,
        label_width=100,
        value_room=0,
    )

    assert [row.width for row in chart.rows] == [200, 100, 0]
    assert [row.y for row in chart.rows] == [0, 30, 60]


def test_an_all_zero_bar_chart_draws_no_bars():
    chart = bars.bar_chart([("a", 0, "bar")])
    assert chart.rows[0].width == 0
