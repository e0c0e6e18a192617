import datetime as dt
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import (
    EmployeeFactory,
    LeaveFactory,
    RiderFactory,
    ShiftFactory,
    UserFactory,
    VanpoolFactory,
)
from vanpools.importing import ImportFailed, RowError, import_data, import_file
from vanpools.importing.read.context import unknown_column
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool
from vanpools.schedules import ScheduleError, format_compact_weekly, parse_compact_weekly
from vanpools.tests.files import write_csv, write_json

pytestmark = pytest.mark.django_db

SHIFT = {"shift_id": "SH-DAY", "name": "Day", "schedule": "Mon-Fri 07:00-16:00"}
VANPOOL = {"vanpool_id": "VP-101", "name": "Union City", "work_site": "Fremont Campus"}
EMPLOYEE = {
    "employee_id": "EMP-1001",
    "first_name": "Ana",
    "last_name": "Diaz",
    "email": "ana@example.com",
    "work_site": "Fremont Campus",
    "home_zip": "94587",
}
WRITES = ("INSERT", "UPDATE", "DELETE")


def error_lines(path: Path, **options: object) -> list[str]:
    with pytest.raises(ImportFailed) as excinfo:
        import_file(path, **options)
    return [str(error) for error in excinfo.value.errors]


def counts(result, kind: str) -> tuple[int, int, int]:
    count = result.counts[kind]
    return count["created"], count["updated"], count["unchanged"]


def writes_during(func) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        func()
    return [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().startswith(WRITES)]


# Happy paths ----------------------------------------------------------------


def test_it_imports_shifts_from_csv(tmp_path):
    rotation = {"cycle_start": "2026-11-02", "days": [{"start": "06:00", "end": "18:00"}] * 4}
    rotation["days"] += [None] * 4
    path = write_csv(
        tmp_path,
        [
            {
                "shift_id": "SH-DAY",
                "name": "Day",
                "schedule": "Mon-Fri 07:00-16:00; Sat 08:00-12:00",
            },
            {"shift_id": "SH-MWF", "name": "Early", "schedule": "Mon,Wed,Fri 06:00-14:30"},
            {
                "shift_id": "SH-NIGHT",
                "name": "Night",
                "schedule": "Sun-Thu 22:00-06:30",
                "overnight": "true",
            },
            {"shift_id": "SH-ROT", "name": "4 on 4 off", "rotation": json.dumps(rotation)},
            {"shift_id": "SH-TEXT", "name": "Flex", "schedule_text": "varies, see supervisor"},
        ],
    )
    result = import_file(path)
    assert counts(result, "shifts") == (5, 0, 0)
    assert result.kinds == ["shifts"]
    day = Shift.objects.get(shift_id="SH-DAY")
    assert day.schedule[0] == {"day": "Mon", "start": "07:00", "end": "16:00"}
    assert day.schedule[-1] == {"day": "Sat", "start": "08:00", "end": "12:00"}
    assert [s["day"] for s in Shift.objects.get(shift_id="SH-MWF").schedule] == [
        "Mon",
        "Wed",
        "Fri",
    ]
    night = Shift.objects.get(shift_id="SH-NIGHT")
    assert night.overnight
    assert [s["day"] for s in night.schedule] == ["Mon", "Tue", "Wed", "Thu", "Sun"]
    assert Shift.objects.get(shift_id="SH-ROT").rotation == rotation
    assert Shift.objects.get(shift_id="SH-TEXT").schedule_text == "varies, see supervisor"


def test_it_imports_vanpools_from_csv(tmp_path, coordinator):
    path = write_csv(
        tmp_path,
        [
            VANPOOL
            | {
                "pickup_address": "Union City BART",
                "pickup_zip": "94587",
                "pickup_lat": "37.5906",
                "pickup_lng": "-122.0172",
                "capacity": "7",
                "status": "Suspended",
                "coordinator_email": "Coordinator@Example.com",
                "schedule": "Mon-Fri 06:30-17:00",
                "max_commute_miles": "40",
            },
            {"vanpool_id": "VP-102", "name": "Newark", "work_site": "Fremont Campus"},
        ],
    )
    assert counts(import_file(path), "vanpools") == (2, 0, 0)
    van = Vanpool.objects.get(vanpool_id="VP-101")
    assert (van.capacity, van.status, van.coordinator) == (7, "suspended", coordinator)
    assert (van.pickup_lat, van.pickup_lng, van.max_commute_miles) == (37.5906, -122.0172, 40)
    assert len(van.schedule) == 5
    defaults = Vanpool.objects.get(vanpool_id="VP-102")
    assert (defaults.capacity, defaults.status, defaults.schedule) == (12, "active", [])


def test_it_imports_employees_from_csv(tmp_path):
    shift = ShiftFactory(shift_id="SH-DAY")
    VanpoolFactory(vanpool_id="VP-101")
    path = write_csv(
        tmp_path,
        [
            EMPLOYEE
            | {
                "title": "Technician",
                "home_lat": "37.59° N",
                "home_lng": "122.01° W",
                "status": "on leave",
                "time_type": "part_time",
                "shift_id": "SH-DAY",
                "vanpool_id": "VP-101",
                "joined": "2026-01-05",
                "pto": "2026-12-01..2026-12-05; 2026-12-24",
                "leave": "2027-01-04..2027-02-26",
            },
            EMPLOYEE | {"employee_id": "EMP-1002", "email": "bo@example.com"},
        ],
    )
    result = import_file(path)
    assert counts(result, "employees") == (2, 0, 0)
    ana = Employee.objects.get(employee_id="EMP-1001")
    assert (ana.status, ana.time_type, ana.shift, ana.home_lat, ana.home_lng) == (
        "on_leave",
        "part_time",
        shift,
        37.59,
        -122.01,
    )
    seat = ana.memberships.get()
    assert (seat.vanpool.vanpool_id, seat.joined, seat.status) == (
        "VP-101",
        dt.date(2026, 1, 5),
        "active",
    )
    spans = {(leave.kind, leave.start_date, leave.end_date) for leave in ana.leaves.all()}
    assert spans == {
        ("pto", dt.date(2026, 12, 1), dt.date(2026, 12, 5)),
        ("pto", dt.date(2026, 12, 24), dt.date(2026, 12, 24)),
        ("leave", dt.date(2027, 1, 4), dt.date(2027, 2, 26)),
    }
    assert Employee.objects.get(employee_id="EMP-1002").memberships.count() == 0


def test_it_imports_every_kind_from_json_in_dependency_order(tmp_path):
    data = {
        # Employees first in the file: rows still apply shifts → vanpools → employees.
        "employees": [
            EMPLOYEE
            | {"shift_id": "SH-NIGHT", "vanpool_id": "VP-101", "home_zip": 1810, "pto": []},
        ],
        "vanpools": [VANPOOL | {"capacity": 8, "pickup_lat": 37.5, "pickup_lng": -122}],
        "shifts": [
            {
                "shift_id": "SH-NIGHT",
                "name": "Night",
                "schedule": [{"day": "Sun", "start": "22:00", "end": "06:30"}],
                "overnight": True,
            }
        ],
    }
    result = import_file(write_json(tmp_path, data))
    assert result.kinds == ["shifts", "vanpools", "employees"]
    assert [counts(result, kind) for kind in result.kinds] == [(1, 0, 0)] * 3
    ana = Employee.objects.get()
    assert (ana.shift.shift_id, ana.home_zip) == ("SH-NIGHT", "01810")
    seat = ana.memberships.get()
    assert (seat.vanpool.vanpool_id, seat.joined) == ("VP-101", dt.date(2026, 11, 23))


def test_it_reads_a_bare_json_list_as_employees():
    result = import_data([EMPLOYEE])
    assert counts(result, "employees") == (1, 0, 0)
    assert Employee.objects.get().email == "ana@example.com"


@pytest.mark.parametrize(
    ("rows", "kind"),
    [
        ([SHIFT], "shifts"),
        ([VANPOOL], "vanpools"),
        ([EMPLOYEE], "employees"),
    ],
    ids=["shifts", "vanpools", "employees"],
)
def test_a_bare_json_list_is_read_as_the_kind_its_keys_name(tmp_path, rows, kind):
    result = import_file(write_json(tmp_path, rows))
    assert result.kinds == [kind]
    assert counts(result, kind) == (1, 0, 0)


def test_a_bare_json_list_without_an_id_key_says_to_name_the_kind(tmp_path):
    with pytest.raises(ImportFailed) as failed:
        import_file(write_json(tmp_path, [{"name": "Day", "schedule": "Mon-Fri 07:00-16:00"}]))
    assert "cannot tell whether they are employees, vanpools or shifts (give --kind)" in str(
        failed.value.errors[0]
    )


def test_it_takes_the_kind_from_the_option_over_the_header(tmp_path):
    # A shifts file whose only ID-looking column is shift_id would be read as shifts anyway;
    # --kind matters for a bare JSON list.
    path = write_json(tmp_path, [SHIFT])
    assert counts(import_file(path, kind="shifts"), "shifts") == (1, 0, 0)


def test_it_reports_everything_unchanged_the_second_time_and_writes_nothing(tmp_path, coordinator):
    ShiftFactory(shift_id="SH-DAY")
    data = {
        "shifts": [SHIFT | {"schedule": "Sun-Thu 22:00-06:30", "overnight": "yes"}],
        "vanpools": [
            VANPOOL
            | {"coordinator_email": "coordinator@example.com", "pickup_lat": "37.59060"}
            | {"pickup_lng": "-122.0172", "schedule": "Mon-Fri 06:30-17:00"}
        ],
        "employees": [
            EMPLOYEE
            | {"shift_id": "SH-DAY", "vanpool_id": "VP-101", "home_zip": "018104321"}
            | {"pto": "2026-12-01..2026-12-05", "leave": ["2027-01-04"], "joined": "2026-01-05"}
        ],
    }
    path = write_json(tmp_path, data)
    first = import_file(path)
    assert [counts(first, kind) for kind in first.kinds] == [(0, 1, 0), (1, 0, 0), (1, 0, 0)]
    stamp = Employee.objects.get().updated_at
    results = []
    assert writes_during(lambda: results.append(import_file(path))) == []
    assert [counts(results[0], kind) for kind in results[0].kinds] == [(0, 0, 1)] * 3
    assert Employee.objects.get().updated_at == stamp


def test_it_updates_only_what_changed(tmp_path, _frozen_time):
    ana = EmployeeFactory(**{k: v for k, v in EMPLOYEE.items()})
    EmployeeFactory(employee_id="EMP-1002", email="bo@example.com", home_zip="94587")
    created = ana.updated_at
    _frozen_time.shift(dt.timedelta(hours=1))
    path = write_csv(
        tmp_path,
        [
            EMPLOYEE | {"email": "ana.diaz@example.com"},
            {
                "employee_id": "EMP-1002",
                "first_name": Employee.objects.get(employee_id="EMP-1002").first_name,
                "last_name": "Rivera",
                "email": "bo@example.com",
                "work_site": "Fremont Campus",
                "home_zip": "94587",
            },
        ],
    )
    assert counts(import_file(path), "employees") == (0, 1, 1)
    ana.refresh_from_db()
    assert ana.email == "ana.diaz@example.com"
    assert ana.first_name == "Ana"  # unchanged fields keep their stored value
    assert ana.updated_at > created


def test_it_compares_stored_schedules_and_floats_after_parsing():
    ShiftFactory(
        shift_id="SH-DAY",
        name="Day",
        # Stored out of week order: the same week as the compact text below.
        schedule=[
            {"start": "08:00", "end": "12:00", "day": "Sat"},
            *(
                {"day": d, "start": "07:00", "end": "16:00"}
                for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
            ),
        ],
    )
    VanpoolFactory(vanpool_id="VP-101", name="Union City", work_site="Fremont Campus")
    result = import_data(
        {
            "shifts": [SHIFT | {"schedule": "Sat 08:00-12:00; Mon-Fri 7:00-16:00"}],
            "vanpools": [VANPOOL | {"pickup_lat": "37.59060", "pickup_lng": -122.0172}],
        }
    )
    assert counts(result, "shifts") == (0, 0, 1)
    assert counts(result, "vanpools") == (0, 0, 1)


def test_it_saves_nothing_on_a_dry_run_but_counts(tmp_path):
    ShiftFactory(shift_id="SH-DAY", name="Old name")
    data = {
        "shifts": [SHIFT],
        "vanpools": [VANPOOL],
        "employees": [EMPLOYEE | {"vanpool_id": "VP-101"}],
    }
    result = import_data(data, dry_run=True)
    assert result.dry_run
    assert [counts(result, kind) for kind in result.kinds] == [(0, 1, 0), (1, 0, 0), (1, 0, 0)]
    assert Shift.objects.get().name == "Old name"
    assert (Vanpool.objects.count(), Employee.objects.count(), Rider.objects.count()) == (0, 0, 0)
    assert result.summary_lines()[-1] == "dry run: nothing was saved"


# Seats and leave ------------------------------------------------------------


def test_it_moves_a_seat_and_keeps_the_old_one_cancelled():
    old = RiderFactory(employee__employee_id="EMP-1001", vanpool__vanpool_id="VP-100")
    VanpoolFactory(vanpool_id="VP-101")
    result = import_data([EMPLOYEE | {"vanpool_id": "VP-101"}])
    assert counts(result, "employees") == (0, 1, 0)
    old.refresh_from_db()
    assert old.status == "cancelled"
    assert old.cancelled_at.isoformat() == "2026-11-23T17:00:00+00:00"
    assert old.cancel_reason == "moved to VP-101 by roster import"
    new = Rider.objects.get(status="active")
    assert (new.vanpool.vanpool_id, new.employee_id, new.joined) == (
        "VP-101",
        old.employee_id,
        dt.date(2026, 11, 23),
    )


def test_it_corrects_the_start_date_of_the_same_seat():
    seat = RiderFactory(employee__employee_id="EMP-1001", vanpool__vanpool_id="VP-100")
    result = import_data([EMPLOYEE | {"vanpool_id": "VP-100", "joined": "2025-09-01"}])
    assert counts(result, "employees") == (0, 1, 0)
    seat.refresh_from_db()
    assert (seat.status, seat.joined) == ("active", dt.date(2025, 9, 1))
    assert Rider.objects.count() == 1


def test_it_leaves_seats_alone_when_vanpool_id_is_blank(tmp_path):
    seat = RiderFactory(employee=EmployeeFactory(**EMPLOYEE))
    path = write_csv(tmp_path, [EMPLOYEE | {"vanpool_id": ""}])
    assert counts(import_file(path), "employees") == (0, 0, 1)
    seat.refresh_from_db()
    assert seat.status == "active"


def test_it_replaces_pto_but_keeps_leave_when_only_pto_is_given():
    ana = EmployeeFactory(**EMPLOYEE)
    kept = LeaveFactory(
        employee=ana, start_date=dt.date(2026, 12, 1), end_date=dt.date(2026, 12, 5), note="ski"
    )
    LeaveFactory(employee=ana, start_date=dt.date(2026, 11, 26), end_date=dt.date(2026, 11, 27))
    LeaveFactory(
        employee=ana, kind="leave", start_date=dt.date(2027, 1, 4), end_date=dt.date(2027, 2, 1)
    )
    result = import_data([EMPLOYEE | {"pto": "2026-12-01..2026-12-05;2026-12-24"}])
    assert counts(result, "employees") == (0, 1, 0)
    spans = sorted(
        (lv.kind, lv.start_date.isoformat(), lv.end_date.isoformat()) for lv in ana.leaves.all()
    )
    assert spans == [
        ("leave", "2027-01-04", "2027-02-01"),
        ("pto", "2026-12-01", "2026-12-05"),
        ("pto", "2026-12-24", "2026-12-24"),
    ]
    assert Leave.objects.get(pk=kept.pk).note == "ski"


def test_it_clears_pto_given_as_an_empty_json_list():
    ana = EmployeeFactory(**EMPLOYEE)
    LeaveFactory(employee=ana)
    assert counts(import_data([EMPLOYEE | {"pto": []}]), "employees") == (0, 1, 0)
    assert not ana.leaves.exists()


# ZIPs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("1810", "01810"),
        ("945", "00945"),
        (1810, "01810"),
        ("018104321", "01810-4321"),
        ("94538-1234", "94538-1234"),
        (" 94538 ", "94538"),
    ],
)
def test_it_restores_zips_a_spreadsheet_mangled(given, stored):
    import_data([EMPLOYEE | {"home_zip": given}])
    assert Employee.objects.get().home_zip == stored


@pytest.mark.parametrize(
    ("given", "as_given"),
    [
        ("1810", "1810"),
        (1810, "1810"),
        ("18104321", "18104321"),
        ("018104321", ""),
        ("01810", ""),
        ("CA 94538", ""),
    ],
)
def test_it_keeps_the_roster_text_of_a_zip_whose_leading_zero_it_restored(given, as_given):
    import_data([EMPLOYEE | {"home_zip": given}])
    assert Employee.objects.get().home_zip_as_given == as_given


# Bad rows -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "cells", "expected"),
    [
        ("employees", {"home_zip": "9453x"}, "line 2, home_zip: '9453x' is not a US ZIP code"),
        ("employees", {"home_zip": "12"}, "line 2, home_zip: '12' is not a US ZIP code"),
        ("employees", {"home_zip": "94538-12"}, "line 2, home_zip: '94538-12' is not a US ZIP"),
        ("employees", {"home_zip": ""}, "line 2, home_zip: a value is required"),
        (
            "employees",
            {"home_lat": "37.5"},
            "line 2, home_lng: give home_lat and home_lng together",
        ),
        (
            "employees",
            {"home_lat": "95", "home_lng": "-122"},
            "line 2, home_lat: Ensure this value is less than or equal to 90 (got '95')",
        ),
        (
            "employees",
            {"home_lat": "north", "home_lng": "-122"},
            "line 2, home_lat: 'north' is not a coordinate",
        ),
        (
            "employees",
            {"home_lat": "nan", "home_lng": "-122"},
            "line 2, home_lat: 'nan' is not a coordinate",
        ),
        (
            "employees",
            {"home_lat": "122.1 W", "home_lng": "-122"},
            "line 2, home_lat: '122.1 W' is W, which is no latitude",
        ),
        ("employees", {"email": "ana@"}, "line 2, email: Enter a valid email address (got 'ana@')"),
        (
            "employees",
            {"status": "retired"},
            "line 2, status: 'retired' is not one of active, on_leave",
        ),
        ("employees", {"time_type": "gig"}, "line 2, time_type: 'gig' is not one of full_time"),
        ("employees", {"employee_id": "emp 1"}, "line 2, employee_id: Employee IDs are upper-case"),
        ("employees", {"shift_id": "SH-NOPE"}, "line 2, shift_id: no shift 'SH-NOPE' in this file"),
        (
            "employees",
            {"vanpool_id": "VP-NOPE"},
            "line 2, vanpool_id: no vanpool 'VP-NOPE' in this",
        ),
        ("employees", {"vanpool_id": "VP-1; VP-2"}, "line 2, vanpool_id: an employee has one seat"),
        ("employees", {"joined": "2026-01-05"}, "line 2, joined: joined is when a seat started"),
        (
            "employees",
            {"vanpool_id": "VP-STORED", "joined": "2026-02-30"},
            "line 2, joined: '2026-02-30' is not a date (YYYY-MM-DD)",
        ),
        (
            "employees",
            {"pto": "2026-12-05..2026-12-01"},
            "line 2, pto: '2026-12-05..2026-12-01' ends before it starts",
        ),
        ("employees", {"leave": "next week"}, "line 2, leave: 'next week' is not a date"),
        ("employees", {"hire_date": "2020-01-01"}, "line 1, hire_date: unknown column"),
        (
            "employees",
            {"home_zipp": "94587"},
            "line 1, home_zipp: unknown column; did you mean home_zip?",
        ),
        ("vanpools", {"vanpool_id": "101"}, "line 2, vanpool_id: Vanpool IDs look like VP-101"),
        (
            "vanpools",
            {"capacity": "75"},
            "line 2, capacity: Ensure this value is less than or equal to 60",
        ),
        (
            "vanpools",
            {"capacity": "0"},
            "line 2, capacity: Ensure this value is greater than or equal to 1",
        ),
        ("vanpools", {"capacity": "twelve"}, "line 2, capacity: 'twelve' is not a whole number"),
        (
            "vanpools",
            {"status": "paused"},
            "line 2, status: 'paused' is not one of active, inactive",
        ),
        (
            "vanpools",
            {"pickup_zip": "1234567"},
            "line 2, pickup_zip: '1234567' is not a US ZIP code",
        ),
        ("vanpools", {"pickup_lng": "-122"}, "line 2, pickup_lat: give pickup_lat and pickup_lng"),
        (
            "vanpools",
            {"work_site_lat": "37.5", "work_site_lng": "-190"},
            "line 2, work_site_lng: Ensure this value is greater than or equal to -180",
        ),
        (
            "vanpools",
            {"coordinator_email": "nobody@example.com"},
            "line 2, coordinator_email: 'nobody@example.com' is not the email of a staff",
        ),
        (
            "vanpools",
            {"coordinator_email": "outsider@example.com"},
            "line 2, coordinator_email: 'outsider@example.com' is not the email",
        ),
        (
            "vanpools",
            {"schedule": "Mon-Fri 7-4"},
            "line 2, schedule: 'Mon-Fri 7-4': expected days then hours",
        ),
        (
            "shifts",
            {"schedule": "Sun-Thu 22:00-06:30"},
            "line 2, overnight: A day ends before it starts",
        ),
        (
            "shifts",
            {"schedule": "Funday 07:00-16:00"},
            "line 2, schedule: 'Funday 07:00-16:00': 'Funday' is not a day",
        ),
        ("shifts", {"schedule": "Mon,Mon 07:00-16:00"}, "line 2, schedule: day listed twice: Mon"),
        (
            "shifts",
            {"schedule": '[{"day": "Mon", "start": "7am", "end": "16:00"}]'},
            "line 2, schedule: 0.start",
        ),
        ("shifts", {"schedule": '[{"day": "Mon"'}, "line 2, schedule: not valid JSON"),
        ("shifts", {"schedule": "", "rotation": "4 on 4 off"}, "line 2, rotation: not valid JSON"),
        (
            "shifts",
            {"schedule": "", "rotation": '{"cycle_start": "2026-11-02", "days": [null, null]}'},
            "line 2, rotation: a rotation needs at least one working day",
        ),
        (
            "shifts",
            {"schedule": "", "schedule_text": ""},
            "line 2, schedule: give a schedule, rotation or schedule_text",
        ),
        ("shifts", {"overnight": "maybe"}, "line 2, overnight: 'maybe' is not true or false"),
        ("shifts", {"shift_id": "SH 1"}, "line 2, shift_id: Letters, digits, - and _"),
        (
            "shifts",
            {"name": "x" * 101},
            "line 2, name: Ensure this value has at most 100 characters",
        ),
    ],
)
def test_it_reports_the_row_column_and_reason_of_a_bad_cell(tmp_path, kind, cells, expected):
    UserFactory(username="outsider", is_staff=False)
    VanpoolFactory(vanpool_id="VP-STORED")
    base = {"shifts": SHIFT, "vanpools": VANPOOL, "employees": EMPLOYEE}[kind]
    path = write_csv(tmp_path, [base | cells])
    errors = error_lines(path, kind=kind)
    assert any(error.startswith(expected) for error in errors), errors


def test_it_reports_json_rows_by_index():
    with pytest.raises(ImportFailed) as excinfo:
        import_data({"employees": [EMPLOYEE, EMPLOYEE | {"employee_id": "EMP-2", "email": "x"}]})
    assert [str(e) for e in excinfo.value.errors] == [
        "employees[1], email: Enter a valid email address (got 'x')"
    ]


def test_it_collects_every_error_in_the_file(tmp_path):
    path = write_csv(
        tmp_path,
        [
            EMPLOYEE | {"home_zip": "9453x"},
            EMPLOYEE | {"employee_id": "EMP-1002", "email": "nope", "status": "gone"},
        ],
    )
    assert error_lines(path) == [
        "line 2, home_zip: '9453x' is not a US ZIP code (5 digits, or ZIP+4 like 02139-4307)",
        "line 3, status: 'gone' is not one of active, on_leave, terminated",
        "line 3, email: Enter a valid email address (got 'nope')",
    ]


def test_it_refuses_an_id_given_twice(tmp_path):
    path = write_csv(tmp_path, [SHIFT, SHIFT | {"name": "Day again"}])
    assert error_lines(path) == ["line 3, shift_id: 'SH-DAY' is already on line 2"]


def test_it_refuses_two_seats_for_one_employee():
    VanpoolFactory(vanpool_id="VP-101")
    VanpoolFactory(vanpool_id="VP-102")
    rows = [EMPLOYEE | {"vanpool_id": "VP-101"}, EMPLOYEE | {"vanpool_id": "VP-102"}]
    with pytest.raises(ImportFailed) as excinfo:
        import_data(rows)
    assert [str(e) for e in excinfo.value.errors] == [
        "employees[1], vanpool_id: given two seats: VP-101 on employees[0] and VP-102 here"
    ]


def test_it_imports_nothing_when_one_row_is_bad(tmp_path):
    EmployeeFactory(employee_id="EMP-1001", first_name="Old")
    path = write_csv(
        tmp_path,
        [EMPLOYEE | {"first_name": "New"}, EMPLOYEE | {"employee_id": "EMP-1002", "home_zip": "x"}],
    )
    assert error_lines(path) == [
        "line 3, home_zip: 'x' is not a US ZIP code (5 digits, or ZIP+4 like 02139-4307)"
    ]
    assert list(Employee.objects.values_list("employee_id", "first_name")) == [("EMP-1001", "Old")]


# Files ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("roster.json", b'{"employees": [', "line 1: not valid JSON: Expecting value"),
        ("roster.csv", b"employee_id,home_zip\nEMP-1,\xff\xfe\n", "not UTF-8 text (byte 28)"),
        ("roster.csv", b"  \n", "the file is empty"),
        ("roster.json", b"", "the file is empty"),
        ("roster.csv", b"EMP-1001,Ana,Diaz\n", "line 1: the first line must be the header row"),
        ("roster.csv", b"\nemployee_id\n", "line 1: the first line must be the header row"),
        (
            "roster.csv",
            b"name,work_site\nDay,Fremont\n",
            "line 1: no employee_id, vanpool_id or shift_id",
        ),
        ("roster.xlsx", b"PK\x03\x04", "cannot read .xlsx files: save it as CSV or JSON"),
        (
            "roster.json",
            b'"employees"',
            "expected an object with shifts, vanpools and/or employees",
        ),
        ("roster.json", b'{"employes": []}', "employes: unknown section; did you mean employees?"),
        ("roster.json", b'{"employees": {"EMP-1": {}}}', "employees: expected a list of rows"),
        (
            "roster.json",
            b'{"employees": ["EMP-1"]}',
            "employees[0]: expected an object of column: value",
        ),
        (
            "roster.csv",
            b'employee_id\n"EMP-1\n',
            "line 2: not readable as CSV: unexpected end of data",
        ),
        (
            "roster.csv",
            b"employee_id,first_name\nEMP-1,Ana\n",
            "line 1, email: required column is missing",
        ),
        ("roster.csv", b"shift_id,name\nSH-1,Day\n", "line 1, schedule: the file needs a schedule"),
        ("roster.csv", b"shift_id,name,shift_id\n", "line 1, shift_id: the column appears twice"),
        (
            "roster.csv",
            b"shift_id,name,schedule\nSH-1,Day,Mon 07:00-16:00,x\n",
            "line 2: 4 cells, but",
        ),
        (
            "roster.csv",
            b"shift_id,name,schedule,\nSH-1,Day,Mon 07:00-16:00,x\n",
            "column 4: has values",
        ),
    ],
)
def test_it_explains_a_file_it_cannot_read(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content)
    assert any(expected in error for error in error_lines(path)), error_lines(path)


def test_it_says_when_the_file_is_missing(tmp_path):
    assert error_lines(tmp_path / "gone.csv") == [f"{tmp_path / 'gone.csv'}: no such file"]


def test_it_refuses_kind_for_a_json_file_with_other_sections(tmp_path):
    path = write_json(tmp_path, {"shifts": [SHIFT], "employees": [EMPLOYEE]})
    assert error_lines(path, kind="employees") == [
        f"{path}: the file also holds shifts; leave out --kind to import all of it"
    ]


def test_it_reads_a_bom_prefixed_csv_with_padding(tmp_path):
    path = tmp_path / "roster.csv"
    text = "Employee_ID, first_name,last_name,email,work_site,home_zip,,\r\n"
    text += "EMP-1001,Ana,Diaz,ana@example.com,Fremont Campus,1810,,\r\n,,,,,,,\r\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert counts(import_file(path), "employees") == (1, 0, 0)
    assert Employee.objects.get().home_zip == "01810"


def test_it_numbers_rows_by_the_line_they_start_on(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(
        'shift_id,name,schedule_text\nSH-1,Day,"two\nlines"\nSH 2,Night,nights\n', encoding="utf-8"
    )
    assert error_lines(path) == ["line 4, shift_id: Letters, digits, - and _ (got 'SH 2')"]


# Queries --------------------------------------------------------------------


def test_it_reads_fifty_employees_in_a_few_queries(django_assert_max_num_queries):
    ShiftFactory(shift_id="SH-DAY")
    VanpoolFactory(vanpool_id="VP-101")
    rows = [
        EMPLOYEE
        | {
            "employee_id": f"EMP-{n}",
            "email": f"e{n}@example.com",
            "shift_id": "SH-DAY",
            "vanpool_id": "VP-101",
            "pto": "2026-12-24",
        }
        for n in range(50)
    ]
    with CaptureQueriesContext(connection) as first:
        import_data(rows)
    selects = [q for q in first.captured_queries if q["sql"].startswith("SELECT")]
    assert len(selects) <= 8
    with django_assert_max_num_queries(10):
        result = import_data(rows)
    assert counts(result, "employees") == (0, 0, 50)


def test_it_loads_a_demo_sized_program():
    shifts = [SHIFT | {"shift_id": f"SH-{n}"} for n in range(6)]
    vanpools = [VANPOOL | {"vanpool_id": f"VP-{n}"} for n in range(25)]
    employees = [
        EMPLOYEE
        | {"employee_id": f"EMP-{n}", "shift_id": f"SH-{n % 6}", "vanpool_id": f"VP-{n % 25}"}
        for n in range(150)
    ]
    result = import_data({"shifts": shifts, "vanpools": vanpools, "employees": employees})
    assert [counts(result, kind) for kind in result.kinds] == [(6, 0, 0), (25, 0, 0), (150, 0, 0)]
    assert Rider.objects.filter(status="active").count() == 150


# The command ----------------------------------------------------------------


def run_command(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_roster", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_prints_a_summary_table(tmp_path):
    out, err = run_command(str(write_csv(tmp_path, [EMPLOYEE])))
    assert out.splitlines() == [
        "            created  updated  unchanged",
        "employees         1        0          0",
        "warning: 1 active employee with no seat: EMP-1001",
    ]
    assert err == ""


def test_it_says_a_dry_run_saved_nothing(tmp_path):
    out, _ = run_command(str(write_csv(tmp_path, [SHIFT])), "--kind", "shifts", "--dry-run")
    assert out.splitlines()[1:] == [
        "shifts            1        0          0        0",
        "shifts, first changes:",
        "  SH-DAY: new",
        "dry run: nothing was saved",
    ]
    assert not Shift.objects.exists()


def test_it_lists_every_error_and_fails(tmp_path):
    path = write_csv(
        tmp_path,
        [EMPLOYEE | {"home_zip": "9453x"}, EMPLOYEE | {"employee_id": "EMP-2", "email": "x"}],
    )
    stderr = io.StringIO()
    with pytest.raises(CommandError, match=r"^2 errors; nothing was imported\.$"):
        call_command("import_roster", str(path), stderr=stderr)
    assert stderr.getvalue().splitlines() == [
        "line 2, home_zip: '9453x' is not a US ZIP code (5 digits, or ZIP+4 like 02139-4307)",
        "line 3, email: Enter a valid email address (got 'x')",
    ]
    assert not Employee.objects.exists()


def test_it_fails_clearly_on_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match=r"gone\.csv: no such file"):
        call_command("import_roster", str(tmp_path / "gone.csv"))


def test_it_formats_a_row_error_without_a_column():
    assert str(RowError("line 7", "home_zip", "bad")) == "line 7, home_zip: bad"
    assert str(RowError("roster.csv", "", "the file is empty")) == "roster.csv: the file is empty"


# Compact schedules ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Mon-Fri 07:00-16:00; Sat 08:00-12:00",
        "Mon,Wed,Fri 06:00-14:30",
        "Sun-Thu 22:00-06:30",
        "Sat,Sun 09:00-17:00",
        "Mon-Sun 05:00-13:00",
    ],
)
def test_it_round_trips_compact_schedules(text):
    assert format_compact_weekly(parse_compact_weekly(text)) == text


def test_it_reads_lenient_compact_schedules():
    spans = parse_compact_weekly("monday - wednesday 7:00–16:00;")
    assert [(s.day, s.start, s.end) for s in spans] == [
        ("Mon", "07:00", "16:00"),
        ("Tue", "07:00", "16:00"),
        ("Wed", "07:00", "16:00"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no days given"),
        ("Mon 24:00-06:00", "24:00 is not a time of day"),
        ("Mon 07:00-07:00", "start and end are the same time"),
        ("Mon-Wed-Fri 07:00-16:00", "is not a day or a range"),
    ],
)
def test_it_says_what_is_wrong_with_a_compact_schedule(text, message):
    with pytest.raises(ScheduleError, match=message):
        parse_compact_weekly(text)


def test_a_point_given_as_one_json_object_is_read_as_its_lat_and_lng_columns(tmp_path):
    vanpool = VANPOOL | {"pickup": {"lat": 37.5906, "lng": -122.0172}}
    employee = EMPLOYEE | {"home": {"latitude": "37.60", "longitude": "-122.01"}}

    import_file(write_json(tmp_path, {"vanpools": [vanpool], "employees": [employee]}))

    van = Vanpool.objects.get()
    assert (van.pickup_lat, van.pickup_lng) == (37.5906, -122.0172)
    assert (Employee.objects.get().home_lat, Employee.objects.get().home_lng) == (37.6, -122.01)


def test_a_point_object_of_another_shape_is_refused_with_the_shape_expected(tmp_path):
    vanpool = VANPOOL | {"pickup": {"x": 1, "y": 2}}

    errors = error_lines(write_json(tmp_path, {"vanpools": [vanpool]}))

    assert errors == [
        'vanpools[0], pickup: found {"x": 1, "y": 2}; expected {"lat": 37.59, "lng": -122.02} '
        "(or pickup_lat and pickup_lng columns)"
    ]


@pytest.mark.parametrize(
    ("column", "hint"),
    [
        ("emial", "; did you mean email?"),
        ("fist_name", "; did you mean first_name?"),
        ("home_zipcode", "; did you mean home_zip?"),
        ("level", ""),  # an HR grade column, not a misspelt "leave"
        ("manager", ""),
    ],
)
def test_a_did_you_mean_hint_is_given_for_a_slip_of_the_keys_only(column, hint):
    assert unknown_column(column, "employees") == "unknown column" + hint
