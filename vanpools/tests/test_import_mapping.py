"""Roster import through a mapping file: the example exports, rider lists, dry-run previews,
warnings and the import_roster command."""

import copy
import csv
import datetime as dt
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import EmployeeFactory, RiderFactory, ShiftFactory, VanpoolFactory
from vanpools.importing import ImportFailed, import_data, import_file
from vanpools.models import Employee, Rider, Shift, Vanpool
from vanpools.tests.files import write_csv, write_json

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
HR_CSV, HR_MAPPING = EXAMPLES / "hr-export.csv", EXAMPLES / "hr-mapping.toml"
VENDOR_JSON, VENDOR_MAPPING = EXAMPLES / "vendor-program.json", EXAMPLES / "vendor-mapping.yaml"
HR_IGNORED = (
    "employees: ignored 3 columns the mapping does not use: Cost Center, Job Level, Manager Name"
)
VENDOR_WARNINGS = [
    "ignored 3 top-level keys the mapping reads no rows from: format, exported_at, organisation",
    "1 rider seated on a vanpool that is not active (the audit skips them): HR-1518 on VP-303 "
    "(suspended)",
    "1 active employee with no seat: HR-1620",
]
WRITES = ("INSERT", "UPDATE", "DELETE")
TODAY = dt.date(2026, 11, 23)  # the root conftest freezes time


def employee(employee_id: str, **cells: object) -> dict[str, object]:
    return {
        "employee_id": employee_id,
        "first_name": "Ana",
        "last_name": "Diaz",
        "email": f"{employee_id.lower()}@example.com",
        "work_site": "Fremont Campus",
        "home_zip": "94587",
    } | cells


def vanpool(vanpool_id: str, **cells: object) -> dict[str, object]:
    return {"vanpool_id": vanpool_id, "name": "Union City", "work_site": "Fremont Campus"} | cells


def write_mapping(tmp_path: Path, text: str, name: str = "mapping.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def hr_rows() -> list[dict[str, str]]:
    with HR_CSV.open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def vendor_data() -> dict:
    return json.loads(VENDOR_JSON.read_text(encoding="utf-8"))


def failure(func) -> ImportFailed:
    with pytest.raises(ImportFailed) as failed:
        func()
    return failed.value


def imported(path: Path, **options: object):
    """import_file, failing the test with the import's own errors rather than a traceback."""
    try:
        return import_file(path, **options)
    except ImportFailed as failed:
        pytest.fail("the import failed: " + " | ".join(str(error) for error in failed.errors))


def error_lines(path: Path, **options: object) -> list[str]:
    return [str(error) for error in failure(lambda: import_file(path, **options)).errors]


def counts(result) -> dict[str, tuple[int, int, int]]:
    return {
        kind: tuple(result.counts[kind][outcome] for outcome in ("created", "updated", "unchanged"))
        for kind in result.kinds
    }


def writes_during(func) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        func()
    return [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().startswith(WRITES)]


def seats() -> dict[str, tuple[str, dt.date]]:
    active = Rider.objects.filter(status="active").select_related("employee", "vanpool")
    return {r.employee.employee_id: (r.vanpool.vanpool_id, r.joined) for r in active}


@pytest.fixture
def hr_program():
    """What the HR export refers to: its shift codes and vanpool (and one to move to)."""
    import_data(
        {
            "shifts": [
                {"shift_id": "DAY", "name": "Day", "schedule": "Mon-Fri 07:00-15:30"},
                {"shift_id": "4X10", "name": "4x10", "schedule": "Mon-Thu 06:00-16:30"},
            ],
            "vanpools": [vanpool("VP-101"), vanpool("VP-102", name="Newark")],
        }
    )


# The example exports ---------------------------------------------------------------------


def test_the_vendor_example_imports_into_an_empty_database():
    result = import_file(VENDOR_JSON, mapping=VENDOR_MAPPING)
    assert counts(result) == {
        "shifts": (3, 0, 0),
        "vanpools": (3, 0, 0),
        "employees": (7, 0, 0),
    }
    assert result.warnings == VENDOR_WARNINGS
    chinwe = Employee.objects.get(employee_id="HR-1042")
    assert (chinwe.first_name, chinwe.last_name, chinwe.home_zip) == (
        "Chinwe",
        "Okafor",
        "95376-2214",
    )
    assert (chinwe.shift.shift_id, chinwe.time_type, chinwe.title) == (
        "D1",
        "full_time",
        "Radiology Technologist",
    )
    marisol = Employee.objects.get(employee_id="HR-1230")
    assert (marisol.first_name, marisol.last_name, marisol.status) == (
        "Marisol Vega",
        "Ortiz",
        "on_leave",
    )
    assert seats() == {
        "HR-1042": ("VP-301", dt.date(2026, 3, 2)),
        "HR-1107": ("VP-301", dt.date(2026, 5, 18)),
        "HR-1230": ("VP-301", TODAY),
        "HR-1311": ("VP-302", TODAY),
        "HR-1402": ("VP-302", dt.date(2025, 11, 3)),
        "HR-1518": ("VP-303", TODAY),
    }
    route = Vanpool.objects.get(vanpool_id="VP-302")
    assert (route.work_site, route.pickup_zip, route.capacity, route.status) == (
        "Harbor Medical Center",
        "94509",
        8,
        "active",
    )
    assert (route.pickup_lat, route.pickup_lng, route.work_site_lat) == (37.9962, -121.782, 37.7955)
    assert route.schedule[0] == {"day": "Mon", "start": "15:00", "end": "23:30"}
    assert Vanpool.objects.get(vanpool_id="VP-303").status == "suspended"
    day = Shift.objects.get(shift_id="D1")
    assert [span["day"] for span in day.schedule] == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    assert day.schedule[0] == {"day": "Mon", "start": "07:00", "end": "15:30"}
    night = Shift.objects.get(shift_id="N1")
    assert (night.schedule, night.schedule_text) == ([], "Sun-Thu 11pm-7:30am")


def test_the_hr_example_imports_once_its_shifts_and_vanpools_exist(hr_program):
    result = import_file(HR_CSV, mapping=HR_MAPPING)
    assert counts(result) == {"employees": (3, 0, 0)}
    assert result.warnings == [HR_IGNORED]
    rosa = Employee.objects.get(employee_id="E-40117")
    assert (rosa.first_name, rosa.last_name, rosa.title, rosa.email) == (
        "Rosa",
        "Alvarez",
        "Line Lead",
        "rosa.alvarez@example.com",
    )
    assert rosa.home_address == "41 Paseo Padre Pkwy, Fremont, CA"
    assert (rosa.shift.shift_id, rosa.status) == ("DAY", "active")
    kwame = Employee.objects.get(employee_id="E-40233")
    assert (kwame.first_name, kwame.last_name, kwame.home_zip) == ("Kwame", "Mensah", "94560-1123")
    abena = Employee.objects.get(employee_id="E-40358")
    assert (abena.first_name, abena.last_name, abena.status) == ("Abena", "Osei", "on_leave")
    assert (abena.home_address, abena.home_zip, abena.home_zip_as_given) == ("", "02139", "2139")
    assert seats() == {
        "E-40117": ("VP-101", dt.date(2025, 8, 4)),
        "E-40233": ("VP-101", dt.date(2026, 1, 12)),
    }


def test_the_hr_example_without_its_shifts_and_vanpools_names_each_missing_one():
    assert error_lines(HR_CSV, mapping=HR_MAPPING) == [
        "line 2, shift_id (from Shift Code): no shift 'DAY' in this file or already stored",
        "line 2, vanpool_id (from Vanpool): no vanpool 'VP-101' in this file or already stored",
        "line 3, shift_id (from Shift Code): no shift '4X10' in this file or already stored",
        "line 3, vanpool_id (from Vanpool): no vanpool 'VP-101' in this file or already stored",
        "line 4, shift_id (from Shift Code): no shift 'DAY' in this file or already stored",
    ]
    assert not Employee.objects.exists()


@pytest.mark.parametrize(
    ("export", "mapping", "expected"),
    [
        (HR_CSV, HR_MAPPING, {"employees": (0, 0, 3)}),
        (
            VENDOR_JSON,
            VENDOR_MAPPING,
            {"shifts": (0, 0, 3), "vanpools": (0, 0, 3), "employees": (0, 0, 7)},
        ),
    ],
    ids=["hr", "vendor"],
)
def test_importing_an_example_again_changes_and_writes_nothing(
    hr_program, export, mapping, expected
):
    import_file(export, mapping=mapping)
    stamps = dict(Employee.objects.values_list("employee_id", "updated_at"))
    results = []
    assert writes_during(lambda: results.append(import_file(export, mapping=mapping))) == []
    assert counts(results[0]) == expected
    assert results[0].differences == {"shifts": [], "vanpools": [], "employees": []}
    assert dict(Employee.objects.values_list("employee_id", "updated_at")) == stamps


# Columns the mapping names or leaves out -------------------------------------------------

SMALL_MAPPING = """
[employees.columns]
employee_id = "Employee ID"
first_name = { from = "Name", take = "first_name" }
last_name = { from = "Name", take = "last_name" }
email = "Work Email"
work_site = { value = "Fremont Campus" }
"""


def small_export(tmp_path: Path, *rows: dict[str, str]) -> Path:
    base = [
        {"Employee ID": "E-1", "Name": "Reyes, Ana", "Work Email": "ana@example.com"},
        {"Employee ID": "E-2", "Name": "Bo Chen", "Work Email": "bo@example.com"},
    ]
    return write_csv(tmp_path, [row | extra for row, extra in zip(base, rows, strict=False)])


def test_a_mapped_optional_column_the_file_lacks_is_one_error_on_line_1(tmp_path):
    mapping = write_mapping(
        tmp_path, SMALL_MAPPING + 'home_zip = "home_zip"\ntitle = "Job Title"\n'
    )
    path = small_export(tmp_path, {"home_zip": "94538"}, {"home_zip": "94587"})
    assert error_lines(path, mapping=mapping) == [
        "line 1, Job Title: the mapping reads this column for title, "
        "but the file has no such column"
    ]


def test_a_mapped_required_column_the_file_lacks_is_one_error_on_line_1(tmp_path):
    mapping = write_mapping(tmp_path, SMALL_MAPPING + 'home_zip = "Zip Code"\n')
    path = small_export(tmp_path, {"Postal": "94538"}, {"Postal": "94587"})
    # The header error says it all; rows must not each add "a value is required".
    assert error_lines(path, mapping=mapping) == [
        "line 1, Zip Code: the mapping reads this column for home_zip, "
        "but the file has no such column"
    ]


def test_a_required_column_neither_mapped_nor_in_the_file_is_one_error_on_line_1(tmp_path):
    mapping = write_mapping(tmp_path, SMALL_MAPPING)
    path = small_export(tmp_path, {"Postal": "94538"}, {"Postal": "94587"})
    assert error_lines(path, mapping=mapping) == [
        "line 1, home_zip: required column is missing (map it in the mapping's [employees.columns])"
    ]


def test_a_mapped_csv_column_whose_name_holds_a_dot_is_read(tmp_path):
    # lookup() reads such a key whole, and a JSON row with it imports; a CSV header must too.
    mapping = write_mapping(tmp_path, SMALL_MAPPING + 'home_zip = "Home.Zip"\n')
    path = small_export(tmp_path, {"Home.Zip": "94538"}, {"Home.Zip": "94587"})
    result = imported(path, mapping=mapping)
    assert counts(result) == {"employees": (2, 0, 0)}
    assert Employee.objects.get(employee_id="E-1").home_zip == "94538"


def test_a_mapped_json_key_whose_name_holds_a_dot_is_read(tmp_path):
    mapping = write_mapping(tmp_path, SMALL_MAPPING + 'home_zip = "Home.Zip"\n')
    rows = [
        {
            "Employee ID": "E-1",
            "Name": "Reyes, Ana",
            "Work Email": "a@example.com",
            "Home.Zip": "94538",
        }
    ]
    assert counts(import_file(write_json(tmp_path, rows), mapping=mapping)) == {
        "employees": (1, 0, 0)
    }
    assert Employee.objects.get().home_zip == "94538"


def test_a_transform_error_names_the_line_and_the_column_with_its_source(hr_program, tmp_path):
    rows = hr_rows()
    rows[1]["Vanpool Start Date"] = "2026-01-12"
    assert error_lines(write_csv(tmp_path, rows), mapping=HR_MAPPING) == [
        "line 3, joined (from Vanpool Start Date): "
        "'2026-01-12' does not match the date format %m/%d/%Y"
    ]
    assert not Employee.objects.exists()


def test_a_transform_error_in_a_json_row_names_its_index_and_path(tmp_path):
    data = vendor_data()
    data["people"][2]["person"]["display_name"] = "Marisol"
    errors = error_lines(write_json(tmp_path, data), mapping=VENDOR_MAPPING)
    assert errors[0] == (
        "people[2], first_name (from person.display_name): cannot split 'Marisol' into first "
        "and last name (expected 'First Last' or 'Last, First')"
    )


def test_a_name_that_cannot_be_split_is_reported_once_per_column(tmp_path):
    data = vendor_data()
    data["people"][2]["person"]["display_name"] = "Marisol"
    # The split's own message says what is wrong: no second "a value is required" per column.
    assert error_lines(write_json(tmp_path, data), mapping=VENDOR_MAPPING) == [
        f"people[2], {column} (from person.display_name): cannot split 'Marisol' into first "
        "and last name (expected 'First Last' or 'Last, First')"
        for column in ("first_name", "last_name")
    ]


def test_an_untranslated_value_is_refused_by_the_columns_own_check(tmp_path):
    data = vendor_data()
    data["people"][0]["hr_status"] = "Retired"
    assert error_lines(write_json(tmp_path, data), mapping=VENDOR_MAPPING) == [
        "people[0], status (from hr_status): 'Retired' is not one of active, on_leave, terminated"
    ]


def test_a_rows_path_not_in_the_file_names_the_kind_and_the_path(tmp_path):
    data = vendor_data()
    del data["routes"]
    assert error_lines(write_json(tmp_path, data), mapping=VENDOR_MAPPING) == [
        f"{tmp_path / 'roster.json'}, vanpools: the mapping's rows = 'routes' is not in the file"
    ]


# Extra columns ----------------------------------------------------------------------------


def test_without_a_mapping_an_extra_json_key_is_one_error_for_every_row(tmp_path):
    rows = [employee(f"EMP-{n}", level="T3") for n in range(3)]
    errors = error_lines(write_json(tmp_path, rows))
    assert errors == [
        "employees[0], level: unknown column (in 3 rows); "
        "a mapping file (--mapping) can map it to a roster column or ignore it"
    ]
    assert "did you mean" not in errors[0]


def test_with_a_mapping_extra_columns_are_one_warning_for_the_kind(tmp_path):
    rows = [employee(f"EMP-{n}", level="T3", Manager="Lee") for n in range(3)]
    mapping = write_mapping(tmp_path, '[employees.columns]\ntitle = { value = "Nurse" }\n')
    result = import_file(write_json(tmp_path, rows), mapping=mapping)
    assert counts(result) == {"employees": (3, 0, 0)}
    assert result.warnings == [
        "employees: ignored 2 columns the mapping does not use: level, Manager",
        "3 active employees with no seat: EMP-0, EMP-1, EMP-2",
    ]
    assert set(Employee.objects.values_list("title", flat=True)) == {"Nurse"}


# A vanpool's rider list -------------------------------------------------------------------


def test_a_rider_list_seats_employees_in_the_file_and_already_stored():
    stored = EmployeeFactory(employee_id="EMP-9", first_name="Kept", home_zip="94538")
    result = import_data(
        {
            "vanpools": [
                vanpool("VP-1", riders=[{"employee_id": "EMP-1", "joined": "2026-01-05"}, "EMP-9"])
            ],
            "employees": [employee("EMP-1")],
        }
    )
    assert counts(result) == {"vanpools": (1, 0, 0), "employees": (1, 1, 0)}
    assert seats() == {"EMP-1": ("VP-1", dt.date(2026, 1, 5)), "EMP-9": ("VP-1", TODAY)}
    assert result.differences["employees"] == ["EMP-1: new; seat VP-1", "EMP-9: seat VP-1"]
    stored.refresh_from_db()
    assert (stored.first_name, stored.home_zip) == ("Kept", "94538")  # only the seat changed
    assert result.warnings == []


def test_a_rider_list_moves_a_stored_seat():
    RiderFactory(employee=EmployeeFactory(employee_id="EMP-9"), vanpool__vanpool_id="VP-1")
    result = import_data([vanpool("VP-2", riders=["EMP-9"])])
    assert result.differences["employees"] == ["EMP-9: seat VP-1 → VP-2"]
    assert seats() == {"EMP-9": ("VP-2", TODAY)}


def test_a_rider_list_refuses_an_employee_neither_in_the_file_nor_stored():
    failed = failure(
        lambda: import_data(
            {
                "vanpools": [vanpool("VP-1", riders=["EMP-1", "EMP-404"])],
                "employees": [employee("EMP-1")],
            }
        )
    )
    assert [str(error) for error in failed.errors] == [
        "vanpools[0].riders[1], employee_id: no employee 'EMP-404' in this file or already stored"
    ]
    assert not Vanpool.objects.exists()
    assert not Employee.objects.exists()


def test_a_mapped_rider_list_names_the_row_and_rider_of_an_unknown_member(tmp_path):
    data = vendor_data()
    data["routes"][1]["members"].append({"member_id": "HR-9999"})
    assert error_lines(write_json(tmp_path, data), mapping=VENDOR_MAPPING) == [
        "routes[1].riders[2], employee_id: no employee 'HR-9999' in this file or already stored"
    ]


def test_a_mapped_rider_id_at_a_dotted_path_seats_a_stored_employee(tmp_path):
    EmployeeFactory(employee_id="EMP-9")
    mapping = write_mapping(
        tmp_path,
        "vanpools:\n  columns:\n    riders: {from: members, id: person.number}\n",
        "mapping.yaml",
    )
    data = {"vanpools": [vanpool("VP-1", members=[{"person": {"number": "EMP-9"}}])]}
    result = imported(write_json(tmp_path, data), mapping=mapping)
    assert counts(result) == {"vanpools": (1, 0, 0), "employees": (0, 1, 0)}
    assert seats() == {"EMP-9": ("VP-1", TODAY)}


def test_a_rider_list_refuses_an_employee_on_two_vanpools():
    EmployeeFactory(employee_id="EMP-9")
    failed = failure(
        lambda: import_data(
            {"vanpools": [vanpool("VP-1", riders=["EMP-9"]), vanpool("VP-2", riders=["EMP-9"])]}
        )
    )
    assert [str(error) for error in failed.errors] == [
        "vanpools[1], riders[0]: EMP-9 is seated on VP-1 by vanpools[0].riders[0]"
    ]


def test_a_rider_list_refuses_an_employee_whose_row_gives_another_seat():
    failed = failure(
        lambda: import_data(
            {
                "vanpools": [vanpool("VP-1", riders=["EMP-1"]), vanpool("VP-2")],
                "employees": [employee("EMP-1", vanpool_id="VP-2")],
            }
        )
    )
    assert [str(error) for error in failed.errors] == [
        "vanpools[0], riders[0]: EMP-1 is seated on VP-2 by employees[0]"
    ]


def test_a_rider_list_of_the_wrong_shape_shows_the_expected_one():
    failed = failure(lambda: import_data([vanpool("VP-1", riders="EMP-1, EMP-2")]))
    assert [str(error) for error in failed.errors] == [
        "vanpools[0], riders: found 'EMP-1, EMP-2'; expected "
        '["EMP-1003", …] or [{"employee_id": "EMP-1003", "joined": "2026-09-01"}, …]'
    ]


# Dry runs ---------------------------------------------------------------------------------


def moved_hr_export(tmp_path: Path) -> Path:
    """The HR export a month later: Rosa moved and changed van, Abena's ZIP mistyped, one hire."""
    rows = hr_rows()
    rows[0] |= {"Home Postal Code": "94536", "Vanpool": "VP-102"}
    rows[2]["Home Postal Code"] = "9453x"
    rows.append(
        rows[1]
        | {"Employee ID": "E-40999", "Legal Name": "Lin, Mei", "Work Email": "mei.lin@example.com"}
    )
    return write_csv(tmp_path, rows)


def test_a_dry_run_with_bad_rows_previews_the_good_ones(hr_program, tmp_path):
    import_file(HR_CSV, mapping=HR_MAPPING)
    failed = failure(
        lambda: import_file(moved_hr_export(tmp_path), mapping=HR_MAPPING, dry_run=True)
    )
    assert [str(error) for error in failed.errors] == [
        "line 4, home_zip (from Home Postal Code): "
        "'9453x' is not a US ZIP code (5 digits, or ZIP+4 like 02139-4307)"
    ]
    preview = failed.preview
    assert preview.dry_run
    assert counts(preview) == {"employees": (1, 1, 1)}
    assert preview.refused == {"shifts": 0, "vanpools": 0, "employees": 1}
    assert preview.differences["employees"] == [
        "E-40117: home_zip 94538 → 94536; seat VP-101 → VP-102",
        "E-40999: new; seat VP-101",
    ]
    assert preview.summary_lines() == [
        "            created  updated  unchanged  refused",
        "employees         1        1          1        1",
        "employees, first changes:",
        "  E-40117: home_zip 94538 → 94536; seat VP-101 → VP-102",
        "  E-40999: new; seat VP-101",
        f"warning: {HR_IGNORED}",
        "dry run: nothing was saved",
    ]
    assert Employee.objects.get(employee_id="E-40117").home_zip == "94538"
    assert not Employee.objects.filter(employee_id="E-40999").exists()
    assert seats()["E-40117"] == ("VP-101", dt.date(2025, 8, 4))


def test_an_import_without_dry_run_has_no_preview(hr_program, tmp_path):
    import_file(HR_CSV, mapping=HR_MAPPING)
    failed = failure(lambda: import_file(moved_hr_export(tmp_path), mapping=HR_MAPPING))
    assert failed.preview is None
    assert Employee.objects.get(employee_id="E-40117").home_zip == "94538"


def test_a_clean_dry_run_previews_changes_and_writes_nothing(hr_program, tmp_path):
    import_file(HR_CSV, mapping=HR_MAPPING)
    rows = hr_rows()
    rows[0] |= {"Home Postal Code": "94536", "Vanpool": "VP-102"}
    path = write_csv(tmp_path, rows)
    stamps = dict(Employee.objects.values_list("employee_id", "updated_at"))
    before = seats()
    result = import_file(path, mapping=HR_MAPPING, dry_run=True)
    assert counts(result) == {"employees": (0, 1, 2)}
    assert result.differences["employees"] == [
        "E-40117: home_zip 94538 → 94536; seat VP-101 → VP-102"
    ]
    assert result.summary_lines()[1] == "employees         0        1          2        0"
    assert result.summary_lines()[-1] == "dry run: nothing was saved"
    assert dict(Employee.objects.values_list("employee_id", "updated_at")) == stamps
    assert seats() == before
    assert not Rider.objects.filter(status="cancelled").exists()


@pytest.mark.parametrize("dry_run", [False, True], ids=["import", "dry-run"])
def test_a_preview_shows_a_corrected_seat_start_from_the_stored_date(dry_run):
    RiderFactory(
        employee=EmployeeFactory(employee_id="EMP-1"),
        vanpool=VanpoolFactory(vanpool_id="VP-1"),
        joined=dt.date(2026, 1, 5),
    )
    result = import_data(
        [vanpool("VP-1", riders=[{"employee_id": "EMP-1", "joined": "2026-09-01"}])],
        dry_run=dry_run,
    )
    assert result.differences["employees"] == ["EMP-1: seat joined 2026-01-05 → 2026-09-01"]


@pytest.mark.parametrize("refused_row", [False, True], ids=["clean", "with-a-refused-row"])
def test_a_dry_run_shows_the_shift_an_employee_moves_to(refused_row):
    ShiftFactory(shift_id="DAY")
    ShiftFactory(shift_id="NIGHT")
    import_data([employee("EMP-1", shift_id="DAY")])
    rows = [employee("EMP-1", shift_id="NIGHT")]
    if not refused_row:
        preview = import_data(rows, dry_run=True)
    else:
        rows.append(employee("EMP-2", home_zip="9453x"))
        preview = failure(lambda: import_data(rows, dry_run=True)).preview
    assert preview.differences["employees"] == ["EMP-1: shift → NIGHT"]


def test_a_preview_shows_the_first_five_changes_of_a_kind():
    result = import_data([employee(f"EMP-{n}") for n in range(7)], dry_run=True)
    assert result.difference_lines() == [
        "employees, first changes:",
        *(f"  EMP-{n}: new" for n in range(5)),
        "  … and 2 more",
    ]
    assert not Employee.objects.exists()


# Warnings ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dry_run", [False, True], ids=["import", "dry-run"])
def test_it_warns_of_seats_the_audit_skips_and_rows_that_look_incomplete(dry_run):
    EmployeeFactory(employee_id="EMP-9", status="terminated")
    result = import_data(
        {
            "vanpools": [
                vanpool("VP-1", status="suspended", riders=["EMP-1"]),
                vanpool("VP-2", riders=["EMP-2"]),
                vanpool("VP-3"),
                vanpool("VP-4", status="inactive"),
            ],
            "employees": [
                employee("EMP-1"),
                employee("EMP-2"),
                employee("EMP-3"),
                employee("EMP-4", status="on_leave"),
            ],
        },
        dry_run=dry_run,
    )
    assert result.warnings == [
        "1 rider seated on a vanpool that is not active (the audit skips them): "
        "EMP-1 on VP-1 (suspended)",
        "1 active employee with no seat: EMP-3",
        "1 active vanpool with no riders: VP-3",
    ]


def test_it_warns_of_a_vanpool_emptied_by_a_move_in_the_same_file():
    RiderFactory(
        employee=EmployeeFactory(employee_id="EMP-9"), vanpool=VanpoolFactory(vanpool_id="VP-1")
    )
    result = import_data({"vanpools": [vanpool("VP-1"), vanpool("VP-2", riders=["EMP-9"])]})
    assert result.warnings == ["1 active vanpool with no riders: VP-1"]


@pytest.mark.parametrize("dry_run", [False, True], ids=["import", "dry-run"])
def test_a_vanpool_that_keeps_one_rider_after_others_move_away_is_not_called_empty(dry_run):
    van = VanpoolFactory(vanpool_id="VP-1")
    for n in range(3):
        RiderFactory(employee=EmployeeFactory(employee_id=f"EMP-{n}"), vanpool=van)
    result = import_data(
        {"vanpools": [vanpool("VP-1"), vanpool("VP-2", riders=["EMP-0", "EMP-1"])]},
        dry_run=dry_run,
    )
    assert result.warnings == []


def test_a_stored_rider_keeps_a_vanpool_in_the_file_from_looking_empty():
    RiderFactory(
        employee=EmployeeFactory(employee_id="EMP-9"), vanpool=VanpoolFactory(vanpool_id="VP-1")
    )
    assert import_data([vanpool("VP-1", name="Renamed")]).warnings == []


def test_a_complete_roster_has_no_warnings():
    result = import_data(
        {
            "vanpools": [vanpool("VP-1", riders=["EMP-1"]), vanpool("VP-2", riders=["EMP-2"])],
            "employees": [
                employee("EMP-1"),
                employee("EMP-2"),
                employee("EMP-3", status="terminated"),
            ],
        }
    )
    assert result.warnings == []
    assert not any(line.startswith("warning") for line in result.summary_lines())


def test_warnings_past_the_first_five_are_counted():
    result = import_data([employee(f"EMP-{n}") for n in range(7)])
    assert result.warnings == [
        "7 active employees with no seat: EMP-0, EMP-1, EMP-2, EMP-3, EMP-4, … and 2 more"
    ]


# The command ------------------------------------------------------------------------------


def run_command(*args: object) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_roster", *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def failed_command(*args: object) -> tuple[str, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError) as failed:
        call_command("import_roster", *map(str, args), stdout=out, stderr=err)
    return str(failed.value), out.getvalue(), err.getvalue()


def test_the_command_imports_with_a_mapping_and_prints_the_table():
    out, err = run_command(VENDOR_JSON, "--mapping", VENDOR_MAPPING)
    assert out.splitlines() == [
        "            created  updated  unchanged",
        "shifts            3        0          0",
        "vanpools          3        0          0",
        "employees         7        0          0",
        *(f"warning: {warning}" for warning in VENDOR_WARNINGS),
    ]
    assert err == ""
    assert Employee.objects.count() == 7


def test_the_command_prints_errors_to_stderr_and_fails():
    message, out, err = failed_command(HR_CSV, "--mapping", HR_MAPPING)
    assert message == "5 errors; nothing was imported."
    assert out == ""
    assert err.splitlines()[0] == (
        "line 2, shift_id (from Shift Code): no shift 'DAY' in this file or already stored"
    )
    assert len(err.splitlines()) == 5
    assert not Employee.objects.exists()


def test_a_dry_run_with_errors_still_prints_the_preview(hr_program, tmp_path):
    import_file(HR_CSV, mapping=HR_MAPPING)
    message, out, err = failed_command(
        moved_hr_export(tmp_path), "--mapping", HR_MAPPING, "--dry-run"
    )
    assert message == "1 error; nothing was imported."
    assert out.splitlines()[:2] == [
        "            created  updated  unchanged  refused",
        "employees         1        1          1        1",
    ]
    assert out.splitlines()[-1] == "dry run: nothing was saved"
    assert err.splitlines() == [
        "line 4, home_zip (from Home Postal Code): "
        "'9453x' is not a US ZIP code (5 digits, or ZIP+4 like 02139-4307)"
    ]
    assert Employee.objects.get(employee_id="E-40117").home_zip == "94538"


def test_the_command_says_a_mapping_file_is_missing(tmp_path):
    message, out, err = failed_command(HR_CSV, "--mapping", tmp_path / "gone.toml")
    assert message == f"{tmp_path / 'gone.toml'}: no such mapping file"
    assert (out, err) == ("", "")


def test_the_command_names_the_key_of_a_wrong_mapping(tmp_path):
    mapping = write_mapping(tmp_path, '[employees.columns]\nemail = { form = "Work Email" }\n')
    message, _, err = failed_command(HR_CSV, "--mapping", mapping)
    assert message == "1 error; nothing was imported."
    assert err.splitlines() == [
        f"{mapping}: employees.columns.email.form: not a mapping key; did you mean from?"
    ]


def test_import_file_says_a_mapping_path_cannot_be_read(tmp_path):
    assert error_lines(HR_CSV, mapping=tmp_path / "gone.yaml") == [
        f"{tmp_path / 'gone.yaml'}: cannot read the mapping: No such file or directory"
    ]


# Queries ----------------------------------------------------------------------------------


def vendor_times(copies: int) -> dict:
    """The vendor export with its routes and people repeated under new IDs."""
    data = vendor_data()
    routes, people = [], []
    for n in range(copies):
        for route in copy.deepcopy(data["routes"]):
            route["route_id"] += f"-{n}"
            for member in route["members"]:
                member["member_id"] += f"-{n}"
            routes.append(route)
        for person in copy.deepcopy(data["people"]):
            person["person"]["employee_number"] += f"-{n}"
            people.append(person)
    return data | {"routes": routes, "people": people}


@pytest.mark.parametrize("copies", [1, 3], ids=["example", "three-times"])
def test_re_importing_the_vendor_export_takes_a_fixed_number_of_queries(
    tmp_path, django_assert_max_num_queries, copies
):
    path = write_json(tmp_path, vendor_times(copies))
    import_file(path, mapping=VENDOR_MAPPING)
    with django_assert_max_num_queries(10):
        result = import_file(path, mapping=VENDOR_MAPPING)
    assert counts(result)["employees"] == (0, 0, 7 * copies)


def test_the_vendor_example_imports_in_a_few_queries(django_assert_max_num_queries):
    # 13 rows created: one INSERT each, one for the seats, and a few reads.
    with django_assert_max_num_queries(22):
        import_file(VENDOR_JSON, mapping=VENDOR_MAPPING)


def test_a_first_import_reads_in_the_same_queries_whatever_its_size(tmp_path):
    reads = {}
    for copies in (1, 3):
        path = write_json(tmp_path, vendor_times(copies), name=f"x{copies}.json")
        Rider.objects.all().delete()
        Employee.objects.all().delete()
        Vanpool.objects.all().delete()
        Shift.objects.all().delete()
        with CaptureQueriesContext(connection) as queries:
            import_file(path, mapping=VENDOR_MAPPING)
        sql = [q["sql"] for q in queries.captured_queries]
        reads[copies] = [s for s in sql if s.startswith("SELECT")]
        inserts = [s for s in sql if s.startswith("INSERT")]
        assert len(inserts) == 3 + 10 * copies + 1  # shifts, routes + people, the seats at once
    # The stored shifts, vanpools and employees the file names; with none stored, the
    # preview's rider count has no vanpool to ask about.
    assert len(reads[1]) == len(reads[3]) == 3


# Rider lists of whole records, and IDs kept as numbers --------------------------------


def test_a_rider_list_of_whole_records_creates_the_employees_seated_on_it():
    result = import_data(
        {
            "vanpools": [
                vanpool(
                    "VP-1",
                    riders=[employee("EMP-1", joined="2026-01-05"), employee("EMP-2")],
                )
            ]
        }
    )
    assert counts(result) == {"vanpools": (1, 0, 0), "employees": (2, 0, 0)}
    assert seats() == {"EMP-1": ("VP-1", dt.date(2026, 1, 5)), "EMP-2": ("VP-1", TODAY)}


def test_a_bad_cell_in_a_nested_rider_record_names_the_vanpool_and_the_rider():
    data = {
        "vanpools": [
            vanpool("VP-1", riders=[employee("EMP-1"), employee("EMP-2", home_zip="9453x")])
        ]
    }
    errors = [str(error) for error in failure(lambda: import_data(data)).errors]
    assert errors == [
        "vanpools[0].riders[1], home_zip: '9453x' is not a US ZIP code "
        "(5 digits, or ZIP+4 like 02139-4307)"
    ]
    assert Employee.objects.count() == 0


def test_nested_rider_records_are_read_through_the_mappings_employees_table(tmp_path):
    data = {
        "vans": [
            {
                "id": 7,
                "name": "North",
                "site": "Fremont Campus",
                "members": [
                    {
                        "emp_no": 10042,
                        "name": "Reyes, Ana",
                        "mail": "ana@example.com",
                        "zip": "94538",
                        "badge": "B-1",
                    },
                ],
            }
        ]
    }
    mapping = write_mapping(
        tmp_path,
        """
[vanpools]
rows = "vans"
[vanpools.columns]
vanpool_id = { from = "id", format = "VP-{:03d}" }
work_site = "site"
riders = { from = "members", id = "emp_no", format = "E{}" }

[employees.columns]
employee_id = { from = "emp_no", format = "E{}" }
first_name = { from = "name", take = "first_name" }
last_name = { from = "name", take = "last_name" }
email = "mail"
home_zip = "zip"
work_site = { value = "Fremont Campus" }
""",
    )
    result = import_file(write_json(tmp_path, data), mapping=mapping)
    assert counts(result) == {"vanpools": (1, 0, 0), "employees": (1, 0, 0)}
    assert seats() == {"E10042": ("VP-007", TODAY)}
    assert result.warnings == ["employees: ignored 1 column the mapping does not use: badge"]


def test_a_numeric_id_that_does_not_fit_its_format_is_named(tmp_path):
    data = [{"id": "north", "name": "North", "site": "Fremont Campus"}]
    mapping = write_mapping(
        tmp_path,
        """
[vanpools.columns]
vanpool_id = { from = "id", format = "VP-{:03d}" }
work_site = "site"
""",
    )
    errors = error_lines(write_json(tmp_path, data), mapping=mapping)
    assert errors == [
        "vanpools[0], vanpool_id (from id): 'north' does not fit the format VP-{:03d}"
    ]


def test_an_id_kept_as_a_number_is_told_how_a_mapping_prefixes_it():
    data = {
        "vanpools": [{"vanpool_id": 7, "name": "North", "work_site": "Fremont Campus"}],
        "employees": [employee("10042")],
    }
    errors = [str(error) for error in failure(lambda: import_data(data)).errors]
    assert errors == [
        "vanpools[0], vanpool_id: Vanpool IDs look like VP-101 (got 7); "
        'a mapping\'s format = "VP-{}" prefixes IDs kept as numbers',
        "employees[0], employee_id: Employee IDs are upper-case letters and digits, "
        "e.g. EMP-1003 (got '10042'); a mapping's format = \"EMP-{}\" prefixes IDs kept as numbers",
    ]
