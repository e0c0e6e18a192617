"""Trips, ride days, gate swipes, permits, vanpool months and holidays through import_roster."""

import datetime as dt
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import EmployeeFactory, RiderFactory, VanpoolFactory
from vanpools.demo import load_demo_program
from vanpools.importing import ImportFailed
from vanpools.importing.records import import_records
from vanpools.importing.records.staging import STAGE_PREFIX, writes_stored_data
from vanpools.models import (
    BadgeSwipe,
    DataCoverage,
    Holiday,
    ParkingPermit,
    RideDay,
    Trip,
    Vanpool,
    VanpoolMonth,
)

pytestmark = pytest.mark.django_db
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
WRITES = ("INSERT", "UPDATE", "DELETE", "BEGIN", "SAVEPOINT")


@pytest.fixture
def van():
    van = VanpoolFactory(vanpool_id="VP-101", work_site="Harbor DC")
    for employee_id in ("EMP-1", "EMP-2", "EMP-3"):
        RiderFactory(
            vanpool=van, employee=EmployeeFactory(employee_id=employee_id, work_site="Harbor DC")
        )
    return van


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def days_aboard() -> list[tuple[str, str, str]]:
    rows = RideDay.objects.values_list("employee__employee_id", "date", "source")
    return sorted((employee, day.isoformat(), source) for employee, day, source in rows)


def writes_of(fn) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        fn()
    # The import's scratch tables (temporary, this connection's own) are its working
    # space, not stored data: every other write is listed.
    return [
        q["sql"]
        for q in captured
        if q["sql"].lstrip().split()[0].upper() in WRITES and writes_stored_data(q["sql"])
    ]


TRIPS = """vanpool_id,date,direction,driver_id,passengers
VP-101,2026-10-26,to_work,EMP-1,EMP-2;EMP-9
VP-101,2026-10-26,from_work,EMP-1,EMP-2
VP-101,2026-10-28,to_work,EMP-1,
"""


def test_a_trip_log_makes_trips_days_aboard_and_what_it_covers(tmp_path, van):
    result = import_records(write(tmp_path, "trips.csv", TRIPS))
    assert result.counts["trips"] == {"created": 3, "updated": 0, "unchanged": 0}
    assert sorted(Trip.objects.values_list("trip_ref", "passengers")) == [
        ("VP-101/2026-10-26/from_work/1", 1),
        ("VP-101/2026-10-26/to_work/1", 2),  # EMP-9 is no employee, but was aboard
        ("VP-101/2026-10-28/to_work/1", 0),
    ]
    # The driver is aboard too; EMP-3 was on no trip.
    assert days_aboard() == [
        ("EMP-1", "2026-10-26", "trip"),
        ("EMP-1", "2026-10-28", "trip"),
        ("EMP-2", "2026-10-26", "trip"),
    ]
    assert list(DataCoverage.objects.values_list("kind", "vanpool_id", "start", "end")) == [
        ("trips", van.pk, dt.date(2026, 10, 26), dt.date(2026, 10, 28))
    ]
    assert result.warnings == [
        "trips: 1 passenger IDs are not employees on the roster (counted in the trip's "
        "passengers, not as anyone's ride): EMP-9"
    ]


def test_the_same_file_again_writes_nothing_not_even_a_transaction(tmp_path, van):
    path = write(tmp_path, "trips.csv", TRIPS)
    import_records(path)
    assert writes_of(lambda: import_records(path)) == []
    assert import_records(path).counts["trips"] == {"created": 0, "updated": 0, "unchanged": 3}


def test_a_trip_log_of_more_vans_than_one_query_can_name_is_read_and_read_again(tmp_path):
    # Two conditions a van in the query of stored trips: 600 vans once made SQLite refuse
    # an expression tree deeper than 1,000.
    vans = Vanpool.objects.bulk_create(
        Vanpool(vanpool_id=f"VP-{n:04}", name=f"Van {n}", work_site="Harbor DC") for n in range(600)
    )
    lines = ["vanpool_id,date,direction,passengers"] + [
        f"{van.vanpool_id},2026-10-{day},to_work," for van in vans for day in (26, 27)
    ]
    path = write(tmp_path, "trips.csv", "\n".join(lines) + "\n")

    assert import_records(path).counts["trips"]["created"] == 1200
    assert import_records(path).counts["trips"] == {"created": 0, "updated": 0, "unchanged": 1200}


def test_a_new_file_replaces_the_days_it_covers_and_keeps_the_rest(tmp_path, van):
    import_records(write(tmp_path, "october.csv", TRIPS))
    changed = """vanpool_id,date,direction,driver_id,passengers
VP-101,2026-10-26,to_work,EMP-1,EMP-3
VP-101,2026-10-27,to_work,EMP-1,EMP-3
"""
    result = import_records(write(tmp_path, "again.csv", changed))
    assert result.counts["trips"] == {"created": 1, "updated": 1, "unchanged": 0}
    assert (
        "1 stored row the file no longer holds for the dates it covers were removed"
        in (result.warnings[0])
    )
    # 10-26's return trip is gone (the file covers 10-26..10-27); 10-28 is outside it and stays.
    assert sorted(Trip.objects.values_list("date", "direction")) == [
        (dt.date(2026, 10, 26), "to_work"),
        (dt.date(2026, 10, 27), "to_work"),
        (dt.date(2026, 10, 28), "to_work"),
    ]
    assert ("EMP-2", "2026-10-26", "trip") not in days_aboard()
    assert ("EMP-3", "2026-10-27", "trip") in days_aboard()


def test_a_period_says_the_file_is_complete_for_days_it_has_no_rows_for(tmp_path, van):
    import_records(write(tmp_path, "trips.csv", TRIPS))
    only_monday = "vanpool_id,date,passengers\nVP-101,2026-10-26,EMP-2\n"
    import_records(
        write(tmp_path, "m.csv", only_monday), period=(dt.date(2026, 10, 26), dt.date(2026, 10, 31))
    )
    assert list(Trip.objects.values_list("date", flat=True)) == [dt.date(2026, 10, 26)]


def test_a_dry_run_previews_and_writes_nothing(tmp_path, van):
    import_records(write(tmp_path, "trips.csv", TRIPS))
    changed = TRIPS.replace("EMP-2;EMP-9", "EMP-2;EMP-3")
    path = write(tmp_path, "changed.csv", changed)
    before = days_aboard()
    result = import_records(path, dry_run=True)
    assert days_aboard() == before
    assert result.summary_lines()[:2] == [
        "            created  updated  unchanged  refused",
        "trips             0        1          2        0",
    ]
    assert "  trip VP-101/2026-10-26/to_work/1: who was aboard changed" in result.summary_lines()


def test_one_bad_row_refuses_the_whole_file_naming_each_row_and_column(tmp_path, van):
    bad = TRIPS + "VP-999,2026-13-01,sideways,EMP-1,EMP-2\nVP-101,2026-10-30,to_work,EMP-7,EMP-2\n"
    with pytest.raises(ImportFailed) as failed:
        import_records(write(tmp_path, "bad.csv", bad))
    assert [str(error) for error in failed.value.errors] == [
        "line 5, date: '2026-13-01' is not a date (YYYY-MM-DD)",
        "line 5, direction: 'sideways' is not one of to_work, from_work",
        "line 5, vanpool_id: no vanpool VP-999 (import the roster first)",
    ]
    assert not Trip.objects.exists() and not RideDay.objects.exists()


def test_unknown_and_missing_columns_are_told_once(tmp_path, van):
    with pytest.raises(ImportFailed) as failed:
        import_records(
            write(tmp_path, "t.csv", "vanpool_id,passangers\nVP-101,EMP-1\n"), kind="trips"
        )
    assert [str(error) for error in failed.value.errors] == [
        "line 1, passangers: unknown column; did you mean passengers?",
        "line 1, date: required column is missing",
        "line 2, date: a value is required",
    ]


def test_a_trip_id_given_twice_is_an_error_on_each_later_line(tmp_path, van):
    rows = """trip_id,vanpool_id,date,passengers
T-1,VP-101,2026-10-26,EMP-2
T-2,VP-101,2026-10-26,EMP-3
T-1,VP-101,2026-10-27,EMP-2
T-1,VP-101,2026-10-28,EMP-3
"""
    with pytest.raises(ImportFailed) as failed:
        import_records(write(tmp_path, "trips.csv", rows))
    assert [str(error) for error in failed.value.errors] == [
        "line 4, trip_id: trip T-1 appears twice in the file",
        "line 5, trip_id: trip T-1 appears twice in the file",
    ]
    assert not Trip.objects.exists() and not RideDay.objects.exists()


def test_a_trip_the_operator_moved_to_another_date_is_updated_not_made_twice(tmp_path, van):
    first = "trip_id,vanpool_id,date,passengers\nT-1,VP-101,2026-10-26,EMP-2\n"
    import_records(write(tmp_path, "first.csv", first))
    moved = "trip_id,vanpool_id,date,passengers\nT-1,VP-101,2026-10-27,EMP-2\n"
    result = import_records(write(tmp_path, "moved.csv", moved))
    assert result.counts["trips"] == {"created": 0, "updated": 1, "unchanged": 0}
    assert result.differences["trips"] == [
        "trip T-1: 2026-10-26 trip with 1 → 2026-10-27 trip with 1"
    ]
    assert list(Trip.objects.values_list("trip_ref", "date")) == [("T-1", dt.date(2026, 10, 27))]
    # The day aboard moved with it: 10-26 is not in the new file's dates, so it stays.
    assert days_aboard() == [("EMP-2", "2026-10-26", "trip"), ("EMP-2", "2026-10-27", "trip")]


def test_a_rider_on_two_trips_of_a_day_is_read_from_the_files_first_trip(tmp_path, van):
    rows = """trip_id,vanpool_id,date,direction,passengers
T-PM,VP-101,2026-10-26,from_work,EMP-2
T-AM,VP-101,2026-10-26,to_work,EMP-2;EMP-3
"""
    import_records(write(tmp_path, "trips.csv", rows))
    assert sorted(RideDay.objects.values_list("employee__employee_id", "ref")) == [
        ("EMP-2", "T-PM"),
        ("EMP-3", "T-AM"),
    ]
    # The same trips in the other order: EMP-2's day is now read from T-AM, a changed day.
    swapped = "\n".join([rows.splitlines()[0], *reversed(rows.splitlines()[1:])]) + "\n"
    result = import_records(write(tmp_path, "swapped.csv", swapped))
    assert result.counts["trips"] == {"created": 0, "updated": 2, "unchanged": 0}
    assert sorted(RideDay.objects.values_list("employee__employee_id", "ref")) == [
        ("EMP-2", "T-AM"),
        ("EMP-3", "T-AM"),
    ]


def scratch_tables() -> list[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname LIKE 'pg_temp%%'")
        else:
            cursor.execute("SELECT name FROM sqlite_temp_master WHERE type = 'table'")
        return [name for (name,) in cursor.fetchall() if name.startswith(STAGE_PREFIX)]


def test_the_scratch_tables_are_dropped_after_an_import_and_after_a_refused_file(tmp_path, van):
    import_records(write(tmp_path, "trips.csv", TRIPS))
    import_records(write(tmp_path, "days.csv", "employee_id,date\nEMP-1,2026-10-26\n"))
    assert scratch_tables() == []
    with pytest.raises(ImportFailed):
        import_records(write(tmp_path, "bad.csv", TRIPS + "VP-999,2026-10-26,,,\n"))
    assert scratch_tables() == []


@pytest.mark.parametrize(
    ("sql", "stored"),
    [
        ('INSERT INTO "vanpools_trip" ("vanpool_id") SELECT van FROM import_stage_trip', True),
        ("DELETE FROM vanpools_rideday WHERE id IN (SELECT id FROM import_stage_day_gone)", True),
        ('UPDATE "vanpools_vanpool" SET seats = 7', True),
        ("INSERT INTO import_stage_trip VALUES (%s, %s)", False),
        ('insert into "import_stage_scope" values (1)', False),
        ("WITH x AS (SELECT 1) INSERT INTO vanpools_trip SELECT * FROM x", True),
    ],
)
def test_only_writes_to_the_imports_scratch_tables_are_not_stored_writes(sql, stored):
    assert writes_stored_data(sql) is stored


def test_ride_days_take_the_riders_seat_when_no_vanpool_is_named(tmp_path, van):
    other = VanpoolFactory(vanpool_id="VP-202")
    rows = "employee_id,date,vanpool_id\nEMP-1,2026-10-26,\nEMP-2,2026-10-26,VP-202\n"
    import_records(write(tmp_path, "days.csv", rows))
    assert sorted(
        RideDay.objects.values_list("employee__employee_id", "vanpool__vanpool_id", "ref")
    ) == [
        ("EMP-1", "VP-101", "EMP-1 2026-10-26"),
        ("EMP-2", "VP-202", "EMP-2 2026-10-26"),
    ]
    assert {row.vanpool_id for row in DataCoverage.objects.all()} == {van.pk, other.pk}


def test_a_rider_with_no_seat_needs_the_vanpool_named(tmp_path, van):
    EmployeeFactory(employee_id="EMP-50")
    with pytest.raises(ImportFailed) as failed:
        import_records(write(tmp_path, "days.csv", "employee_id,date\nEMP-50,2026-10-26\n"))
    assert str(failed.value.errors[0]) == "line 2, vanpool_id: EMP-50 has no seat: name the vanpool"


def test_gate_swipes_keep_the_sites_clock_and_replace_a_sites_days(tmp_path, van):
    rows = (
        "employee_id,swiped_at,gate,direction\n"
        "EMP-1,2026-10-26T06:52:10-07:00,North,in\n"
        "EMP-2,2026-10-26 15:40,North,out\n"
    )
    import_records(write(tmp_path, "swipes.csv", rows))
    assert sorted(
        BadgeSwipe.objects.values_list("employee__employee_id", "date", "time", "site", "direction")
    ) == [
        ("EMP-1", dt.date(2026, 10, 26), dt.time(6, 52, 10), "Harbor DC", "in"),
        ("EMP-2", dt.date(2026, 10, 26), dt.time(15, 40), "Harbor DC", "out"),
    ]
    assert list(DataCoverage.objects.values_list("kind", "work_site")) == [
        ("badge_swipes", "Harbor DC")
    ]
    again = "employee_id,date,time,gate\nEMP-1,2026-10-26,06:52:10,North\n"
    import_records(write(tmp_path, "again.csv", again), kind="badge_swipes")
    assert BadgeSwipe.objects.count() == 1  # the out swipe that day is no longer in the file


def test_permits_are_upserted_and_the_list_is_recorded_once(tmp_path, van):
    rows = (
        "permit_id,employee_id,lot,valid_from,valid_to,status\n"
        "P-1,EMP-1,Garage B,2026-09-01,2027-08-31,active\n"
    )
    path = write(tmp_path, "permits.csv", rows)
    import_records(path)
    assert writes_of(lambda: import_records(path)) == []
    import_records(write(tmp_path, "returned.csv", rows.replace("active", "returned")))
    assert ParkingPermit.objects.get().status == "returned"
    assert DataCoverage.objects.filter(kind="permits", work_site="").count() == 1


def test_a_permit_ending_before_it_starts_is_refused(tmp_path, van):
    rows = "permit_id,employee_id,lot,valid_from,valid_to\nP-1,EMP-1,B,2026-09-01,2026-08-01\n"
    with pytest.raises(ImportFailed) as failed:
        import_records(write(tmp_path, "p.csv", rows))
    assert (
        str(failed.value.errors[0])
        == "line 2, valid_to: 2026-08-01 is before valid_from 2026-09-01"
    )


def test_a_vans_month_reads_odometer_readings_and_shares_as_operators_write_them(tmp_path, van):
    rows = (
        "vanpool_id,month,seats,odometer_start,odometer_end,miles_per_trip,commute_share\n"
        "VP-101,2026-10,7,41200,42610,31.5,92%\n"
    )
    import_records(write(tmp_path, "months.csv", rows))
    month = VanpoolMonth.objects.get()
    assert (month.month, month.seats, month.vehicle_miles, month.commute_share) == (
        dt.date(2026, 10, 1), 7, 1410.0, 0.92
    )  # fmt: skip


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ("VP-101,2026-10,70,,,,", "line 2, seats: 70 is not a number of seats (1 to 60)"),
        ("VP-101,October,7,,,,", "line 2, month: 'October' is not a month (YYYY-MM)"),
        ("VP-101,2026-10,7,500,400,,", "line 2, odometer_end: is below odometer_start"),
        (
            "VP-101,2026-10,7,,,,140%",
            "line 2, commute_share: '140%' is not a share (0 to 1, or a percent up to 100 %)",
        ),
    ],
)
def test_a_bad_month_row_names_its_column(tmp_path, van, row, error):
    header = "vanpool_id,month,seats,odometer_start,odometer_end,miles_per_trip,commute_share\n"
    with pytest.raises(ImportFailed) as failed:
        import_records(write(tmp_path, "m.csv", header + row + "\n"))
    assert str(failed.value.errors[0]) == error


def test_holidays_for_every_site_or_one(tmp_path):
    import_records(EXAMPLES / "holidays.csv")
    assert sorted(Holiday.objects.values_list("date", "work_site")) == [
        (dt.date(2026, 11, 11), ""),
        (dt.date(2026, 11, 26), ""),
        (dt.date(2026, 11, 27), "Fremont Campus"),
    ]


def test_json_rows_under_their_kind(tmp_path, van):
    data = {
        "trips": [{"vanpool_id": "VP-101", "date": "2026-10-26", "passengers": ["EMP-2", "EMP-3"]}]
    }
    path = write(tmp_path, "trips.json", json.dumps(data))
    import_records(path)
    assert Trip.objects.get().passengers == 2
    with pytest.raises(ImportFailed) as failed:
        import_records(write(tmp_path, "bad.json", json.dumps({"trips": [{"vanpool_id": "VP-1"}]})))
    assert [str(e) for e in failed.value.errors] == [
        "line 1, date: required column is missing",
        "trips[0], date: a value is required",
        "trips[0], vanpool_id: no vanpool VP-1 (import the roster first)",
    ]


def test_the_worked_examples_import_into_the_demo_program():
    load_demo_program()
    trips = import_records(
        EXAMPLES / "operator-trips.csv", mapping=EXAMPLES / "operator-trips-mapping.toml"
    )
    assert trips.counts["trips"]["created"] == 5
    run = Trip.objects.get(trip_ref="R-88415")
    assert (run.vanpool.vanpool_id, run.direction, run.passengers, run.miles) == (
        "VP-101",
        "from_work",
        6,
        31.6,
    )
    assert RideDay.objects.filter(employee__employee_id="EMP-1207").count() == 1
    assert "EMP-9901" in trips.warnings[0]
    import_records(EXAMPLES / "gate-swipes.csv")
    import_records(EXAMPLES / "parking-permits.csv")
    import_records(EXAMPLES / "vanpool-months.csv")
    assert BadgeSwipe.objects.count() == 5
    assert ParkingPermit.objects.count() == 3
    assert VanpoolMonth.objects.get(vanpool__vanpool_id="VP-113").commute_share == 0.92


def test_import_roster_tells_a_record_file_by_its_header(tmp_path, van, capsys):
    call_command("import_roster", str(write(tmp_path, "trips.csv", TRIPS)))
    assert "trips             3        0          0" in capsys.readouterr().out
    with pytest.raises(CommandError, match=r"--period 'Oct': write START\.\.END"):
        call_command("import_roster", str(tmp_path / "trips.csv"), "--period", "Oct")
    roster = write(tmp_path, "employees.csv", "employee_id,first_name\nEMP-1,Ana\n")
    with pytest.raises(CommandError, match="--period and --site are for"):
        call_command("import_roster", str(roster), "--site", "Harbor DC")
