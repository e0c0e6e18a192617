"""Reading the schedules HR writes in words: the unambiguous forms read, the rest refused."""

import pytest

from vanpools.hr_text import read_schedule_text
from vanpools.schedules import ScheduleError, describe_weekly


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Mon-Fri 07:00-15:30", "Mon–Fri 07:00–15:30"),
        ("7am-3:30pm weekdays", "Mon–Fri 07:00–15:30"),
        ("M-F 7am-3:30pm", "Mon–Fri 07:00–15:30"),
        ("Monday through Friday, 7:00 AM to 3:30 PM", "Mon–Fri 07:00–15:30"),
        ("Tues-Sat 0700-1530", "Tue–Sat 07:00–15:30"),
        ("M/W/F 6a-2:30p", "Mon 06:00–14:30, Wed 06:00–14:30, Fri 06:00–14:30"),
        ("Mon Wed Fri 7am-3pm", "Mon 07:00–15:00, Wed 07:00–15:00, Fri 07:00–15:00"),
        ("Day shift: Mon-Fri 9-5pm", "Mon–Fri 09:00–17:00"),
        ("4x10 Mon-Thu 6:00am-4:30pm", "Mon–Thu 06:00–16:30"),
        ("Weekends 6am-6:30pm", "Sat/Sun 06:00–18:30"),
        ("daily 6 a.m. - 2 p.m.", "Mon–Sun 06:00–14:00"),
        ("Mon-Fri 7:00-15:30; Sat 8am-noon", "Mon–Fri 07:00–15:30, Sat 08:00–12:00"),
        ("7a-330p M-F", "Mon–Fri 07:00–15:30"),
        ("Fri/Sat nights 10pm-6:30am", "Fri/Sat 22:00–06:30"),
        ("7 days a week 6am-2pm", "Mon–Sun 06:00–14:00"),
        ("Mo-Fr 07:00-15:30", "Mon–Fri 07:00–15:30"),
        ("MTWThF 7:00a-3:30p", "Mon–Fri 07:00–15:30"),
        ("MTWTF 7am-3pm", "Mon–Fri 07:00–15:00"),
        ("M T W R F 0700-1530", "Mon–Fri 07:00–15:30"),
        ("Mon–Fri, 07.00–15.30", "Mon–Fri 07:00–15:30"),
        ("Mon-Thu 06:00-16:30 (4x10)", "Mon–Thu 06:00–16:30"),
        ("12-hr nights Sun/Mon/Tue 1800-0630", "Mon/Tue 18:00–06:30, Sun 18:00–06:30"),
    ],
)
def test_it_reads_the_common_ways_hr_writes_a_week(text, read):
    assert describe_weekly(read_schedule_text(text)) == read


def test_a_night_shift_in_words_crosses_midnight():
    spans = read_schedule_text("Sun thru Thu 10pm-6:30am")
    assert [span.day for span in spans] == ["Mon", "Tue", "Wed", "Thu", "Sun"]
    assert (spans[0].start, spans[0].end, spans[0].crosses_midnight) == ("22:00", "06:30", True)


def test_an_unwritten_meridiem_takes_the_shorter_shift():
    assert read_schedule_text("10-6am Mon-Thu")[0].start == "22:00"
    assert read_schedule_text("Sat 8am-12")[0].end == "12:00"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("varies week to week, see supervisor", "one range of hours"),
        ("on call", "one range of hours"),
        ("2 weeks on, 2 weeks off", "one range of hours"),
        ("Mon-Fri 7-4", "without am/pm"),
        ("Mon-Fri 7:00-3:30", "20h30 shift is not plausible"),
        ("T-F 7am-3pm", "'t-f' is not a day"),
        ("MT 9am-1pm", "could be Tuesday or Thursday"),
        ("Mon-Thu 6-4:30 (4x10)", "without am/pm"),
        ("Mon-Fri 7am-3:30pm alt Fri off", "is not a day"),
        ("9/80 Mon-Fri 7am-4:30pm", "is not a day"),
        ("Mon-Fri 13pm-5pm", "13 is not an hour"),
        ("Mon, Mon-Fri 7am-3pm", "listed twice"),
        ("7am-3pm", "no days given"),
    ],
)
def test_it_refuses_what_it_would_have_to_guess(text, why):
    with pytest.raises(ScheduleError, match=why):
        read_schedule_text(text)
