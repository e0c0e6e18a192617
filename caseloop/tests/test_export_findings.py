"""Findings for auditors: one row per case, as CSV or XLSX, from a command and the admin."""

import csv
import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from openpyxl import load_workbook

from caseloop.audits import audit_vanpool
from cases.export import COLUMNS, as_csv, as_xlsx, findings
from cases.models import Case
from tests.factories import EmployeeFactory, RiderFactory, VanpoolFactory

pytestmark = pytest.mark.django_db

FAR_ZIP = "90026"


def failing_case(**van_fields) -> Case:
    vanpool = VanpoolFactory(**van_fields)
    for home_zip in ("94587", FAR_ZIP):
        RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=home_zip))
    audit_vanpool(vanpool.vanpool_id)
    return Case.objects.get(vanpool=vanpool)


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_row_names_the_case_the_flagged_riders_and_the_evidence():
    case = failing_case()

    [row] = rows_of(as_csv(findings(Case.objects.all())))

    assert list(row) == list(COLUMNS)
    assert (row["case_id"], row["vanpool_id"], row["status"]) == (
        case.case_id,
        case.vanpool.vanpool_id,
        "open",
    )
    far = case.vanpool.riders.get(employee__home_zip=FAR_ZIP).employee.employee_id
    assert row["failed_checks"] == "location"
    assert row["flagged_riders"] == f"{far} (location)"  # the rider who passes is not listed
    assert row["evidence"].startswith("location: ") and far in row["evidence"]
    assert "Street" not in row["evidence"]  # no home address leaves in a spreadsheet


def test_the_export_takes_the_same_queries_for_2_and_20_cases():
    def queries(count: int) -> int:
        for _ in range(count):
            failing_case()
        with CaptureQueriesContext(connection) as captured:
            list(findings(Case.objects.all()))
        return len(captured)

    assert queries(2) == queries(18) == 2


def test_a_formula_in_a_cell_stays_text_in_both_formats():
    case = failing_case()
    case.meta = {**case.meta, "failed_checks": ["location"], "reason": '=HYPERLINK("x")'}
    case.save(update_fields=["meta"])

    [row] = rows_of(as_csv(findings(Case.objects.all())))
    sheet = load_workbook(io.BytesIO(as_xlsx(findings(Case.objects.all())))).active

    assert row["reason"].startswith("'=")
    reason = sheet.cell(row=2, column=COLUMNS.index("reason") + 1)
    assert (reason.value, reason.data_type) == ('=HYPERLINK("x")', "s")


FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r"]
SEPARATORS = [",", ";", "\t", "|"]


def pieces(cell: str) -> list[str]:
    """The cells a spreadsheet may make of ``cell``, splitting on any separator,
    with the spaces and quotes a reader may trim."""
    return [piece.lstrip(' "') for piece in re.split(r"[,;\t|\r\n]", cell)]


@pytest.mark.parametrize("separator", SEPARATORS, ids=repr)
@pytest.mark.parametrize("start", FORMULA_STARTS, ids=repr)
def test_fault_67_a_formula_after_any_separator_stays_text_in_both_formats(start, separator):
    # An HR export's work site, as the probe wrote it: one cell here, three where the
    # separator is the reader's; and the same at the very start of the value.
    formula = f"{start}=1+1" if start in "\t\r" else f"{start}1+1"  # hidden behind a blank
    site = f"Fremont{separator}{formula}{separator}"
    reason = f'{formula}{separator} "{formula}"'
    case = failing_case(work_site=site)
    case.meta = {**case.meta, "reason": reason}
    case.save(update_fields=["meta"])

    [row] = rows_of(as_csv(findings(Case.objects.all())))
    sheet = load_workbook(io.BytesIO(as_xlsx(findings(Case.objects.all())))).active

    for column, written in (("work_site", site), ("reason", reason)):
        cell = row[column]
        live = [piece for piece in pieces(cell) if piece[:1] in FORMULA_STARTS and piece]
        assert not live, (column, cell)
        assert cell.replace("'", "") == written  # the quotes are all that was added
        kept = sheet.cell(row=2, column=COLUMNS.index(column) + 1)
        as_xml_reads_it = written.replace("\r", "\n")  # XML reads every line end as LF
        assert (kept.value, kept.data_type) == (as_xml_reads_it, "s")


def test_the_command_writes_xlsx_with_a_header_and_a_row_per_case(tmp_path, capsys):
    failing_case()
    failing_case()
    out = tmp_path / "findings.xlsx"

    call_command("export_findings", "--output", str(out))

    sheet = load_workbook(out).active
    assert [cell.value for cell in sheet[1]] == list(COLUMNS)
    assert sheet.max_row == 3
    assert "2 cases written to" in capsys.readouterr().out


def test_the_command_filters_by_status_and_site(capsys):
    failing_case(work_site="Fremont Campus")
    failing_case(work_site="Columbus DC")

    call_command("export_findings", "--site", "columbus dc")

    assert [row["work_site"] for row in rows_of(capsys.readouterr().out)] == ["Columbus DC"]
    call_command("export_findings", "--status", "closed")
    assert rows_of(capsys.readouterr().out) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--status", "pending"], "--status 'pending': one of open, closed, all"),
        (["--format", "pdf"], "--format 'pdf': one of csv, xlsx"),
        (["--output", "findings.ods"], "--format 'ods': one of csv, xlsx"),
        (["--format", "xlsx"], "an XLSX file needs --output FILE.xlsx"),
        (["--output", "/no/such/folder/f.csv"], "the folder /no/such/folder does not exist"),
    ],
)
def test_the_command_refuses_what_it_cannot_write_and_says_why(args, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("export_findings", *args)


def test_the_admin_exports_the_selected_cases(client, auditor):
    case, other = failing_case(), failing_case()
    client.force_login(auditor)

    response = client.post(
        "/admin/cases/case/",
        {"action": "export_csv", "_selected_action": [case.pk]},
    )

    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="findings-')
    rows = rows_of(response.content.decode("utf-8-sig"))
    assert [row["case_id"] for row in rows] == [case.case_id]
    assert other.case_id not in response.content.decode("utf-8-sig")

    chosen = {"action": "export_xlsx", "_selected_action": [case.pk]}
    xlsx = client.post("/admin/cases/case/", chosen)
    assert load_workbook(io.BytesIO(xlsx.content)).active.max_row == 2
