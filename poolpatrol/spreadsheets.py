"""Rows for auditors' spreadsheets, CSV or XLSX, with text that stays text.

A spreadsheet reads a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
formula; exports carry text from HR files and riders' emails, so every text
cell is made inert (``inert``) and every XLSX text cell is typed as text.
Numbers stay numbers. Used by the findings export and the monthly vanpool
report.
"""

import csv
import io
import re
from collections.abc import Iterable, Sequence

from openpyxl import Workbook
from openpyxl.utils import get_column_letter

Cell = str | int | float | None

# A spreadsheet reads a cell that starts with one of these as a formula (a tab or
# a carriage return before the formula hides it from a first-character check).
FORMULA_STARTS = "=+-@\t\r"
# Which character splits a line into cells is the reader's locale and import
# choice, not ours: "Fremont;=1+1;" is one cell here and a live formula where
# ";" separates. Line breaks count too, for readers that ignore the quotes.
CELL_SEPARATORS = ",;\t|\r\n"
_FORMULA = re.compile(
    rf"(^|[{re.escape(CELL_SEPARATORS)}])([ \"]*)(?=[{re.escape(FORMULA_STARTS)}])"
)


def inert(value: str) -> str:
    """``value`` with a quote before every formula start, at the beginning of the value
    and after any character a spreadsheet may split cells on (spaces and quotes between
    them skipped, as a reader may trim them): every piece stays text (rider's words
    reach the evidence column, an HR export the work site)."""
    return _FORMULA.sub(lambda match: f"{match.group(1)}{match.group(2)}'", value)


def _csv_cell(value: Cell) -> str | int | float:
    if value is None:
        return ""
    return inert(value) if isinstance(value, str) else value


def as_csv(columns: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    writer.writerows([_csv_cell(value) for value in row] for row in rows)
    return out.getvalue()


def as_xlsx(columns: Sequence[str], rows: Iterable[Sequence[Cell]], title: str) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None  # a new workbook has one sheet
    sheet.title = title
    sheet.append(list(columns))
    widths = [len(name) for name in columns]
    for row in rows:
        sheet.append(list(row))
        for cell in sheet[sheet.max_row]:
            if isinstance(cell.value, str):
                cell.data_type = "s"  # text stays text: never a formula, a number or a date
        widths = [
            max(width, min(len(str(value if value is not None else "")), 60))
            for width, value in zip(widths, row, strict=True)
        ]
    for index, width in enumerate(widths, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width + 2
    sheet.freeze_panes = "A2"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
