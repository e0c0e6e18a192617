"""Reading the schedules HR writes in words: the unambiguous forms read, the rest refused."""

import pytest

from vanpools.hr_text import (
    AmbiguousHours,
    NoDaysGiven,
    NoHoursGiven,
    RotatingHours,
    part_of_day_named,
    read_schedule_readings,
    read_schedule_text,
    readings_for_part_of_day,
)
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
        ("0600 to 1430 hrs Mon thru Fri", "Mon–Fri 06:00–14:30"),
        ("Tu/Th 8-5 (am-pm)", "Tue 08:00–17:00, Thu 08:00–17:00"),
        ("Weekdays 7 AM – 3:30 PM PST", "Mon–Fri 07:00–15:30"),
        ("M,T,W,Th,F 0700-1530", "Mon–Fri 07:00–15:30"),
        ("Mon.–Fri. 7h00–15h30", "Mon–Fri 07:00–15:30"),
        ("days: 07:00→15:30 (Mon–Fri)", "Mon–Fri 07:00–15:30"),
        ("lunes a viernes de 7:00 a 15:30", "Mon–Fri 07:00–15:30"),
        ("lunes a viernes, turno de noche de 22:00 a 6:30", "Mon–Fri 22:00–06:30"),
        ("Montag bis Freitag 6:00–14:30 Uhr", "Mon–Fri 06:00–14:30"),
        ("Mon to Thu, 7:00 a.m. – 5:30 p.m. (4/10s, Fridays off)", "Mon–Thu 07:00–17:30"),
        ("07.00–15.30 Mon to Fri (half-hour lunch at 11)", "Mon–Fri 07:00–15:30"),
        ("Mon-Fri 7am-3:30pm, 30 min unpaid lunch", "Mon–Fri 07:00–15:30"),
        ("Weekdays – seven to three-thirty, a.m. to p.m.", "Mon–Fri 07:00–15:30"),
        ("Sat & Sun 7:00 a.m.–3:30 p.m. only", "Sat/Sun 07:00–15:30"),
        ("Sundays and Mondays 6am-2pm", "Mon 06:00–14:00, Sun 06:00–14:00"),
        ("Monday-Friday, 6:30-15:00", "Mon–Fri 06:30–15:00"),
        ("M-F 0700-1530 (30m L)", "Mon–Fri 07:00–15:30"),
        ("B-Shift 1400-2230 M-F", "Mon–Fri 14:00–22:30"),
        ("Tour 2: 0800x1630 M-F", "Mon–Fri 08:00–16:30"),
        ("D 0645-1915 Mon/Wed/Fri", "Mon 06:45–19:15, Wed 06:45–19:15, Fri 06:45–19:15"),
        ("Hybrid: in office Tue/Wed/Thu 8am-4:30pm, telework Mon/Fri", "Tue–Thu 08:00–16:30"),
        ("Weekdays 0730-1600 except 2nd Fri", "Mon–Fri 07:30–16:00"),
        ("Mon-Fri 7am-3:30pm alt Fri off", "Mon–Fri 07:00–15:30"),
        ("Weekdays 7am-3pm except Wednesdays", "Mon/Tue 07:00–15:00, Thu/Fri 07:00–15:00"),
        ("Mon-Fir 0700-1530", "Mon–Fri 07:00–15:30"),
        ("M-F 8am-4:30pm, telework Tue", "Mon 08:00–16:30, Wed–Fri 08:00–16:30"),
        ("M/W 0700-1730, F 0700-1130", "Mon 07:00–17:30, Wed 07:00–17:30, Fri 07:00–11:30"),
        ("Day (0600-1430) M-F", "Mon–Fri 06:00–14:30"),
        ("MON-FRI 0700 1530", "Mon–Fri 07:00–15:30"),
        ("days M-F 0630-1500 / storm duty as needed", "Mon–Fri 06:30–15:00"),
        ("1st shft M-F 6a-2:30p", "Mon–Fri 06:00–14:30"),
        ("Weekend crew: Fri/Sat/Sun 12-hr 7a-7p", "Fri–Sun 07:00–19:00"),
        ("PT – 24 hrs/wk: Tue, Wed, Thu 8:00am-4:30pm", "Tue–Thu 08:00–16:30"),
        ("Straight run Mon–Fri 0515–1345", "Mon–Fri 05:15–13:45"),
        ("Fall pick 2026: Blk 4417, Sa–We, 0545–1415", "Mon–Wed 05:45–14:15, Sat/Sun 05:45–14:15"),
        ("Mon, Tue, Wed, Thu 05:30-16:00; Fri/Sat/Sun off", "Mon–Thu 05:30–16:00"),
        ("Mon–Fri 0600hrs–1430hrs", "Mon–Fri 06:00–14:30"),
        ("LOA (medical) thru 12/11/26. Regular: M-F 0600-1430.", "Mon–Fri 06:00–14:30"),
        ("Days off Tue & Wed. Run 112: 0600-1430", "Mon 06:00–14:30, Thu–Sun 06:00–14:30"),
        ("RDOs Sat/Sun, 6:00-14:30", "Mon–Fri 06:00–14:30"),
        ("Garage – owl shift 2230-0700 Sun–Thu", "Mon–Thu 22:30–07:00, Sun 22:30–07:00"),
        ("Mnday-Friday 6am-2.30pm", "Mon–Fri 06:00–14:30"),
        ("weekdays, 6 in the morning till 2:30 in the afternoon", "Mon–Fri 06:00–14:30"),
        ("Sat & Sun 0700-1900 + Mon 0700-1500", "Mon 07:00–15:00, Sat/Sun 07:00–19:00"),
        ("L-V 7am-3:30pm", "Mon–Fri 07:00–15:30"),
        ("Lunes-viernes 07:00-15:30 (turno de día)", "Mon–Fri 07:00–15:30"),
        ("Lunes a viernes de 7:00 a.m. a 3:30 p.m. (Servicios Ambientales)", "Mon–Fri 07:00–15:30"),
        ("Segundo turno, de 2:30 p.m. a 11:00 p.m., lunes a viernes", "Mon–Fri 14:30–23:00"),
        ("Semana de 4 días (4x10): lunes a jueves, 07:00–17:30", "Mon–Thu 07:00–17:30"),
        ("Weekend Option (Baylor) – Sat & Sun 0700-1900, paid 36", "Sat/Sun 07:00–19:00"),
        ("WKND OPT NOC Fri/Sat/Sun 7p-7a", "Fri–Sun 19:00–07:00"),
        ("1ST SHFT 0600-1430 M-F, Dept 420 Stamping", "Mon–Fri 06:00–14:30"),
        (
            "3rd shift 11:00p-7:30a Sun-Thu (moved from 2nd eff 11/2)",
            "Mon–Thu 23:00–07:30, Sun 23:00–07:30",
        ),
        ("2nd shift 3:00pm-11:30pm M-F (OT Sat 7a-3p when posted)", "Mon–Fri 15:00–23:30"),
        ("Days M-F 7:00a-3:30p (8.5 w/ 30 unpaid)", "Mon–Fri 07:00–15:30"),
        (
            "Flex schedule (core hrs 9-3). Actual: 8:00 a.m.–4:30 p.m., Monday–Friday",
            "Mon–Fri 08:00–16:30",
        ),
        ("Mon-Fri 8:00am - 5:00pm; TW Fridays", "Mon–Thu 08:00–17:00"),
        (
            "Hybrid: in office Tue & Thu 8a-5p, telework M/W/F (8a-5p)",
            "Tue 08:00–17:00, Thu 08:00–17:00",
        ),
        (
            "Work Schedule: Mon-Fri | 08:00 AM - 05:00 PM | Pacific Time | 40 Hours",
            "Mon–Fri 08:00–17:00",
        ),
        ("Pattern: 1ST-0600-1430-MTWRF", "Mon–Fri 06:00–14:30"),
        ("06:00-14:30 M-F (fixed 1st)", "Mon–Fri 06:00–14:30"),
        (
            "She works 6:45am to 3:15pm mon-fri, sometimes stays late at month end",
            "Mon–Fri 06:45–15:15",
        ),
        ("Surg Tech – M-F 0630-1500 + call 1 wknd/mo (from home)", "Mon–Fri 06:30–15:00"),
        ("OR RN – 10s, 0630-1700, Mon/Tue/Thu/Fri", "Mon/Tue 06:30–17:00, Thu/Fri 06:30–17:00"),
        (
            "9/80 – 0730-1700 M-Th, 0730-1600 on working Fri, RDO alt Fri",
            "Mon–Thu 07:30–17:00, Fri 07:30–16:00",
        ),
        (
            "9/80 schedule: 7:30 AM to 5:00 PM Mon–Thu; 7:30 AM–4:00 PM every other Friday "
            "(off the other Fridays)",
            "Mon–Thu 07:30–17:00, Fri 07:30–16:00",
        ),
        ("GY 10pm–6am (Sun–Thu)", "Mon–Thu 22:00–06:00, Sun 22:00–06:00"),
        ("Days 6:00 AM - 2:00 PM | Off: Wed, Thu", "Mon/Tue 06:00–14:00, Fri–Sun 06:00–14:00"),
        ("Cage Cashier — 5:45a to 2:15p, 5 days/wk, off Sun & Mon", "Tue–Sat 05:45–14:15"),
        ("Poker dealer - Grave - 10p-6a - RDOs Sat/Sun", "Mon–Fri 22:00–06:00"),
        ("Swng 2pm - 10pm Thrus-Mon", "Mon 14:00–22:00, Thu–Sun 14:00–22:00"),
        ("Lavandería: martes a sábado, 3:00 p.m. a 11:30 p.m.", "Tue–Sat 15:00–23:30"),
        ("Shift code N1 | 22:00–06:30 | Su M Tu W Th", "Mon–Thu 22:00–06:30, Sun 22:00–06:30"),
        ("Selector 4x10 M-TH 1:00PM-11:30PM", "Mon–Thu 13:00–23:30"),
        ("Weekend crew: F/S/Su 6am-6:30pm (3x12.5)", "Fri–Sun 06:00–18:30"),
        ("Fri through Sun, six in the morning to six-thirty at night", "Fri–Sun 06:00–18:30"),
        ("Onsite Tu-W-Th 0800-1630", "Tue–Thu 08:00–16:30"),
        ("Técnico de laboratorio: L-V 6:30 a 15:00 h", "Mon–Fri 06:30–15:00"),
        ("Mon-Fri early shfit 0630-1500, badge in @ Bldg 4", "Mon–Fri 06:30–15:00"),
        ("Power shift 1100-2100 (4x10) Wed-Sat", "Wed–Sat 11:00–21:00"),
        ("Call-taker (PT): Sat+Sun 0600-1800", "Sat/Sun 06:00–18:00"),
        ("Hybrid — on-site T/Th 10am-6:30pm", "Tue 10:00–18:30, Thu 10:00–18:30"),
        ("M–Th 0715–1645; alt F 0715–1545", "Mon–Thu 07:15–16:45, Fri 07:15–15:45"),
        ("Quart de jour : du lundi au vendredi, de 7 h 30 à 16 h", "Mon–Fri 07:30–16:00"),
        ("lun.–ven. 8 h–16 h 30", "Mon–Fri 08:00–16:30"),
        (
            "Dayforce | Pay Group: OPS-HRLY | Schedule: Tu We Th Fr Sa 06:00 - 14:30 | "
            "Rotation: none",
            "Tue–Sat 06:00–14:30",
        ),
        (
            "UKG Pro | Schedule Pattern: HYB-3 | Onsite: Tue/Wed/Thu 8:00 AM–5:00 PM CT | "
            "Remote: Mon, Fri",
            "Tue–Thu 08:00–17:00",
        ),
        (
            "ADP WFN | Sched Grp: 980A | Mon-Thu 07:00AM-04:30PM | Fri(wk1) 07:00AM-03:30PM | "
            "Fri(wk2) RDO",
            "Mon–Thu 07:00–16:30, Fri 07:00–15:30",
        ),
        (
            "Work Schedule: BNK-EARLY-5X8 ; Shift Pattern: 05:30-14:00 (Mon,Tue,Wed,Thu,Fri) ; "
            "Assignment Status: Active - Payroll Eligible",
            "Mon–Fri 05:30–14:00",
        ),
        (
            "Turno partido: de 7:00 a 11:00 y de 17:00 a 21:00, todos los días excepto jueves",
            "Mon–Wed 07:00–21:00, Fri–Sun 07:00–21:00",
        ),
        ("FH Days 06:00-18:00 S/M/T/W(alt)", "Mon–Wed 06:00–18:00, Sun 06:00–18:00"),
        (
            "Work Schedule Calendar: FAB 3/4 DAYS 12.0 | Week 1: Mon, Tue, Wed | "
            "Week 2: Mon, Tue, Wed, Thu | 06:30 AM - 06:30 PM",
            "Mon–Thu 06:30–18:30",
        ),
    ],
)
def test_it_reads_the_common_ways_hr_writes_a_week(text, read):
    assert describe_weekly(read_schedule_text(text)) == read


def test_a_night_shift_in_words_crosses_midnight():
    spans = read_schedule_text("Sun thru Thu 10pm-6:30am")
    assert [span.day for span in spans] == ["Mon", "Tue", "Wed", "Thu", "Sun"]
    assert (spans[0].start, spans[0].end, spans[0].crosses_midnight) == ("22:00", "06:30", True)


def test_hours_without_am_pm_keep_every_plausible_reading():
    with pytest.raises(AmbiguousHours) as raised:
        read_schedule_text("9 to 5, Monday to Friday")
    readings = [describe_weekly(reading) for reading in raised.value.readings]
    assert readings == ["Mon–Fri 09:00–17:00", "Mon–Fri 21:00–05:00"]
    assert len(read_schedule_readings("Mon-Fri 7-15:30")) == 1  # 19:00-15:30 is not a shift


def test_each_part_keeps_its_own_readings():
    readings = read_schedule_readings("Mon thru Thurs 6:30 to 5, Fri 6:30 to 10:30")
    assert len(readings) == 8  # 2 readings of Mon-Thu × 4 of Friday
    assert "Mon–Thu 06:30–17:00, Fri 06:30–10:30" in [describe_weekly(r) for r in readings]


def test_hours_without_days_keep_the_hours_for_the_check():
    with pytest.raises(NoDaysGiven) as raised:
        read_schedule_text("Tour 2: 0800x1630")
    assert raised.value.hours == [("08:00", "16:30")]


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("Mon, Wed & Fri", ["Mon", "Wed", "Fri"]),
        ("TTh only", ["Tue", "Thu"]),
        ("Tue thru Thu", ["Tue", "Wed", "Thu"]),
        ("weekdays, hours vary", ["Mon", "Tue", "Wed", "Thu", "Fri"]),
        ("Mon-Fri; Wed off", ["Mon", "Tue", "Thu", "Fri"]),
    ],
)
def test_days_without_hours_keep_the_days_for_a_check_that_counts_workdays(text, days):
    with pytest.raises(NoHoursGiven) as raised:
        read_schedule_text(text)
    assert raised.value.days == days
    assert "no hours" in str(raised.value)


@pytest.mark.parametrize("text", ["varies by the week", "see your lead", "M/T/F"])
def test_words_that_are_not_days_or_a_lone_letter_with_no_hours_are_still_refused(text):
    with pytest.raises(ValueError) as raised:
        read_schedule_text(text)
    assert not isinstance(raised.value, NoHoursGiven)


@pytest.mark.parametrize("text", ["Rotating 12s (D) 0600-1830", "Rotating 12s (N) 1800-0630"])
def test_a_rotation_with_no_days_named_leaves_every_day_to_the_check(text):
    with pytest.raises(NoDaysGiven):
        read_schedule_text(text)


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Wknd 12s (D) Sat/Sun 0600-1830", "Sat/Sun 06:00–18:30"),
        ("Sat-Sun 7a-3:30p (weekend only)", "Sat/Sun 07:00–15:30"),
        ("M,T,W,Th,F 0700/1530", "Mon–Fri 07:00–15:30"),
        ("Mon/Wed/Fri 7-3:30 am-pm", "Mon 07:00–15:30, Wed 07:00–15:30, Fri 07:00–15:30"),
        ("Mon thru Fri 0645-1515 (Garage 2)", "Mon–Fri 06:45–15:15"),
        ("Tue-Fri 1:45p-10:15p (4 days)", "Tue–Fri 13:45–22:15"),
        ("Sat/Sun 0700-1530 (weekend relief)", "Sat/Sun 07:00–15:30"),
        ("M-F 0800-1630 w/ 30 min unpaid lunch", "Mon–Fri 08:00–16:30"),
        ("1st shift M-F 6a-2:30p. Sat OT 6a-12p as posted", "Mon–Fri 06:00–14:30"),
        ("Weekend nights Fri & Sat 2230-0700", "Fri/Sat 22:30–07:00"),
    ],
)
def test_a_weekend_word_beside_the_weekend_days_and_a_slash_between_times_are_read(text, read):
    assert describe_weekly(read_schedule_text(text)) == read


def test_a_weekend_word_beside_weekdays_contradicts_them():
    with pytest.raises(ScheduleError, match="is not a day"):
        read_schedule_text("M-F 0600-1430 (wknds only)")


@pytest.mark.parametrize(
    "text",
    [
        "Split run: on 0515-0915 / 1445-1845, Mon-Fri",
        "Split 5:15-9:15 & 2:45-6:45 M-F",  # each piece's am/pm settled by the other
        "M-F 5:15a–6:45p (split, paid spread)",
    ],
)
def test_a_split_shift_runs_from_the_first_start_to_the_last_end(text):
    assert describe_weekly(read_schedule_text(text)) == "Mon–Fri 05:15–18:45"


def test_each_piece_of_a_split_shift_keeps_its_own_meridiem():
    # Joined as text, "7-8p" would read 19:00-20:00; the pieces say 7am and 8pm.
    assert describe_weekly(read_schedule_text("Split: 7-11a & 4-8p, Mon-Fri")) == (
        "Mon–Fri 07:00–20:00"
    )


@pytest.mark.parametrize(
    "text",
    ["Valet 7a-3p", "3p-11p / 5 on 2 off", "Security Officer – 0600-1400 – 4on/4off rotation"],
)
def test_a_job_title_or_days_on_and_off_leave_only_the_hours(text):
    with pytest.raises(NoDaysGiven):
        read_schedule_text(text)


def test_a_crew_pattern_name_leaves_the_days_to_the_check():
    with pytest.raises(NoDaysGiven) as raised:
        read_schedule_text("C crew, 12s, 6a-6p, Pitman sched (day side)")
    assert raised.value.hours == [("06:00", "18:00")]


def test_an_unwritten_meridiem_takes_the_shorter_shift():
    assert read_schedule_text("10-6am Mon-Thu")[0].start == "22:00"
    assert read_schedule_text("Sat 8am-12")[0].end == "12:00"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("varies week to week, see supervisor", "one range of hours"),
        ("on call", "one range of hours"),
        ("2 weeks on, 2 weeks off", "one range of hours"),
        ("Mon-Fri 7-4", "without am/pm read as Mon–Fri 07:00–16:00 or Mon–Fri 19:00–04:00"),
        ("Mon-Fri 7:00-3:30", "without am/pm"),
        ("Mon-Fri 10:00-8:00", "without am/pm"),
        ("Mon-Fri 07:00-03:30", "20h30 shift is not plausible"),
        ("Mon-Fri 7am-3pm MT", "'mon-fri mt' is not a day"),
        ("T-F 7am-3pm", "'t-f' is not a day"),
        ("MT 9am-1pm", "could be Tuesday or Thursday"),
        ("Mon-Thu 6-4:30 (4x10)", "without am/pm"),
        ("9/80 Mon-Fri 7am-4:30pm", "is not a day"),
        ("Mon-Fri 13pm-5pm", "13 is not an hour"),
        ("Mon, Mon-Fri 7am-3pm", "listed twice"),
        ("7am-3pm", "no days given"),
        ("Fri 7am-3pm, Fridays off", "every day named is off"),
        ("Weekdays 7am-3pm except holidays", "is not a day"),
        ("rotating days/nights 7am-7pm", "is not a day"),  # a rotation name hides the nights
        ("Split 0900-1000 & 0930-1700 M-F", "do not fit one day"),
        ("Flex band 6:00am-6:00pm; 8 hrs/day, start time varies day to day", "is not a day"),
        ("Wk1: M-F 0600-1430 | Wk2: M-F 1430-2300 (alternating weekly)", "one range of hours"),
        ("M-F 8:00 AM –", "one range of hours"),
        ("9/80, alternate Fridays off, 6:30am-4pm", "is not a day"),  # Friday's hours unsaid
        ("Flex hrs, core 1000-1400 M-F", "is not a day"),  # core hours are not the shift
        ("Most weekdays 7am-3pm", "is not a day"),  # a job title is skipped, a qualifier is not
        ("M/S/W 7am-3pm", "could be Saturday or Sunday"),
    ],
)
def test_it_refuses_what_it_would_have_to_guess(text, why):
    with pytest.raises(ScheduleError, match=why):
        read_schedule_text(text)


# --- A shift's name settles am/pm; a lone day letter; rotations between two sets of hours ---


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("Warehouse days", "day"),
        ("Care Team Days", "day"),
        ("1st Shift", "day"),
        ("Tier 1 Early", "day"),
        ("Swing", "evening"),
        ("2nd shift", "evening"),
        ("3rd Shift", "night"),
        ("Graveyard", "night"),
        ("Evening Queue?", None),  # a name that doubts itself says nothing
        ("Days/Nights", None),  # two parts of the day
        ("Rotating D/N", None),
        ("Plant", None),
        ("", None),
    ],
)
def test_a_shift_name_says_which_part_of_the_day_it_works(name, part):
    assert part_of_day_named(name) == part


def test_a_shift_named_for_the_day_keeps_the_morning_reading_of_hours_without_am_pm():
    readings = read_schedule_readings("M-F 6-2:30")
    kept = readings_for_part_of_day(readings, "Warehouse days")
    assert [describe_weekly(reading) for reading in kept] == ["Mon–Fri 06:00–14:30"]
    night = readings_for_part_of_day(read_schedule_readings("Sun-Thu 10-6:30"), "Nights")
    assert [describe_weekly(reading) for reading in night] == [
        "Mon–Thu 22:00–06:30, Sun 22:00–06:30"
    ]
    # A name that says nothing keeps both; so does a name no reading fits.
    assert len(readings_for_part_of_day(readings, "Operator")) == 2
    assert len(readings_for_part_of_day(read_schedule_readings("Mon-Fri 2-10:30"), "Days")) == 2
    # In the text, only a shift named as such counts ("7 days" counts days).
    assert len(readings_for_part_of_day(readings, "", "Day shift M-F 6-2:30")) == 1
    assert len(readings_for_part_of_day(readings, "", "7 days 6-2:30")) == 2


def test_a_lone_t_between_other_letters_is_read_both_ways():
    with pytest.raises(AmbiguousHours, match="could be Tuesday or Thursday") as raised:
        read_schedule_text("Lab 12s 0700-1930 M/T/F")
    assert [describe_weekly(reading) for reading in raised.value.readings] == [
        "Mon/Tue 07:00–19:30, Fri 07:00–19:30",
        "Mon 07:00–19:30, Thu/Fri 07:00–19:30",
    ]


@pytest.mark.parametrize(
    ("text", "legs"),
    [
        ("D/N rotation 0645-1915 / 1845-0715", [[("06:45", "19:15")], [("18:45", "07:15")]]),
        ("Crew A – 12s rotating D/N (DuPont), 0600-1800 / 1800-0600", None),
        ("D crew 12hr - rotates 2 wks days (0600-1800) then 2 wks nights (1800-0600)", None),
        (
            "DuPont rotation, Crew B. Days 0600-1800 / Nights 1800-0600 "
            "(4N-3off-3D-1off-3N-3off-4D-7off)",
            None,
        ),
        ("Rotation jour/nuit 12 h : jour 6 h à 18 h, nuit 18 h à 6 h (équipe D)", None),
    ],
)
def test_a_rotation_between_two_sets_of_hours_keeps_each_leg(text, legs):
    with pytest.raises(RotatingHours, match="one range of hours") as raised:
        read_schedule_text(text)
    read = [leg.hours for leg in raised.value.legs]
    assert len(read) == 2 and all(leg.readings == [] for leg in raised.value.legs)
    assert read == (legs or [[("06:00", "18:00")], [("18:00", "06:00")]])


def test_a_week_by_week_rotation_keeps_each_weeks_days_and_hours():
    with pytest.raises(RotatingHours) as raised:
        read_schedule_text("Wk1: M-F 0600-1430 | Wk2: M-F 1430-2300 (alternating weekly)")
    legs = [[describe_weekly(r) for r in leg.readings] for leg in raised.value.legs]
    assert legs == [["Mon–Fri 06:00–14:30"], ["Mon–Fri 14:30–23:00"]]


@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("7 on/7 off 0700-1930 (on: Wed 11/25 - Tue 12/1)", [("07:00", "19:30")]),
        (
            "7 on/7 off nights 1900-0730, current on-block Mon 11/23 - Sun 11/29",
            [("19:00", "07:30")],
        ),
    ],
)
def test_the_dated_block_of_a_days_on_days_off_rotation_names_no_weekly_days(text, hours):
    with pytest.raises(NoDaysGiven) as raised:
        read_schedule_text(text)
    assert raised.value.hours == hours


def test_dated_days_outside_a_days_on_days_off_rotation_are_still_refused():
    with pytest.raises(ScheduleError):
        read_schedule_text("0700-1930 (on: Wed 11/25 - Tue 12/1)")


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Back half days; 7a-7p; W(alt) Th F Sa", "Wed–Sat 07:00–19:00"),
        ("Mon-Fri; 7am-3pm", "Mon–Fri 07:00–15:00"),
        (
            "WSR: M-F_0700-1530 | Daily WH 8.00 | Unpaid brk 30 | Emp Subgrp: MAINT",
            "Mon–Fri 07:00–15:30",
        ),
    ],
)
def test_hours_and_days_in_separate_fields_are_one_week(text, read):
    assert describe_weekly(read_schedule_text(text)) == read


def test_a_days_field_beside_a_part_with_its_own_days_is_not_joined():
    # "Fri" has no hours of its own, and the first part already names its days.
    with pytest.raises(ScheduleError):
        read_schedule_text("Mon-Thu 7a-5p; Fri")


@pytest.mark.parametrize(
    ("text", "read"),
    [
        # Before, "RDOs Sat and Sun" was left whole and read as the days worked.
        ("RDOs Sat and Sun, 6:00-14:30", "Mon–Fri 06:00–14:30"),
        ("M-F 7am-3pm, telework Mon and Fri", "Tue–Thu 07:00–15:00"),
        (
            "Turno de mañana: 6:00 a.m. a 2:30 p.m., de miércoles a domingo. "
            "Descanso lunes y martes.",
            "Wed–Sun 06:00–14:30",
        ),
    ],
)
def test_days_off_joined_by_and_y_or_et_are_all_off(text, read):
    assert describe_weekly(read_schedule_text(text)) == read
