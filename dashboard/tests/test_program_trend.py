"""The program page's weekly trend: the series (dashboard/program.py), its chart
(dashboard/charts/trend.py) and the page that draws it.

Time is frozen at conftest.FROZEN_NOW: Monday 2026-11-23, 09:00 in program time
(America/Los_Angeles), so "this week" starts on Nov 23 and the twelve weeks on Sep 7.
"""

import datetime as dt
import zoneinfo

import pytest
from django.urls import reverse

from dashboard import program
from dashboard.charts import trend
from tests.factories import CaseEventFactory, CaseFactory, PendingActionFactory

LA = zoneinfo.ZoneInfo("America/Los_Angeles")
THIS_MONDAY = dt.date(2026, 11, 23)


def at(day: dt.date, hour: int = 12, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=LA)


def case(opened: dt.datetime, closed: dt.datetime | None = None, outcome: str = "resolved"):
    row = CaseFactory()
    fields = {"created_at": opened}
    if closed is not None:
        fields |= {"status": "closed", "outcome": outcome, "closed_at": closed}
    type(row).objects.filter(pk=row.pk).update(**fields)
    row.refresh_from_db()
    return row


def weeks_ago(n: int, day: int = 0) -> dt.date:
    return THIS_MONDAY - dt.timedelta(weeks=n) + dt.timedelta(days=day)


# --- The series ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_twelve_weeks_oldest_first_and_a_week_with_nothing_is_zeros():
    weeks = program.weekly_trend()

    assert [week.start for week in weeks] == [weeks_ago(n) for n in range(11, -1, -1)]
    assert weeks[0].start == dt.date(2026, 9, 7)
    assert all(week.opened == 0 and week.closed.closed == 0 for week in weeks)
    assert all(week.automation_rate is None for week in weeks)


@pytest.mark.django_db
def test_a_case_counts_in_the_week_it_opened_and_again_in_the_week_it_closed():
    case(at(weeks_ago(3, day=2)), closed=at(weeks_ago(1, day=4)), outcome="cancelled")
    case(at(weeks_ago(3, day=6)))  # still open

    by_week = {week.start: week for week in program.weekly_trend()}

    assert by_week[weeks_ago(3)].opened == 2
    assert by_week[weeks_ago(3)].closed.closed == 0
    closing = by_week[weeks_ago(1)]
    assert (closing.opened, closing.closed.closed, closing.closed.cancelled) == (0, 1, 1)


@pytest.mark.django_db
def test_weeks_start_on_monday_at_midnight_in_program_time():
    sunday_night = at(weeks_ago(2, day=6), hour=23, minute=59)  # already Monday in UTC
    monday_morning = at(weeks_ago(1), hour=0, minute=0)
    case(sunday_night)
    case(monday_morning)

    by_week = {week.start: week.opened for week in program.weekly_trend()}

    assert sunday_night.astimezone(dt.UTC).weekday() == 0
    assert (by_week[weeks_ago(2)], by_week[weeks_ago(1)]) == (1, 1)


@pytest.mark.django_db
def test_cases_outside_the_twelve_weeks_are_left_out():
    case(at(weeks_ago(12, day=6), hour=23), closed=at(weeks_ago(11), hour=1))
    case(at(weeks_ago(-1)))  # next week: not shown yet

    weeks = program.weekly_trend()

    assert sum(week.opened for week in weeks) == 0
    assert weeks[0].closed.closed == 1


@pytest.mark.django_db
def test_a_weeks_automation_rate_counts_as_the_headline_does(coordinator):
    week = weeks_ago(2, day=1)
    case(at(week), closed=at(week, 15))  # the workflow closed it alone
    decided = case(at(week), closed=at(week, 16), outcome="cancelled")
    PendingActionFactory(
        case=decided, status="approved", decided_by=coordinator, decided_at=at(week, 16)
    )
    by_hand = case(at(week), closed=at(week, 17), outcome="dismissed")
    CaseEventFactory(case=by_hand, actor_user=coordinator, actor_agent="", to_status="closed")
    case(at(weeks_ago(1)), closed=at(weeks_ago(1), 18))

    weeks = {w.start: w for w in program.weekly_trend()}
    headline = program.closed_cases()

    assert weeks[weeks_ago(2)].closed == program.ClosedCases(3, 1, 1, 1, 1)
    assert weeks[weeks_ago(2)].automation_rate == pytest.approx(1 / 3)
    assert weeks[weeks_ago(1)].automation_rate == 1.0
    # Every closed case is in the window: the weeks add up to the headline figures.
    assert sum(w.closed.closed for w in weeks.values()) == headline.closed == 4
    assert sum(w.closed.automated for w in weeks.values()) == headline.automated == 2


@pytest.mark.django_db
def test_the_series_takes_two_queries_however_many_cases(django_assert_num_queries):
    for n in range(30):
        case(at(weeks_ago(n % 12)), closed=at(weeks_ago(n % 12, day=3)) if n % 2 else None)

    with django_assert_num_queries(2):
        weeks = program.weekly_trend()

    assert sum(week.opened for week in weeks) == 30


# --- The chart ------------------------------------------------------------------------------


def week(label: str = "Sep 7", opened=0, resolved=0, cancelled=0, rate=None) -> trend.TrendWeek:
    return trend.TrendWeek(label, opened, resolved, cancelled, rate)


@pytest.mark.parametrize(
    ("top", "scale"),
    [(0, (5, 1)), (5, (5, 1)), (6, (6, 2)), (11, (15, 5)), (50, (50, 10)), (51, (60, 20))],
)
def test_the_count_axis_ends_on_a_round_number_in_at_most_five_steps(top, scale):
    assert trend.count_scale(top) == scale


def test_bars_stand_on_the_axis_scaled_to_its_top_in_series_order():
    chart = trend.trend_chart([week(opened=10, resolved=5), week("Sep 14")], height=240)
    plot = chart.bottom - chart.top
    opened, resolved, cancelled, *next_week = chart.bars

    assert [bar.series for bar in chart.bars] == ["opened", "resolved", "cancelled"] * 2
    assert opened.height == plot and opened.y == chart.top
    assert resolved.height == pytest.approx(plot / 2, abs=0.1)
    assert cancelled.height == 0 and cancelled.y == chart.bottom
    assert opened.x < resolved.x < cancelled.x < next_week[0].x
    assert opened.title == "Week of Sep 7: 10 opened"


def test_each_week_keeps_to_its_own_column_with_its_label_in_the_middle():
    chart = trend.trend_chart([week(str(n), opened=1) for n in range(12)])
    column = (chart.right - chart.left) / 12

    for index, label in enumerate(chart.labels):
        bars = chart.bars[index * 3 : index * 3 + 3]
        assert chart.left + index * column < bars[0].x
        assert bars[-1].x + bars[-1].width < chart.left + (index + 1) * column
        assert label.x == pytest.approx(chart.left + (index + 0.5) * column, abs=0.1)


def test_the_rate_line_skips_weeks_that_closed_nothing():
    rates = [0.5, None, 1.0, 0.0, None, 0.25]
    chart = trend.trend_chart([week(rate=rate) for rate in rates])

    assert trend.rate_runs(rates) == [[0], [2, 3], [5]]
    assert len(chart.points) == 4
    # Only weeks side by side are joined: a lone week is a point without a line.
    assert len(chart.lines) == 1 and chart.lines[0].count(",") == 2
    full, empty = chart.points[1], chart.points[2]
    assert (full.y, empty.y) == (chart.top, chart.bottom)
    assert full.title == "Week of Sep 7: 100% closed without a human decision"


def test_an_empty_trend_still_draws_its_axes():
    chart = trend.trend_chart([week(label) for label in ("Sep 7", "Sep 14")])

    assert [tick.label for tick in chart.count_ticks] == ["0", "1", "2", "3", "4", "5"]
    assert [tick.label for tick in chart.rate_ticks] == ["0%", "50%", "100%"]
    assert all(bar.height == 0 for bar in chart.bars)
    assert chart.points == [] and chart.lines == []


# --- The page -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_program_page_draws_the_trend_with_its_numbers_for_screen_readers(client, coordinator):
    case(at(weeks_ago(2)), closed=at(weeks_ago(2, day=1)))
    case(at(weeks_ago(2)), closed=at(weeks_ago(1, day=2)), outcome="cancelled")
    client.force_login(coordinator)

    html = client.get(reverse("program")).content.decode()

    assert 'class="chart trend"' in html and 'aria-labelledby="trend-title trend-desc"' in html
    assert "Weeks of Sep 7 to Nov 23 (this week): 2 cases opened, 1 resolved, 1 cancelled" in html
    assert html.count('class="tr-bar tr-opened"') == 12
    assert "<title>Week of Nov 9: 2 opened</title>" in html
    assert '<circle class="tr-point"' in html
    cells = "<td>2</td><td>1</td><td>0</td><td>0</td><td>1 of 1</td><td>100%</td>"
    assert f'<th scope="row">Nov 9</th>{cells}' in html
    assert '<th scope="row">Nov 23 (this week)</th>' in html
