"""A mapping that would lose data is refused, through the import_roster command.

Issue 34, points 13-15: another tool's raw export imported through a mapping
written from docs/roster-format.md. A mistyped path gave no value on any row
and the import went through without it; a seat object with a key of its own
was read as a whole employee record; keys that meant nothing where they stood,
contradictory shift facts and a PTO list in commas were accepted or explained
badly. Each bad input must fail the command, name the place and what would
have worked, and write nothing.
"""

import copy
import datetime as dt
import io
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from vanpools.importing import ImportFailed, import_data, read_mapping
from vanpools.models import Employee, Leave, Rider, Shift, Vanpool
from vanpools.tests.files import write_csv, write_json

pytestmark = pytest.mark.django_db

# The other tool's export: its own keys, nested points, seat objects with their own ID.
EXPORT = {
    "exported": "2026-11-20",
    "patterns": [{"code": "DAY", "label": "Day", "days": "Mon-Fri", "hours": "07:00-16:00"}],
    "vans": [
        {
            "van_no": "VP-201",
            "label": "Tracy Sunrise",
            "site": "Harbor Medical Center",
            "pickup": {"lat": 37.7397, "lng": -121.4252},
            "participants": [
                {"participant_id": "P-1001", "employee_id": "EMP-1001", "enrolled": "03/02/2026"},
                {"participant_id": "P-1002", "employee_id": "EMP-1002", "enrolled": "05/18/2026"},
            ],
        }
    ],
    "staff": [
        {
            "emp": "EMP-1001",
            "name": "Okafor, Chinwe",
            "email": "c.okafor@example.com",
            "job": {"title": "Radiology Technologist"},
            "zip": "95376",
            "time_off": "2026-12-01..2026-12-03; 2026-12-24",
            "pattern": "DAY",
        },
        {
            "emp": "EMP-1002",
            "name": "Bo Chen",
            "email": "bo.chen@example.com",
            "job": {"title": "Nurse"},
            "zip": "95377",
            "pattern": "DAY",
        },
    ],
}

RIDERS = 'riders = { from = "participants", id = "employee_id", joined = "enrolled", '
MAPPING = f"""
[shifts]
rows = "patterns"
[shifts.columns]
shift_id = "code"
name = "label"
schedule = {{ days = "days", hours = "hours" }}

[vanpools]
rows = "vans"
[vanpools.columns]
vanpool_id = "van_no"
name = "label"
work_site = "site"
pickup_lat = "pickup.lat"
pickup_lng = "pickup.lng"
{RIDERS}date_format = "%m/%d/%Y" }}

[employees]
rows = "staff"
[employees.columns]
employee_id = "emp"
first_name = {{ from = "name", take = "first_name" }}
last_name = {{ from = "name", take = "last_name" }}
email = "email"
title = "job.title"
work_site = {{ value = "Harbor Medical Center" }}
home_zip = "zip"
shift_id = "pattern"
pto = "time_off"
"""


def write(tmp_path: Path, text: str, name: str = "mapping.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run(*args: object) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_roster", *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def refused(*args: object) -> tuple[str, list[str]]:
    """The command's failure message and its error lines; nothing may have been written."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError) as failed:
        call_command("import_roster", *map(str, args), stdout=out, stderr=err)
    assert written() == (0, 0, 0, 0, 0)
    return str(failed.value), err.getvalue().splitlines()


def written() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in (Shift, Vanpool, Employee, Rider, Leave))


def mapping_with(old: str, new: str) -> str:
    assert old in MAPPING
    return MAPPING.replace(old, new)


# The export as mapped imports whole ------------------------------------------------------


def test_it_imports_the_raw_export_whole_seat_objects_with_their_own_keys_included(tmp_path):
    out, err = run(write_json(tmp_path, EXPORT), "--mapping", write(tmp_path, MAPPING))
    assert err == ""
    assert "warning: vanpools: ignored 1 key of rider objects the mapping does not use: " in out
    assert "participant_id" in out
    seats = {
        rider.employee.employee_id: (rider.vanpool.vanpool_id, rider.joined)
        for rider in Rider.objects.select_related("employee", "vanpool")
    }
    # date_format on the rider list reads each seat's start date in the export's format.
    assert seats == {
        "EMP-1001": ("VP-201", dt.date(2026, 3, 2)),
        "EMP-1002": ("VP-201", dt.date(2026, 5, 18)),
    }
    okafor = Employee.objects.get(employee_id="EMP-1001")
    assert okafor.title == "Radiology Technologist"
    assert sorted((leave.start_date, leave.end_date) for leave in okafor.leaves.all()) == [
        (dt.date(2026, 12, 1), dt.date(2026, 12, 3)),
        (dt.date(2026, 12, 24), dt.date(2026, 12, 24)),
    ]
    van = Vanpool.objects.get()
    assert (van.pickup_lat, van.pickup_lng) == (37.7397, -121.4252)


# 13: a mapped path that matches nothing in any row -----------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        (
            'pto = "time_off"',
            'pto = "time_of"',
            "staff, time_of: the mapping reads this path for pto, but no row of staff has it; "
            "did you mean 'time_off'?",
        ),
        (
            'title = "job.title"',
            'title = "job.titel"',
            "staff, job.titel: the mapping reads this path for title, but no row of staff has it; "
            "did you mean 'job.title'?",
        ),
        (
            'pickup_lat = "pickup.lat"',
            'pickup_lat = "pickup.latitude"',
            "vans, pickup.latitude: the mapping reads this path for pickup_lat, but no row of vans "
            "has it; did you mean 'pickup.lat'?",
        ),
        (
            'from = "participants"',
            'from = "participant"',
            "vans, participant: the mapping reads this path for riders, but no row of vans has it; "
            "did you mean 'participants'?",
        ),
        (
            'joined = "enrolled"',
            'joined = "enroled"',
            "vans, riders.joined = 'enroled': no rider object of vans has this key; "
            "did you mean 'enrolled'?",
        ),
        (
            'hours = "hours"',
            'hours = "hrs"',
            "patterns, hrs: the mapping reads this path for schedule, but no row of patterns has "
            "it; did you mean 'hours'?",
        ),
    ],
    ids=["pto", "title", "coordinates", "rider-list", "rider-joined", "schedule-part"],
)
def test_fault_13_a_mapped_path_no_row_holds_fails_the_command_naming_it(tmp_path, old, new, error):
    message, errors = refused(
        write_json(tmp_path, EXPORT), "--mapping", write(tmp_path, mapping_with(old, new))
    )
    # One error for the path, not a "value is required" (or a missing schedule) per row.
    assert errors == [error]
    assert message == "1 error; nothing was imported."


def test_fault_13_a_mistyped_rider_id_key_is_named_besides_each_rider_it_leaves_unread(tmp_path):
    mapping = mapping_with('id = "employee_id"', 'id = "employe_id"')
    _, errors = refused(write_json(tmp_path, EXPORT), "--mapping", write(tmp_path, mapping))
    assert (
        "vans, riders.id = 'employe_id': no rider object of vans has this key; "
        "did you mean 'employee_id'?"
    ) in errors


def test_fault_13_a_path_some_rows_hold_is_an_optional_value_not_an_error(tmp_path):
    # EMP-1002 has no time_off: a blank, as a blank CSV cell is.
    run(write_json(tmp_path, EXPORT), "--mapping", write(tmp_path, MAPPING))
    assert not Leave.objects.filter(employee__employee_id="EMP-1002").exists()


def test_fault_13_a_mapped_csv_column_the_header_lacks_says_which_it_has(tmp_path):
    path = write_csv(
        tmp_path,
        [
            {
                "ID": "EMP-1",
                "First": "Ana",
                "Last": "Reyes",
                "Mail": "ana@example.com",
                "Zip": "94538",
                "Job Title": "Driver",
            }
        ],
    )
    mapping = write(
        tmp_path,
        '[employees.columns]\nemployee_id = "ID"\nfirst_name = "First"\nlast_name = "Last"\n'
        'email = "Mail"\nhome_zip = "Zip"\nwork_site = { value = "Fremont Campus" }\n'
        'title = "Job Titel"\n',
    )
    _, errors = refused(path, "--mapping", mapping)
    assert errors == [
        "line 1, Job Titel: the mapping reads this column for title, but the file has no such "
        "column; did you mean 'Job Title'?"
    ]


# 14: seat objects carrying keys of their own -------------------------------------------------


def test_fault_14_seat_objects_with_their_own_keys_seat_employees_already_stored(tmp_path):
    run(write_json(tmp_path, EXPORT), "--mapping", write(tmp_path, MAPPING))
    Rider.objects.all().delete()
    vans_only = {"vans": copy.deepcopy(EXPORT["vans"])}
    vans_only["vans"][0]["participants"][1]["enrolled"] = "06/01/2026"
    vans_mapping = "[vanpools]" + MAPPING.split("[vanpools]")[1].split("[employees]")[0]
    mapping = write(tmp_path, vans_mapping, "vans.toml")
    out, err = run(write_json(tmp_path, vans_only, "vans.json"), "--mapping", mapping)
    assert err == ""
    assert "ignored 1 key of rider objects the mapping does not use: participant_id" in out
    assert Rider.objects.get(employee__employee_id="EMP-1002").joined == dt.date(2026, 6, 1)
    assert Rider.objects.filter(vanpool__vanpool_id="VP-201").count() == 2
    assert Employee.objects.get(employee_id="EMP-1002").title == "Nurse"  # not overwritten


def test_fault_14_a_seat_object_read_as_a_record_says_why_once(tmp_path):
    export = copy.deepcopy(EXPORT)
    # email is a key the [employees] mapping reads: this object is a (partial) record.
    export["vans"][0]["participants"].append({"employee_id": "EMP-1003", "email": "x@example.com"})
    message, errors = refused(write_json(tmp_path, export), "--mapping", write(tmp_path, MAPPING))
    assert errors == [
        "vans[0].riders[2]: read as the employee's whole record because it holds email, but it "
        "has no first_name, last_name, home_zip: give all of them, or only the ID and joined to "
        "seat an employee already stored"
    ]
    assert message == "1 error; nothing was imported."


def test_fault_14_without_a_mapping_a_seat_objects_unknown_key_is_an_error_naming_it(tmp_path):
    data = {
        "vanpools": [
            {
                "vanpool_id": "VP-1",
                "name": "North",
                "work_site": "Fremont Campus",
                "riders": [{"employee_id": "EMP-1", "participant_id": "P-1"}],
            }
        ]
    }
    _, errors = refused(write_json(tmp_path, data))
    assert errors[0] == (
        "vanpools[0].riders[0], participant_id: unknown key in a rider object; a seat gives "
        "employee_id and joined (a whole record, the employee's columns); a mapping file "
        "(--mapping) can ignore it"
    )


# 15: keys that mean nothing where they stand, contradictions, what would have worked ---------


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        (
            'joined = "enrolled", ',
            'joined = "enrolled", take = "first_name", ',
            "vanpools.columns.riders.take: not a key of a rider list's recipe (it takes from, "
            "id, joined, format for the IDs and date_format for the joined dates)",
        ),
        (
            'pto = "time_off"',
            'pto = { from = "time_off", date_fromat = "%Y-%m-%d" }',
            "employees.columns.pto.date_fromat: not a mapping key; did you mean date_format?",
        ),
        (
            'title = "job.title"',
            'title = { from = "job.title", date_format = "%Y-%m-%d" }',
            "employees.columns.title.date_format: title holds no dates (date_format reads "
            "joined, pto and leave)",
        ),
        (
            'work_site = { value = "Harbor Medical Center" }',
            'work_site = { value = "Harbor Medical Center", format = "{} West" }',
            "employees.columns.work_site.format: transforms a value read with from, not value",
        ),
        (
            'email = "email"',
            'email = { from = "email", sep = "; " }',
            'employees.columns.email.sep: joins a list of columns, from = ["A", "B"]; this from '
            "is one column",
        ),
        (
            'email = "email"',
            'email = { from = "email", id = "address" }',
            "employees.columns.email.id: only a rider list (vanpools.columns.riders) has id and "
            "joined, naming keys in its objects; email is read with from",
        ),
        (
            'name = "label"\nschedule',
            'name = { days = "days", hours = "hours" }\nschedule',
            "shifts.columns.name.days: builds a schedule, and name is not the schedule column",
        ),
    ],
    ids=[
        "take-on-riders",
        "mistyped-key",
        "date-format-on-text",
        "transform-on-value",
        "sep-on-one-column",
        "id-outside-riders",
        "schedule-parts-on-name",
    ],
)
def test_fault_15_a_recipe_key_that_would_be_ignored_fails_the_command(tmp_path, old, new, error):
    mapping = write(tmp_path, mapping_with(old, new))
    message, errors = refused(write_json(tmp_path, EXPORT), "--mapping", mapping)
    assert errors == [f"{mapping}: {error}"]
    assert message == "1 error; nothing was imported."


def test_fault_15_overnight_on_a_day_shift_is_refused_saying_what_would_work(tmp_path):
    export = copy.deepcopy(EXPORT)
    export["patterns"][0]["overnight"] = True
    mapping = write(
        tmp_path,
        MAPPING.replace('name = "label"\n', 'name = "label"\novernight = "overnight"\n', 1),
    )
    _, errors = refused(write_json(tmp_path, export), "--mapping", mapping)
    assert errors == [
        "patterns[0], overnight: No day of the schedule ends after midnight, so the shift is "
        "not overnight: untick overnight, or give hours that end the next day (e.g. "
        "22:00-06:30) (got true)"
    ]


def test_fault_15_overnight_on_a_rotation_of_day_hours_is_refused_by_the_model():
    rotation = {"cycle_start": "2026-01-05", "days": [{"start": "06:00", "end": "18:00"}, None]}
    shift = Shift(shift_id="CREW-A", name="Crew A", rotation=rotation, overnight=True)
    with pytest.raises(ValidationError) as failed:
        shift.full_clean()
    assert list(failed.value.message_dict) == ["overnight"]


def test_fault_15_overnight_stays_accepted_where_a_day_crosses_midnight_or_hours_are_text():
    Shift(
        shift_id="N",
        name="Night",
        schedule=[{"day": "Sun", "start": "22:00", "end": "06:30"}],
        overnight=True,
    ).full_clean()
    Shift(shift_id="T", name="Text", schedule_text="Sun-Thu 11pm-7am", overnight=True).full_clean()


def test_fault_15_a_pto_list_in_commas_is_told_the_separator(tmp_path):
    export = copy.deepcopy(EXPORT)
    export["staff"][0]["time_off"] = "2026-12-01, 2026-12-24"
    _, errors = refused(write_json(tmp_path, export), "--mapping", write(tmp_path, MAPPING))
    assert errors == [
        "staff[0], pto (from time_off): '2026-12-01, 2026-12-24' is not a date (YYYY-MM-DD); "
        "dates are separated by ';', as in '2026-12-01; 2026-12-24' (a range is written "
        "2026-12-01..2026-12-24)"
    ]


def test_fault_15_a_pto_list_in_commas_with_a_date_format_is_told_the_separator(tmp_path):
    export = copy.deepcopy(EXPORT)
    export["staff"][0]["time_off"] = "12/01/2026, 12/24/2026"
    mapping = mapping_with(
        'pto = "time_off"', 'pto = { from = "time_off", date_format = "%m/%d/%Y" }'
    )
    _, errors = refused(write_json(tmp_path, export), "--mapping", write(tmp_path, mapping))
    assert errors == [
        "staff[0], pto (from time_off): '12/01/2026, 12/24/2026' does not match the date "
        "format %m/%d/%Y; dates are separated by ';', as in '12/01/2026; 12/24/2026'"
    ]


def test_fault_13_a_path_only_whole_rider_records_could_hold_is_checked_against_them(tmp_path):
    # The employees come only as whole records inside each van: no rows of their own.
    export = {
        "vans": [
            {
                "van_no": "VP-7",
                "label": "North",
                "site": "Fremont Campus",
                "members": [
                    {
                        "emp": "EMP-7",
                        "name": "Reyes, Ana",
                        "mail": "ana@example.com",
                        "zip": "94538",
                    }
                ],
            }
        ]
    }
    mapping = """
[vanpools]
rows = "vans"
[vanpools.columns]
vanpool_id = "van_no"
name = "label"
work_site = "site"
riders = { from = "members", id = "emp" }

[employees.columns]
employee_id = "emp"
first_name = { from = "name", take = "first_name" }
last_name = { from = "name", take = "last_name" }
email = "mail"
home_zip = "zip"
work_site = { value = "Fremont Campus" }
title = "job_title"
"""
    path = write_json(tmp_path, export)
    _, errors = refused(path, "--mapping", write(tmp_path, mapping))
    assert errors == [
        "vans[*].riders, job_title: the mapping reads this path for title, but no row of "
        "vans[*].riders has it; if the export leaves out keys with no value, remove title from "
        "the mapping for this file"
    ]
    run(path, "--mapping", write(tmp_path, mapping.replace('title = "job_title"\n', "")))
    assert Rider.objects.get().employee.employee_id == "EMP-7"


def test_checking_the_paths_leaves_the_callers_rows_as_they_were(tmp_path):
    data = {
        "vanpools": [
            {
                "vanpool_id": "VP-1",
                "name": "North",
                "work_site": "Fremont Campus",
                "riders": [
                    {
                        "employee_id": "EMP-2",
                        "first_name": "Bo",
                        "last_name": "Chen",
                        "email": "bo@example.com",
                        "work_site": "Fremont Campus",
                        "home_zip": "94538",
                    }
                ],
            }
        ],
        "employees": [
            {
                "employee_id": "EMP-1",
                "first_name": "Ana",
                "last_name": "Reyes",
                "email": "ana@example.com",
                "work_site": "Fremont Campus",
                "home_zip": "94538",
            }
        ],
    }
    given = copy.deepcopy(data)
    mapping = read_mapping(write(tmp_path, '[employees.columns]\ntitle = "title"\n'))
    with pytest.raises(ImportFailed) as failed:
        import_data(data, mapping=mapping)
    assert [error.field for error in failed.value.errors] == ["title"]
    assert data == given
