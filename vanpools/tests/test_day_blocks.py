"""Schedules as other tools keep them: a day list with one pair of times."""

import pytest

from vanpools.hr_text import read_day_blocks
from vanpools.importing import ImportFailed, import_data
from vanpools.models import Shift
from vanpools.schedules import ScheduleError, describe_weekly, parse_weekly

WEEKDAYS_7_TO_330 = "Mon–Fri 07:00–15:30"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"days": "Mon-Fri", "start": "07:00", "end": "15:30"}, WEEKDAYS_7_TO_330),
        (
            {"days": ["Mon", "Tue", "Wed", "Thu", "Fri"], "start": "7:00", "end": "15:30"},
            WEEKDAYS_7_TO_330,
        ),
        ({"Days": "M-F", "Start_Time": "7:00 AM", "End_Time": "3:30 PM"}, WEEKDAYS_7_TO_330),
        (
            {"days": "Sun-Thu", "start": "11pm", "end": "7:30am"},
            "Mon–Thu 23:00–07:30, Sun 23:00–07:30",
        ),
        (
            [
                {"days": "Mon,Wed,Fri", "start": "06:00", "end": "14:00"},
                {"days": "Sat", "start": "8am", "end": "noon"},
            ],
            "Mon 06:00–14:00, Wed 06:00–14:00, Fri 06:00–14:00, Sat 08:00–12:00",
        ),
    ],
    ids=["text-days", "list-days", "am-pm-and-key-case", "overnight", "two-blocks"],
)
def test_day_blocks_are_read_as_days_and_hours(block, expected):
    assert describe_weekly(read_day_blocks(block)) == expected


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"days": "Mon-Fri", "start": "07:00"}, 'expected {"days": "Mon-Fri"'),
        ({"days": "Mon-Fri", "start": "07:00", "end": "15:30", "break": "30"}, "expected"),
        ("Mon-Fri", "expected"),
        ([], "expected"),
        ({"days": "Mon-Fri", "start": "7", "end": "4"}, "hours without am/pm"),
    ],
    ids=["no-end", "unknown-key", "text", "empty", "ambiguous-hours"],
)
def test_a_block_that_cannot_be_read_says_the_shape_expected(block, message):
    with pytest.raises(ScheduleError, match=message.replace("{", r"\{")):
        read_day_blocks(block)


@pytest.mark.django_db
def test_a_shift_file_may_give_its_schedule_as_a_day_block():
    import_data(
        [
            {
                "shift_id": "DAY",
                "name": "Day",
                "schedule": {"days": "Mon-Fri", "start_time": "7:00 AM", "end_time": "3:30 PM"},
            }
        ]
    )
    assert describe_weekly(parse_weekly(Shift.objects.get().schedule)) == WEEKDAYS_7_TO_330


@pytest.mark.django_db
def test_a_day_block_error_names_the_row_and_column():
    with pytest.raises(ImportFailed) as failed:
        import_data(
            [{"shift_id": "DAY", "name": "Day", "schedule": {"days": "Mon-Fri", "begin": "7:00"}}]
        )
    assert str(failed.value.errors[0]).startswith("shifts[0], schedule: found {")
