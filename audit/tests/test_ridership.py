"""check_ridership: days aboard against the rider's counted workdays (docs/audit.md)."""

import datetime as dt

import pytest

from agents.contracts import NoDataEvidence, RidershipEvidence, UnknownEvidence
from audit.facts import LeaveSpan, RiderFacts, ShiftFacts, VanpoolFacts
from audit.ride_facts import CoverageSpan, RideMark, RiderRides, SwipeFacts, VanRides
from audit.ridership import RidershipRules, check_ridership, required_days
from audit.shift.readings import Unreadable, read_shift

AUDIT = dt.date(2026, 11, 23)  # the window is Mon 26 Oct – Sun 22 Nov: 20 weekdays
START, END = dt.date(2026, 10, 26), dt.date(2026, 11, 22)
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
RULES = RidershipRules(
    window_days=28, min_days_per_week=3, min_share=None, min_workdays=5, swipe_window_minutes=30
)


def weekly(days: tuple[str, ...], start: str, end: str) -> list[dict[str, str]]:
    return [{"day": day, "start": start, "end": end} for day in days]


VAN = weekly(WEEKDAYS, "06:45", "15:30")
DAY = ShiftFacts(shift_id="DAY", name="Day", schedule=weekly(WEEKDAYS, "07:00", "15:30"))
TRIPS = CoverageSpan("trips", START, END)


def window_days(*days: str) -> list[dt.date]:
    dates = [START + dt.timedelta(days=n) for n in range(28)]
    names = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    return [d for d in dates if names[d.weekday()] in days]


WORKDAYS = window_days(*WEEKDAYS)


def rider(
    employee_id: str = "E1",
    aboard: list[dt.date] = (),  # type: ignore[assignment]
    shift: ShiftFacts | None = DAY,
    **fields: object,
) -> RiderFacts:
    rides = fields.pop("rides", None) or RiderRides(
        joined=fields.pop("joined", None),  # type: ignore[arg-type]
        ride_days=tuple(RideMark(day, "trip", f"T-{day}") for day in aboard),
    )
    return RiderFacts(employee_id=employee_id, home_zip="94587", shift=shift, rides=rides, **fields)  # type: ignore[arg-type]


def van(*riders: RiderFacts, schedule=VAN, coverage=(TRIPS,), holidays=()) -> VanpoolFacts:
    return VanpoolFacts(
        vanpool_id="VP-201",
        work_site="Harbor DC",
        schedule=schedule,
        riders=riders,
        rides=VanRides(holidays=holidays, coverage=coverage),
    )


def verdicts(facts: VanpoolFacts, rules: RidershipRules = RULES) -> dict[str, str]:
    return check_ridership(facts, AUDIT, rules).rider_verdicts()


def summary(facts: VanpoolFacts, employee_id: str = "E1") -> RidershipEvidence:
    result = check_ridership(facts, AUDIT, RULES)
    (item,) = [
        e
        for e in result.evidence
        if isinstance(e, RidershipEvidence) and e.employee_id == employee_id
    ]
    return item


def test_it_passes_a_rider_aboard_on_exactly_the_required_days_and_fails_one_fewer():
    facts = van(rider("E1", WORKDAYS[:12]), rider("E2", WORKDAYS[:11]))
    assert verdicts(facts) == {"E1": "pass", "E2": "fail"}
    item = summary(facts, "E2")
    assert (item.scheduled, item.counted, item.covered, item.aboard, item.required) == (
        20,
        20,
        20,
        11,
        12,
    )


def test_holidays_and_pto_are_excused_and_rides_on_them_do_not_count():
    pto = (LeaveSpan(dt.date(2026, 11, 16), dt.date(2026, 11, 18)),)
    counted = [d for d in WORKDAYS if d not in (dt.date(2026, 11, 11),) and not pto[0].covers(d)]
    on_pto = [dt.date(2026, 11, 16), dt.date(2026, 11, 17), dt.date(2026, 11, 18)]
    facts = van(
        rider("E1", counted[:10], leave=pto),
        rider("E2", counted[:9] + on_pto, leave=pto),
        holidays=((dt.date(2026, 11, 11), "Veterans Day"),),
    )
    assert verdicts(facts) == {"E1": "pass", "E2": "fail"}
    item = summary(facts, "E2")
    assert (item.counted, item.required, item.aboard) == (16, 10, 9)
    assert item.calendar["2026-11-11"] == "holiday"
    assert item.calendar["2026-11-16"] == "leave"


def test_a_rider_who_joined_mid_window_is_judged_on_the_days_since():
    joined = dt.date(2026, 11, 9)
    since = [d for d in WORKDAYS if d >= joined]
    facts = van(rider("E1", since[:6], joined=joined), rider("E2", since[:5], joined=joined))
    assert verdicts(facts) == {"E1": "pass", "E2": "fail"}
    assert summary(facts).calendar["2026-10-26"] == "before_joined"


@pytest.mark.parametrize(
    ("joined", "excused"),
    [
        (None, []),
        (dt.date(2026, 1, 5), []),  # long before the window
        (WORKDAYS[0], []),  # on the first workday: that day counts
        (WORKDAYS[0] + dt.timedelta(days=1), [WORKDAYS[0]]),  # a day later: it does not
    ],
)
def test_a_seat_held_all_window_excuses_no_day_and_a_later_start_excuses_the_days_before(
    joined, excused
):
    item = summary(van(rider("E1", WORKDAYS, joined=joined)))
    assert item.counted == len(WORKDAYS) - len(excused)
    assert [day for day, mark in item.calendar.items() if mark == "before_joined"] == [
        day.isoformat() for day in excused
    ]
    assert set(item.calendar.values()) <= {"aboard", "before_joined"}


def test_fewer_than_the_minimum_workdays_pass_even_without_data():
    facts = van(rider("E1", joined=dt.date(2026, 11, 19)), coverage=())
    result = check_ridership(facts, AUDIT, RULES)
    assert (result.verdict, result.confidence) == ("pass", 3)


def test_a_rider_on_leave_through_the_window_passes():
    facts = van(rider("E1", status="on_leave"), coverage=())
    assert verdicts(facts) == {"E1": "pass"}


def test_days_a_week_scale_to_the_riders_own_week():
    four = ShiftFacts(shift_id="4X10", name="4x10", schedule=weekly(WEEKDAYS[:4], "06:00", "16:30"))
    mon_to_thu = window_days(*WEEKDAYS[:4])
    facts = van(rider("E1", mon_to_thu[:11], four), rider("E2", mon_to_thu[:12], four))
    assert verdicts(facts) == {"E1": "fail", "E2": "pass"}
    assert summary(facts).rule == "3 days a week of the rider's 4"


def test_a_share_replaces_days_a_week_when_set():
    rules = RidershipRules(28, 3, 0.8, 5, 30)
    facts = van(rider("E1", WORKDAYS[:15]), rider("E2", WORKDAYS[:16]))
    assert verdicts(facts, rules) == {"E1": "fail", "E2": "pass"}


@pytest.mark.parametrize(
    ("share", "covered", "required"),
    [(0.6, 20, 12), (0.6, 16, 10), (0.75, 19, 15), (0.8, 5, 4), (1.0, 7, 7)],
)
def test_required_days_are_the_exact_ceiling_of_the_share(share, covered, required):
    assert required_days(RidershipRules(28, 3, share, 5, 30), 20, covered)[0] == required


def test_a_rider_scheduled_fewer_days_than_the_rule_must_ride_all_of_them():
    rules = RidershipRules(28, 3, None, 5, 30)
    assert required_days(rules, 8, 8) == (8, "every workday: 3 a week, the rider works 2")


def test_only_the_days_the_data_covers_are_counted():
    late = CoverageSpan("trips", dt.date(2026, 11, 9), END)
    since = [d for d in WORKDAYS if d >= dt.date(2026, 11, 9)]
    facts = van(rider("E1", since[:6]), rider("E2", since[:5]), coverage=(late,))
    assert verdicts(facts) == {"E1": "pass", "E2": "fail"}
    assert summary(facts).calendar["2026-10-26"] == "not_covered"


def test_no_data_is_unknown_and_said_to_be_a_gap():
    result = check_ridership(van(rider("E1"), coverage=()), AUDIT, RULES)
    assert result.verdict == "unknown"
    (gap,) = result.evidence
    assert isinstance(gap, NoDataEvidence)
    assert "no trip data for VP-201" in result.riders[0].reason


def test_data_covering_too_few_workdays_is_unknown():
    few = CoverageSpan("trips", dt.date(2026, 11, 18), END)
    assert verdicts(van(rider("E1", WORKDAYS[-3:]), coverage=(few,))) == {"E1": "unknown"}


def test_a_swipe_within_the_window_of_the_vans_arrival_is_a_ride():
    def swiper(employee_id: str, at: str, **fields: str) -> RiderFacts:
        swipes = tuple(
            SwipeFacts(dt.datetime.combine(d, dt.time.fromisoformat(at)), **fields)
            for d in WORKDAYS[:12]
        )
        return rider(employee_id, rides=RiderRides(swipes=swipes))

    badge = CoverageSpan("badge_swipes", START, END)
    facts = van(
        swiper("E1", "07:15"),  # 30 minutes after 06:45: counts
        swiper("E2", "07:16"),
        swiper("E3", "06:15"),  # 30 minutes before
        swiper("E4", "06:50", direction="out"),
        swiper("E5", "06:50", site="North Yard"),
        swiper("E6", "06:50", site="harbor dc "),
        coverage=(badge,),
    )
    assert verdicts(facts) == {
        "E1": "pass", "E2": "fail", "E3": "pass", "E4": "fail", "E5": "fail", "E6": "pass"
    }  # fmt: skip


def test_a_swipe_just_before_a_midnight_arrival_counts_for_that_day():
    swipes = tuple(
        SwipeFacts(dt.datetime.combine(d - dt.timedelta(days=1), dt.time(23, 45)))
        for d in WORKDAYS[:12]
    )
    facts = van(
        rider("E1", rides=RiderRides(swipes=swipes)),
        schedule=weekly(WEEKDAYS, "00:00", "08:00"),
        coverage=(CoverageSpan("badge_swipes", START, END),),
    )
    assert verdicts(facts) == {"E1": "pass"}


def test_a_van_with_no_schedule_has_no_arrival_so_badges_cover_nothing():
    swipes = tuple(SwipeFacts(dt.datetime.combine(d, dt.time(6, 50))) for d in WORKDAYS)
    facts = van(
        rider("E1", rides=RiderRides(swipes=swipes)),
        schedule=[],
        coverage=(CoverageSpan("badge_swipes", START, END),),
    )
    assert verdicts(facts) == {"E1": "unknown"}


def test_a_van_with_no_schedule_runs_when_its_rider_works():
    assert verdicts(van(rider("E1", WORKDAYS[:12]), schedule=[])) == {"E1": "pass"}


def test_days_the_van_does_not_run_are_not_workdays():
    mon_to_wed = window_days("Mon", "Tue", "Wed")
    facts = van(
        rider("E1", mon_to_wed[:11]), schedule=weekly(("Mon", "Tue", "Wed"), "06:45", "15:30")
    )
    assert verdicts(facts) == {"E1": "fail"}
    assert summary(facts).required == 12


def test_a_rotation_is_expanded_per_date():
    rotation = {
        "cycle_start": "2026-10-26",
        "days": [{"start": "06:00", "end": "18:00"}] * 4 + [None] * 4,
    }
    crew = ShiftFacts(shift_id="ROT", name="4 on 4 off", rotation=rotation)
    on = [START + dt.timedelta(days=n) for n in range(28) if n % 8 < 4]
    facts = van(
        rider("E1", on[:12], crew),
        rider("E2", on[:11], crew),
        schedule=weekly(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), "05:45", "18:30"),
    )
    assert verdicts(facts) == {"E1": "pass", "E2": "fail"}


def test_a_schedule_that_names_no_days_is_unknown_when_there_is_data():
    words = ShiftFacts(shift_id="FLOAT", name="Floater", text="varies week to week, see supervisor")
    result = check_ridership(van(rider("E1", WORKDAYS, words)), AUDIT, RULES)
    assert result.verdict == "unknown"
    assert isinstance(result.evidence[0], UnknownEvidence)


def test_days_written_without_hours_are_the_riders_workdays():
    """HR's text names the days and no hours: the days are counted, the hours not needed."""
    words = ShiftFacts(shift_id="PT", name="Part-time", text="Tues & Thurs, hours vary")
    tue_thu = window_days("Tue", "Thu")  # 8 days; 3 a week of the rider's 2 asks for all 8
    facts = van(rider("E2", tue_thu[:7], words), rider("E3", tue_thu, words))
    assert verdicts(facts) == {"E2": "fail", "E3": "pass"}
    assert summary(facts, "E3").scheduled == 8
    # The shift check, which needs the hours, still leaves such a rider to a person.
    with pytest.raises(Unreadable):
        read_shift(words)


def test_hours_read_two_ways_do_not_matter_when_the_days_are_clear():
    words = ShiftFacts(shift_id="DAYS", name="Days", text="M-F 7-4")
    assert verdicts(van(rider("E1", WORKDAYS[:12], words))) == {"E1": "pass"}


def test_a_rider_with_no_shift_is_unknown():
    assert verdicts(van(rider("E1", WORKDAYS, None))) == {"E1": "unknown"}


def test_the_evidence_cites_the_rides_it_counted():
    item = summary(van(rider("E1", WORKDAYS[:12])))
    assert [c.record for c in item.cites][:2] == ["employee", "shift"]
    assert any(c.record == "trip" and c.id == f"T-{WORKDAYS[0]}" for c in item.cites)
    assert item.calendar[WORKDAYS[0].isoformat()] == "aboard"
    assert item.calendar[WORKDAYS[-1].isoformat()] == "missed"


def test_the_reasoning_names_the_count_and_the_rule():
    result = check_ridership(van(rider("E2", WORKDAYS[:3])), AUDIT, RULES)
    assert result.riders[0].reason == (
        "E2 rode on 3 of 20 workdays counted in 2026-10-26 – 2026-11-22; the rule asks for 12 "
        "(3 days a week of the rider's 5)."
    )
