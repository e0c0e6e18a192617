"""Planning a shift row: its schedule columns, then the shared checks."""

from vanpools.importing.check.context import Checking
from vanpools.importing.check.plans import Plan
from vanpools.importing.check.rows import apply_values, claim_id, parse_row, validate_row
from vanpools.importing.columns import SHIFT_SCHEDULE_COLUMNS
from vanpools.importing.rows import Row
from vanpools.models import Shift


def plan_shift(checking: Checking, row: Row, first_error: int) -> Plan | None:
    values = parse_row(checking, row, "shifts")
    given = [column for column in SHIFT_SCHEDULE_COLUMNS if column in row.cells]
    if not given and "schedule" not in checking.reported_missing("shifts"):
        checking.error(row, "schedule", "give a schedule, rotation or schedule_text")
    key = claim_id(checking, row, "shifts", values)
    if key is None:
        return None
    shift = checking.known.shifts.get(key) or Shift(shift_id=key)
    checking.known.shifts[key] = shift  # the file's employees may name it
    plan = apply_values(row, shift, "shifts", values)
    validate_row(checking, row, shift, "shifts", first_error)
    return plan
