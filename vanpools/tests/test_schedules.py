import datetime as dt

import pytest
from django.core.exceptions import ValidationError

from tests.factories import ShiftFactory, VanpoolFactory
from vanpools.schedules import ScheduleError, describe_weekly, parse_rotation, parse_weekly


def test_it_sorts_weekly_days_into_week_order():
    spans = parse_weekly(
        [
            {"day": "Wed", "start": "07:00", "end": "16:00"},
            {"day": "Mon", "start": "07:00", "end": "16:00"},
        ]
    )
    assert [span.day for span in spans] == ["Mon", "Wed"]


def test_it_knows_a_shift_that_crosses_midnight():
    (span,) = parse_weekly([{"day": "Sun", "start": "22:00", "end": "06:30"}])
    assert span.crosses_midnight
    assert span.end_time == dt.time(6, 30)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([{"day": "Funday", "start": "07:00", "end": "16:00"}], "0.day"),
        ([{"day": "Mon", "start": "7am", "end": "16:00"}], "0.start"),
        ([{"day": "Mon", "start": "24:00", "end": "16:00"}], "0.start"),
        ([{"day": "Mon", "start": "07:00", "end": "07:00"}], "start and end are the same time"),
        ([{"day": "Mon", "start": "07:00"}], "0.end: Field required"),
        ([{"day": "Mon", "start": "07:00", "end": "16:00", "lunch": "12:00"}], "0.lunch"),
        (
            [{"day": "Mon", "start": "07:00", "end": "16:00"}] * 2,
            "day listed twice: Mon",
        ),
        ("Mon-Fri 7-4", "Input should be a valid list"),
    ],
)
def test_it_says_where_a_weekly_schedule_is_wrong(data, message):
    with pytest.raises(ScheduleError, match=message):
        parse_weekly(data)


def test_it_finds_the_day_of_a_rotation():
    rotation = parse_rotation(
        {
            "cycle_start": "2026-11-02",
            "days": [{"start": "06:00", "end": "18:00"}] * 4 + [None] * 4,
        }
    )
    assert rotation.span_on(dt.date(2026, 11, 5)) is not None  # day 4 of the cycle
    assert rotation.span_on(dt.date(2026, 11, 6)) is None  # first day off
    assert rotation.span_on(dt.date(2026, 11, 10)) is not None  # next cycle
    assert rotation.span_on(dt.date(2026, 10, 31)) is None  # before the anchor, still cyclic


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"cycle_start": "2026-11-02", "days": [None, None]}, "at least one working day"),
        ({"cycle_start": "2026-11-02", "days": [{"start": "06:00", "end": "18:00"}]}, "at least 2"),
        ({"cycle_start": "someday", "days": [None, None]}, "cycle_start"),
    ],
)
def test_it_says_what_is_wrong_with_a_rotation(data, message):
    with pytest.raises(ScheduleError, match=message):
        parse_rotation(data)


def test_it_describes_a_week_in_words():
    spans = parse_weekly(
        [{"day": d, "start": "07:00", "end": "16:00"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")]
        + [{"day": "Sat", "start": "08:00", "end": "12:00"}]
    )
    assert describe_weekly(spans) == "Mon–Fri 07:00–16:00, Sat 08:00–12:00"


@pytest.mark.django_db
def test_it_asks_for_the_overnight_flag_on_a_shift_that_crosses_midnight():
    shift = ShiftFactory.build(schedule=[{"day": "Sun", "start": "22:00", "end": "06:30"}])
    with pytest.raises(ValidationError) as excinfo:
        shift.full_clean()
    assert "overnight" in excinfo.value.message_dict


@pytest.mark.django_db
def test_it_accepts_a_free_text_schedule_for_the_audit_to_judge():
    shift = ShiftFactory.build(schedule=[], schedule_text="varies week to week, see supervisor")
    shift.full_clean()
    assert shift.summary == "“varies week to week, see supervisor”"


@pytest.mark.django_db
def test_it_refuses_a_shift_with_no_schedule_at_all():
    with pytest.raises(ValidationError, match="Give weekly days"):
        ShiftFactory.build(schedule=[]).full_clean()


@pytest.mark.django_db
def test_it_validates_a_vanpool_operating_schedule():
    vanpool = VanpoolFactory.build(schedule=[{"day": "Mon", "start": "25:00", "end": "16:00"}])
    with pytest.raises(ValidationError) as excinfo:
        vanpool.full_clean()
    assert "schedule" in excinfo.value.message_dict


def test_start_time_and_end_time_are_read_as_start_and_end_and_stored_as_such():
    spans = parse_weekly([{"day": "Mon", "start_time": "07:00", "end_time": "15:30"}])
    assert [span.model_dump() for span in spans] == [
        {"start": "07:00", "end": "15:30", "day": "Mon"}
    ]
