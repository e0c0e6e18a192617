"""The monthly vanpool report: its figures, the command, and the admin action."""

import csv
import datetime as dt
import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from openpyxl import load_workbook

from tests.factories import EmployeeFactory, RiderFactory, VanpoolFactory
from vanpools.models import RideDay, Trip, Vanpool, VanpoolMonth
from vanpools.monthly_report import COLUMNS, report_rows

pytestmark = pytest.mark.django_db
OCTOBER = dt.date(2026, 10, 1)


def logged_van(vanpool_id: str = "VP-101", **fields) -> Vanpool:
    """Seven seats, 30 miles a trip; 20 days in October, there and back with 4 aboard."""
    van = VanpoolFactory(vanpool_id=vanpool_id, seats=7, miles_per_trip=30, **fields)
    for day in range(1, 21):
        for direction in ("to_work", "from_work"):
            Trip.objects.create(
                vanpool=van,
                date=dt.date(2026, 10, day),
                direction=direction,
                trip_ref=f"{vanpool_id}-{day}-{direction}",
                passengers=4,
            )
    Trip.objects.create(  # November: not October's
        vanpool=van, date=dt.date(2026, 11, 2), trip_ref=f"{vanpool_id}-nov", passengers=9
    )
    return van


def rows(month: dt.date = OCTOBER) -> list[dict[str, object]]:
    return [
        dict(zip(COLUMNS, row, strict=True)) for row in report_rows(Vanpool.objects.all(), month)
    ]


def test_each_van_gets_its_months_trips_passengers_and_miles():
    logged_van()
    VanpoolMonth.objects.create(vanpool=Vanpool.objects.get(), month=OCTOBER, vehicle_miles=1500)
    (row,) = rows()
    assert row | {} == {
        "vanpool_id": "VP-101",
        "name": row["name"],
        "work_site": row["work_site"],
        "month": "2026-10",
        "days_operated": 20,
        "trips": 40,
        "passenger_trips": 160,
        "unlinked_passenger_trips": 200,  # the driver of each trip counts too
        "passenger_miles": 6000.0,
        "vehicle_miles": 1500.0,
        "vehicle_miles_source": "odometer",
        "revenue_miles": 1200.0,
        "miles_per_trip": 30.0,
        "seats": 7,
        "average_passengers": 4.0,
        "average_occupancy": 0.5714,
        "commute_share": 0.8,
        "commute_share_source": "computed",
    }


def test_a_van_with_ride_days_only_counts_two_trips_a_day():
    van = VanpoolFactory(vanpool_id="VP-102", seats=12)
    riders = [RiderFactory(vanpool=van, employee=EmployeeFactory()).employee for _ in range(6)]
    for day in range(1, 11):
        for employee in riders:
            RideDay.objects.create(
                vanpool=van,
                employee=employee,
                date=dt.date(2026, 10, day),
                source="ride_day",
                ref="r",
            )
    (row,) = rows()
    assert (row["days_operated"], row["trips"], row["passenger_trips"]) == (10, 20, 120)
    assert (row["average_occupancy"], row["vehicle_miles"], row["seats"]) == (0.5, None, 12)


def test_a_van_with_no_data_has_blank_figures_not_zeros_where_unknown():
    VanpoolFactory(vanpool_id="VP-103")
    (row,) = rows()
    assert (row["trips"], row["seats"], row["average_occupancy"], row["vehicle_miles"]) == (
        0, None, None, None
    )  # fmt: skip


def test_the_report_takes_the_same_queries_for_ten_or_a_hundred_vans():
    def queries(count: int) -> int:
        for n in range(count):
            VanpoolFactory(vanpool_id=f"VP-Q{count}-{n}")
        with CaptureQueriesContext(connection) as captured:
            list(report_rows(Vanpool.objects.all(), OCTOBER))
        return len(captured)

    assert queries(10) == queries(100) == 4


def test_the_command_writes_csv_to_the_terminal(capsys):
    logged_van()
    call_command("export_vanpool_report", "--month", "2026-10")
    parsed = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["vanpool_id"], r["trips"], r["seats"]) for r in parsed] == [("VP-101", "40", "7")]


def test_the_command_writes_xlsx_with_numbers_as_numbers(tmp_path):
    logged_van(name="=HYPERLINK(1)")
    out = tmp_path / "report.xlsx"
    call_command("export_vanpool_report", "--month", "2026-10", "--output", str(out))
    sheet = load_workbook(out).active
    header = [cell.value for cell in sheet[1]]
    cells = dict(zip(header, sheet[2], strict=True))
    assert (cells["trips"].value, cells["average_occupancy"].value) == (40, 0.5714)
    # Text from a file stays text: never a formula.
    assert (cells["name"].value, cells["name"].data_type) == ("=HYPERLINK(1)", "s")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--month", "October"], "'October' is not a month: write YYYY-MM"),
        (["--month", "2026-10", "--format", "pdf"], "--format 'pdf': one of csv, xlsx"),
        (["--month", "2026-10", "--format", "xlsx"], "an XLSX file needs --output"),
    ],
)
def test_the_command_refuses_bad_arguments(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("export_vanpool_report", *args)


def test_the_admin_action_asks_for_the_month_then_downloads(client, auditor):
    van = logged_van()
    client.force_login(auditor)
    url = "/admin/vanpools/vanpool/"
    chosen = {"action": "export_monthly_report", "_selected_action": [van.pk]}
    page = client.post(url, chosen)
    assert page.status_code == 200
    assert b'value="2026-10"' in page.content  # last month, by default
    bad = client.post(url, chosen | {"apply": "1", "month": "10/2026", "format": "csv"})
    assert b"is not a month" in bad.content
    download = client.post(url, chosen | {"apply": "1", "month": "2026-10", "format": "csv"})
    assert download["Content-Disposition"] == 'attachment; filename="vanpool-report-2026-10.csv"'
    parsed = list(csv.DictReader(io.StringIO(download.content.decode("utf-8-sig"))))
    assert [(r["vanpool_id"], r["days_operated"]) for r in parsed] == [("VP-101", "20")]
