"""vanpools/importing/mapping/: reading mapping files and turning one source row into roster cells.

Pure: no database, no files except the one load_mapping reads.
"""

import pytest

from vanpools.importing.columns import COLUMNS
from vanpools.importing.mapping.checks import did_you_mean, unmatched_paths, unmatched_rider_keys
from vanpools.importing.mapping.load import load_mapping, parse_mapping
from vanpools.importing.mapping.recipes import MISSING, RecipeError, apply, lookup, map_row
from vanpools.importing.mapping.riders import RIDERS_SHAPE, Seat, record_keys, seats_from_riders
from vanpools.importing.mapping.spec import KindMapping, MappingError, Recipe

ROSTER = {kind: list(columns) for kind, columns in COLUMNS.items()}
WEEKDAYS_0700_1530 = [
    {"day": day, "start": "07:00", "end": "15:30"} for day in ("Mon", "Tue", "Wed", "Thu", "Fri")
]


def recipe(**given: object) -> Recipe:
    """A recipe as a mapping file writes it: ``recipe(**{"from": "Name", "take": ...})``."""
    return Recipe.model_validate(given)


def mapping_error(text: str, suffix: str = ".toml") -> MappingError:
    with pytest.raises(MappingError) as failed:
        parse_mapping(text, suffix, ROSTER, where="hr.toml")
    return failed.value


# Reading a mapping file ------------------------------------------------------------------

HR_TOML = """
[employees.columns]
employee_id = "Employee ID"
first_name = { from = "Legal Name", take = "first_name" }
home_address = { from = ["Street", "City"], sep = " / " }
joined = { from = "Start", date_format = "%m/%d/%Y" }
status = { from = "Worker Status", values = { "On Leave" = "on_leave" } }
work_site = { value = "Fremont Campus" }
"""

VENDOR_YAML = """
shifts:
  rows: shift_patterns
  columns:
    shift_id: code
    schedule: {days: work_days, start: start_time, end: end_time}
vanpools:
  rows: data.routes
  columns:
    vanpool_id: route_id
    riders: {from: members, id: member_id, joined: since}
"""


def test_a_toml_mapping_reads_each_column_recipe():
    mapping = parse_mapping(HR_TOML, ".toml", ROSTER, where="hr.toml")
    assert mapping.source == "hr.toml"
    assert (mapping.shifts, mapping.vanpools) == (None, None)
    columns = mapping.employees.columns
    assert list(columns) == [
        "employee_id",
        "first_name",
        "home_address",
        "joined",
        "status",
        "work_site",
    ]
    assert columns["first_name"] == recipe(**{"from": "Legal Name", "take": "first_name"})
    assert (columns["home_address"].source, columns["home_address"].sep) == (
        ["Street", "City"],
        " / ",
    )
    assert columns["joined"].date_format == "%m/%d/%Y"
    assert columns["status"].values == {"On Leave": "on_leave"}
    assert columns["work_site"].value == "Fremont Campus"


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_a_yaml_mapping_reads_rows_paths_schedules_and_riders(suffix):
    mapping = parse_mapping(VENDOR_YAML, suffix, ROSTER)
    assert mapping.employees is None
    assert mapping.for_kind("shifts").rows == "shift_patterns"
    assert mapping.for_kind("vanpools").rows == "data.routes"
    schedule = mapping.shifts.columns["schedule"]
    assert (schedule.days, schedule.start, schedule.end) == ("work_days", "start_time", "end_time")
    riders = mapping.vanpools.columns["riders"]
    assert (riders.source, riders.id, riders.joined) == ("members", "member_id", "since")


def test_a_plain_string_is_short_for_from():
    assert Recipe.model_validate("Work Email") == recipe(**{"from": "Work Email"})
    assert recipe(**{"from": "Work Email"}).paths() == ["Work Email"]


def test_a_kind_with_rows_but_no_columns_is_a_mapping():
    mapping = parse_mapping('[employees]\nrows = "people"\n', ".toml", ROSTER)
    assert mapping.for_kind("employees").rows == "people"
    assert mapping.for_kind("employees").columns == {}


def test_load_mapping_reads_the_file_and_names_it_as_the_source(tmp_path):
    path = tmp_path / "vendor.YAML"
    path.write_text(VENDOR_YAML, encoding="utf-8")
    assert load_mapping(path, ROSTER).source == str(path)


def test_load_mapping_says_a_missing_file_cannot_be_read(tmp_path):
    with pytest.raises(MappingError) as failed:
        load_mapping(tmp_path / "gone.toml", ROSTER)
    assert failed.value.where == str(tmp_path / "gone.toml")
    assert str(failed.value) == "cannot read the mapping: No such file or directory"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[employes.columns]\nemail = "Work Email"\n',
            "employes: not a mapping key; did you mean employees?",
        ),
        (
            '[employees]\ncolums = { email = "Work Email" }\n',
            "employees.colums: not a mapping key; did you mean columns?",
        ),
        (
            '[employees.columns]\nemail = { from = "Work Email", split = "," }\n',
            "employees.columns.email.split: not a mapping key",
        ),
        (
            '[employees.columns]\nemail = { from = "Name", take = "middle_name" }\n',
            "employees.columns.email.take: Input should be 'first_name' or 'last_name'",
        ),
        (
            '[employees.columns]\nhome_email = "Work Email"\n',
            "employees.columns.home_email: not a roster column of employees (one of email, "
            "employee_id, first_name, home_address, home_lat, home_lng, home_zip, joined, "
            "last_name, leave, pto, shift_id, status, time_type, title, vanpool_id, work_site)",
        ),
        (
            '[shifts.columns]\nriders = "members"\n',
            "shifts.columns.riders: not a roster column of shifts "
            "(one of name, overnight, rotation, schedule, schedule_text, shift_id)",
        ),
        (
            '[employees.columns]\nemail = { from = "Work Email", value = "a@example.com" }\n',
            "employees.columns.email: give exactly one of from = COLUMN, value = CONSTANT, "
            "or a schedule's days/hours (or days/start/end, or text)",
        ),
        (
            "[employees.columns]\nemail = {}\n",
            "employees.columns.email: give exactly one of from = COLUMN, value = CONSTANT, "
            "or a schedule's days/hours (or days/start/end, or text)",
        ),
        (
            '[shifts.columns]\nschedule = { days = "Days" }\n',
            "shifts.columns.schedule: a schedule needs days and hours, "
            "days with start and end, or text",
        ),
        (
            '[shifts.columns]\nschedule = { days = "Days", hours = "Hours", start = "In" }\n',
            "shifts.columns.schedule: a schedule needs days and hours, "
            "days with start and end, or text",
        ),
        (
            "[employees.columns]\nemail = 3\n",
            "employees.columns.email: Input should be a valid dictionary or instance of Recipe",
        ),
        (
            '[employees.columns]\nstatus = { from = "S", values = { A = 1.5 } }\n',
            "employees.columns.status.values.A: Input should be a valid string",
        ),
    ],
    ids=[
        "unknown-kind",
        "unknown-kind-key",
        "unknown-transform-key",
        "unknown-take",
        "not-a-roster-column",
        "riders-outside-vanpools",
        "two-origins",
        "no-origin",
        "days-without-hours",
        "hours-and-start",
        "recipe-not-a-table",
        "translation-to-a-float",
    ],
)
def test_a_wrong_mapping_names_the_key(text, message):
    error = mapping_error(text)
    assert str(error) == message
    assert error.where == "hr.toml"


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        (
            '[employees.columns\nemail = "x"\n',
            ".toml",
            "not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 19)",
        ),
        ("employees: [columns\n  email: x\n", ".yaml", "not valid YAML: while parsing a flow"),
        ("- employees\n- vanpools\n", ".yaml", "expected a table per kind: [employees], "),
        ("", ".yml", "expected a table per kind: [employees], [vanpools], [shifts]"),
        ('[employees.columns]\nemail = "x"\n', ".json", "a mapping is a .toml, .yaml or .yml"),
        ('title = "HR export"\n', ".toml", "title: not a mapping key"),
        ("# nothing\n", ".toml", "the mapping names none of shifts, vanpools, employees"),
    ],
    ids=[
        "invalid-toml",
        "invalid-yaml",
        "yaml-list",
        "empty-yaml",
        "wrong-suffix",
        "top-level-key",
        "no-kind",
    ],
)
def test_a_mapping_file_that_cannot_be_read_says_why(text, suffix, message):
    error = mapping_error(text, suffix)
    assert str(error).startswith(message)
    assert "\n" not in str(error)  # one line, even for YAML's multi-line messages


def test_an_invalid_yaml_message_points_at_the_line():
    error = mapping_error("employees: [columns\n  email: x\n", ".yaml")
    assert 'in "<unicode string>", line 2, column 8' in str(error)


# Reading a source row --------------------------------------------------------------------

ROW = {
    "Person": {"Employee_Number": "HR-1042", "stops": [{"zip": "94538"}, {"zip": "94587"}]},
    "Addr.Zip": "02139",
    " Work Email ": "ana@example.com",
    "empty": None,
}


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("person.employee_number", "HR-1042"),
        ("PERSON.Stops.1.zip", "94587"),
        ("person.stops.0.zip", "94538"),
        ("work email", "ana@example.com"),
        ("addr.zip", "02139"),
        ("empty", None),
    ],
    ids=["dotted", "list-index", "first-index", "case-and-spaces", "key-with-a-dot", "null"],
)
def test_lookup_follows_a_dotted_path_ignoring_case(path, found):
    assert lookup(ROW, path) == found


@pytest.mark.parametrize(
    "path",
    [
        "person.stops.2.zip",
        "person.stops.first.zip",
        "person.missing.deep",
        "person.employee_number.more",
        "nothing",
    ],
    ids=["index-past-the-end", "index-not-a-number", "missing-key", "past-a-value", "absent"],
)
def test_lookup_of_a_path_not_in_the_row_is_missing(path):
    assert lookup(ROW, path) is MISSING


def test_a_key_holding_a_dot_is_tried_whole_before_the_path():
    row = {"Home.Zip": "02139", "home": {"zip": "94538"}}
    assert lookup(row, "home.zip") == "02139"
    assert lookup({"home": {"zip": "94538"}}, "home.zip") == "94538"


def test_lookup_indexes_a_list_at_the_top():
    assert lookup([{"zip": "94538"}], "0.zip") == "94538"


# Transforms ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "first", "last"),
    [
        ("Reyes, Ana", "Ana", "Reyes"),
        ("Reyes,  Ana  Maria", "Ana Maria", "Reyes"),
        ("Ana Reyes", "Ana", "Reyes"),
        ("Marisol  Vega Ortiz", "Marisol Vega", "Ortiz"),
    ],
    ids=["last-comma-first", "two-first-names", "first-last", "last-word-is-the-last-name"],
)
def test_take_splits_a_name_either_way(name, first, last):
    row = {"Legal Name": name}
    assert apply(recipe(**{"from": "Legal Name", "take": "first_name"}), row) == first
    assert apply(recipe(**{"from": "Legal Name", "take": "last_name"}), row) == last


@pytest.mark.parametrize(
    "name", ["Cher", "Reyes,", ", Ana"], ids=["one-word", "no-first", "no-last"]
)
def test_take_refuses_a_name_it_cannot_split(name):
    with pytest.raises(RecipeError) as failed:
        apply(recipe(**{"from": "Name", "take": "last_name"}), {"Name": name})
    assert str(failed.value) == (
        f"cannot split '{name}' into first and last name (expected 'First Last' or 'Last, First')"
    )


@pytest.mark.parametrize(
    ("given", "stored"),
    [("On Leave", "on_leave"), ("on LEAVE ", "on_leave"), ("A", "active"), ("Retired", "Retired")],
    ids=["exact", "any-case-and-spaces", "code", "untranslated-passes-through"],
)
def test_values_translates_ignoring_case(given, stored):
    table = {"A": "active", "On Leave": "on_leave"}
    assert apply(recipe(**{"from": "S", "values": table}), {"S": given}) == stored


@pytest.mark.parametrize(
    ("given", "iso"),
    [
        ("08/04/2025", "2025-08-04"),
        (" 8/4/2025 ", "2025-08-04"),
        ("12/01/2026..12/05/2026; 12/24/2026", "2026-12-01..2026-12-05; 2026-12-24"),
        ("12/01/2026 .. 12/05/2026;", "2026-12-01..2026-12-05"),
        (["12/01/2026", "12/24/2026"], ["2026-12-01", "2026-12-24"]),
    ],
    ids=["single", "unpadded", "range-list", "spaced-range", "json-list"],
)
def test_date_format_turns_dates_into_iso(given, iso):
    assert apply(recipe(**{"from": "D", "date_format": "%m/%d/%Y"}), {"D": given}) == iso


@pytest.mark.parametrize(
    "given",
    ["2026-12-01", "12/01/2026..2026-12-05", ["12/01/2026", "13/01/2026"]],
    ids=["iso", "one-end-of-a-range", "one-in-a-list"],
)
def test_a_date_not_in_the_format_names_the_format(given):
    with pytest.raises(RecipeError, match=r"does not match the date format %m/%d/%Y$"):
        apply(recipe(**{"from": "D", "date_format": "%m/%d/%Y"}), {"D": given})


def test_a_date_error_quotes_the_date():
    with pytest.raises(RecipeError) as failed:
        apply(recipe(**{"from": "D", "date_format": "%d.%m.%Y"}), {"D": " 2026-12-01 "})
    assert str(failed.value) == "'2026-12-01' does not match the date format %d.%m.%Y"


def test_a_list_of_columns_is_joined_with_sep_skipping_blanks():
    row = {"Street": " 41 Paseo Padre Pkwy ", "Unit": "  ", "City": "Fremont", "State": "CA"}
    joined = recipe(**{"from": ["Street", "Unit", "Missing", "City", "State"], "sep": " | "})
    assert apply(joined, row) == "41 Paseo Padre Pkwy | Fremont | CA"
    default = recipe(**{"from": ["Street", "City"]})
    assert apply(default, row) == "41 Paseo Padre Pkwy, Fremont"


def test_a_list_of_blank_columns_gives_no_value():
    assert apply(recipe(**{"from": ["Street", "City"]}), {"Street": "", "City": None}) is None


@pytest.mark.parametrize("constant", ["Fremont Campus", 12, True], ids=["text", "number", "bool"])
def test_value_is_the_same_constant_on_every_row(constant):
    assert apply(recipe(value=constant), {}) == constant
    assert apply(recipe(value=constant), {"anything": "else"}) == constant


def test_a_blank_or_absent_source_gives_no_value_without_transforming():
    take = recipe(**{"from": "Name", "take": "first_name"})
    assert apply(take, {"Name": "  "}) is None
    assert apply(take, {}) is None


@pytest.mark.parametrize(
    ("schedule", "row", "spans"),
    [
        (
            {"days": "Days", "hours": "Hours"},
            {"Days": "Mon-Fri", "Hours": "07:00-15:30"},
            WEEKDAYS_0700_1530,
        ),
        (
            {"days": "d", "start": "in", "end": "out"},
            {"d": ["Mon", "Wed", "Fri"], "in": "7am", "out": "3:30pm"},
            [span for span in WEEKDAYS_0700_1530 if span["day"] in ("Mon", "Wed", "Fri")],
        ),
        (
            {"days": "svc.days", "hours": "svc.hours"},
            {"svc": {"days": "Mon-Fri", "hours": "7am-3:30pm"}},
            WEEKDAYS_0700_1530,
        ),
        (
            {"text": "Pattern"},
            {"Pattern": "Sun-Thu 11pm-7:30am"},
            [
                {"day": day, "start": "23:00", "end": "07:30"}
                for day in ("Mon", "Tue", "Wed", "Thu", "Sun")
            ],
        ),
    ],
    ids=["days-and-hours", "day-list-start-end", "nested-paths", "text"],
)
def test_a_schedule_recipe_gives_weekly_spans(schedule, row, spans):
    assert apply(recipe(**schedule), row) == spans


@pytest.mark.parametrize(
    ("schedule", "row", "message"),
    [
        (
            {"text": "t"},
            {"t": "T-F 7am-3pm"},
            "'T-F 7am-3pm': 't-f' is not a day, a range of days or 'weekdays'",
        ),
        (
            {"days": "d", "hours": "h"},
            {"d": "MT", "h": "07:00-15:00"},
            "'MT 07:00-15:00': a lone 'T' could be Tuesday or Thursday",
        ),
        (
            {"days": "d", "hours": "h"},
            {"d": "Mon-Fri", "h": "7-4"},
            "'Mon-Fri 7-4': hours without am/pm read as Mon–Fri 07:00–16:00 or Mon–Fri 19:00–04:00",
        ),
        (
            {"text": "t"},
            {"t": "varies"},
            "'varies': expected one range of hours, e.g. 7am-3:30pm",
        ),
    ],
    ids=["ambiguous-t-range", "lone-t", "hours-without-meridiem", "no-hours"],
)
def test_an_unreadable_schedule_shows_the_expected_shape(schedule, row, message):
    with pytest.raises(RecipeError) as failed:
        apply(recipe(**schedule), row)
    assert str(failed.value) == (
        f"{message} (expected days like Mon-Fri or Mon,Wed,Fri and hours like 07:00-15:30)"
    )


@pytest.mark.parametrize(
    ("schedule", "row", "message"),
    [
        ({"days": "d", "hours": "h"}, {"d": "Mon-Fri"}, "days 'Mon-Fri' but no hours"),
        ({"days": "d", "hours": "h"}, {"h": "07:00-15:30"}, "hours '07:00-15:30' but no days in d"),
        (
            {"days": "d", "start": "s", "end": "e"},
            {"d": "Mon", "e": " "},
            "days 'Mon' but no hours",
        ),
    ],
    ids=["no-hours", "no-days", "blank-start-and-end"],
)
def test_a_schedule_with_half_its_parts_says_which_is_missing(schedule, row, message):
    with pytest.raises(RecipeError) as failed:
        apply(recipe(**schedule), row)
    assert str(failed.value) == message


def test_a_schedule_with_only_a_start_reads_it_as_the_hours():
    schedule = recipe(days="d", start="s", end="e")
    with pytest.raises(RecipeError, match=r"^'Mon-Fri 07:00': "):
        apply(schedule, {"d": "Mon-Fri", "s": "07:00"})


@pytest.mark.parametrize(
    "schedule",
    [{"days": "d", "hours": "h"}, {"text": "t"}],
    ids=["parts", "text"],
)
def test_a_schedule_with_nothing_given_is_no_value(schedule):
    assert apply(recipe(**schedule), {"d": "", "t": None}) is None


def test_map_row_reports_each_bad_column_with_its_source():
    spec = parse_mapping(HR_TOML, ".toml", ROSTER).employees
    row = {"Employee ID": "E-1", "Legal Name": "Cher", "Start": "2026-01-05", "home_zip": "94538"}
    mapped = map_row(spec, "employees", row, ROSTER["employees"])
    assert mapped.cells == {
        "home_zip": "94538",
        "employee_id": "E-1",
        "work_site": "Fremont Campus",
    }
    assert mapped.problems == [
        (
            "first_name",
            "cannot split 'Cher' into first and last name (expected 'First Last' or 'Last, First')",
        ),
        ("joined", "'2026-01-05' does not match the date format %m/%d/%Y"),
    ]
    assert mapped.sources["home_address"] == "Street + City"
    assert mapped.sources["work_site"] == ""


def test_map_row_keeps_a_source_column_named_like_a_roster_column_only_when_unmapped():
    spec = parse_mapping('[employees.columns]\nemail = "title"\n', ".toml", ROSTER).employees
    mapped = map_row(spec, "employees", {"title": "a@example.com"}, ROSTER["employees"])
    assert mapped.cells == {"email": "a@example.com"}


# A vanpool's rider list ------------------------------------------------------------------


def test_riders_as_a_list_of_employee_ids():
    seats, problems = seats_from_riders(["EMP-1003", " EMP-1004 ", 1005], None)
    assert seats == [
        Seat("EMP-1003", None, "riders[0]"),
        Seat("EMP-1004", None, "riders[1]"),
        Seat("1005", None, "riders[2]"),
    ]
    assert problems == []


def test_riders_as_objects_with_the_default_keys():
    riders = [
        {"employee_id": "EMP-1003", "joined": "2026-09-01"},
        {"ID": "EMP-1004"},
        {"Employee_ID": "EMP-1005", "Joined": " "},
    ]
    seats, problems = seats_from_riders(riders, None)
    assert seats == [
        Seat("EMP-1003", "2026-09-01", "riders[0]"),
        Seat("EMP-1004", None, "riders[1]"),
        Seat("EMP-1005", None, "riders[2]"),
    ]
    assert problems == []


def test_riders_as_objects_with_the_mappings_keys():
    members = [{"member_id": "HR-1042", "since": "2026-03-02"}, {"member_id": "HR-1230"}]
    seats, problems = seats_from_riders(
        members, recipe(**{"from": "members", "id": "member_id", "joined": "since"})
    )
    assert seats == [Seat("HR-1042", "2026-03-02", "riders[0]"), Seat("HR-1230", None, "riders[1]")]
    assert problems == []


def test_riders_id_key_may_be_a_dotted_path():
    # Only the ID is there: a reference to an employee, not the employee's whole record.
    seats, _ = seats_from_riders(
        [{"person": {"number": "HR-7"}}], recipe(**{"from": "m", "id": "person.number"})
    )
    assert seats == [Seat("HR-7", None, "riders[0]")]


def test_a_custom_id_key_replaces_the_default_ones():
    seats, problems = seats_from_riders(
        [{"employee_id": "HR-1042"}], recipe(**{"from": "members", "id": "member_id"})
    )
    assert seats == []
    assert [place for place, _ in problems] == ["riders[0]"]


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("EMP-1003, EMP-1004", "'EMP-1003, EMP-1004'"),
        ({"employee_id": "EMP-1003"}, '{"employee_id": "EMP-1003"}'),
        (None, "null"),
    ],
    ids=["text", "object", "null"],
)
def test_riders_that_are_not_a_list_show_the_expected_shape(value, found):
    assert seats_from_riders(value, None) == (
        [],
        [("riders", f"found {found}; expected {RIDERS_SHAPE}")],
    )


@pytest.mark.parametrize(
    ("item", "found"),
    [
        ("", "''"),
        (True, "true"),
        (None, "null"),
        ({"name": "Ana"}, '{"name": "Ana"}'),
        ({"employee_id": ["EMP-1"]}, '{"employee_id": ["EMP-1"]}'),
        (["EMP-1"], '["EMP-1"]'),
    ],
    ids=["blank", "bool", "null", "no-id-key", "id-a-list", "nested-list"],
)
def test_a_rider_of_a_bad_shape_is_a_problem_at_its_index(item, found):
    seats, problems = seats_from_riders(["EMP-1003", item], None)
    assert seats == [Seat("EMP-1003", None, "riders[0]")]
    assert problems == [("riders[1]", f"found {found}; expected {RIDERS_SHAPE}")]


def test_a_rider_object_whose_id_is_true_is_a_bad_shape():
    # A bare true is refused (the "bool" case above); inside an object it must be too,
    # not seat an employee called "True".
    seats, problems = seats_from_riders([{"employee_id": True}], None)
    assert seats == []
    assert problems == [("riders[0]", f'found {{"employee_id": true}}; expected {RIDERS_SHAPE}')]


def test_a_long_bad_rider_is_cut_in_the_message():
    _, problems = seats_from_riders([{"note": "x" * 200}], None)
    [(place, message)] = problems
    assert place == "riders[0]"
    assert message.startswith('found {"note": "' + "x" * 50 + "; expected")


def test_the_bad_shape_message_names_the_mappings_id_key():
    # With id = "member_id", an object keyed employee_id is refused; telling the
    # vendor to write {"employee_id": …} sends them in a circle.
    _, problems = seats_from_riders(
        [{"employee_id": "HR-1042"}], recipe(**{"from": "members", "id": "member_id"})
    )
    [(_, message)] = problems
    assert "member_id" in message, message


def test_an_empty_rider_list_seats_no_one():
    assert seats_from_riders([], None) == ([], [])


# Seat objects and whole records (issue 34, point 14) ---------------------------------------


def test_a_seat_objects_own_keys_are_ignored_and_named_not_read_as_a_record():
    riders = [{"participant_id": "P-1001", "employee_id": "EMP-1001"}]
    records = record_keys(KindMapping(), [])
    seats, problems = seats_from_riders(
        riders, recipe(**{"from": "p", "id": "employee_id"}), records
    )
    assert seats == [Seat("EMP-1001", None, "riders[0]", ignored=("participant_id",))]
    assert problems == []


def test_a_rider_object_holding_a_key_the_employees_are_read_from_is_a_record():
    spec = parse_mapping('[employees.columns]\nemail = "mail"\n', ".toml", ROSTER).employees
    assert spec is not None
    records = record_keys(spec, ROSTER["employees"])
    assert "mail" in records and "email" not in records  # mapped away from its roster name
    assert not {"employee_id", "joined", "vanpool_id"} & records
    item = {"employee_id": "EMP-1", "mail": "a@example.com"}
    [seat], _ = seats_from_riders([item], None, records)
    assert seat.record == item


def test_date_format_on_a_rider_list_reads_each_joined_date():
    rider_recipe = recipe(**{"from": "m", "id": "n", "joined": "since", "date_format": "%m/%d/%Y"})
    seats, problems = seats_from_riders(
        [{"n": "HR-1", "since": "03/02/2026"}, {"n": "HR-2", "since": "2026-03-02"}], rider_recipe
    )
    assert seats == [Seat("HR-1", "2026-03-02", "riders[0]")]
    assert problems == [
        ("riders[1]", "since: '2026-03-02' does not match the date format %m/%d/%Y")
    ]


# Paths no row holds (issue 34, point 13) ----------------------------------------------------


def test_unmatched_paths_are_those_no_row_holds_with_the_nearest_one_the_rows_do():
    spec = parse_mapping(
        '[employees.columns]\ntitle = "job.titel"\npto = "time_off"\nhome_zip = "zip"\n',
        ".toml",
        ROSTER,
    ).employees
    assert spec is not None
    rows = [{"job": {"title": "Nurse"}, "zip": "94538"}, {"time_off": "2026-12-01"}]
    found = unmatched_paths(spec, rows)
    assert [(item.column, item.path, item.hint) for item in found] == [
        ("title", "job.titel", "; did you mean 'job.title'?")
    ]
    assert unmatched_paths(spec, []) == []  # no rows: nothing to hold it


def test_unmatched_rider_keys_name_the_recipes_id_and_joined():
    rider_recipe = recipe(**{"from": "m", "id": "memberid", "joined": "since"})
    found = unmatched_rider_keys(
        rider_recipe, [{"member_id": "HR-1", "since": "2026-01-05"}, "HR-2"]
    )
    assert [(item.column, item.path, item.hint) for item in found] == [
        ("riders.id", "memberid", "; did you mean 'member_id'?")
    ]


def test_did_you_mean_reads_lists_by_their_first_item_and_keeps_the_rows_spelling():
    assert (
        did_you_mean("stops.0.zips", [{"Stops": [{"ZIP": "94538"}]}])
        == "; did you mean 'Stops.0.ZIP'?"
    )
    assert did_you_mean("nothing_like_it", [{"zip": "94538"}]) == ""


def test_an_unknown_recipe_key_is_named_with_the_nearest_key_first_by_typing_slips():
    error = mapping_error('[employees.columns]\nemail = { form = "Mail" }\n')
    assert str(error) == "employees.columns.email.form: not a mapping key; did you mean from?"


def test_a_rider_list_from_a_list_of_paths_is_refused():
    error = mapping_error('[vanpools.columns]\nriders = { from = ["a", "b"] }\n')
    assert str(error) == (
        "vanpools.columns.riders.from: a rider list is read from one path, not a list of them"
    )
