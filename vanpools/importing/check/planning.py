"""The check stage run over a file: each kind's planner in import order, bad rows set aside."""

from collections.abc import Callable
from dataclasses import dataclass

from vanpools.importing.check.context import Checking
from vanpools.importing.check.employees import plan_employee
from vanpools.importing.check.known import Known, load_known
from vanpools.importing.check.plans import Plan
from vanpools.importing.check.shifts import plan_shift
from vanpools.importing.check.vanpools import plan_vanpool
from vanpools.importing.columns import KINDS
from vanpools.importing.result import RowError
from vanpools.importing.rows import Row, Table

# A row's plan, or None when it cannot be planned; its errors go to the Checking.
PlanRow = Callable[[Checking, Row, int], Plan | None]
# One planner per kind; they run in KINDS order (an employee may name a shift or a
# vanpool of the same file).
PLANNERS: dict[str, PlanRow] = {
    "shifts": plan_shift,
    "vanpools": plan_vanpool,
    "employees": plan_employee,
}


@dataclass
class Planned:
    """The check stage's result: each kind's writes, the rows refused, every error."""

    plans: dict[str, list[Plan]]
    refused: dict[str, int]  # rows with errors, per kind
    errors: list[RowError]  # the read stage's, then the check stage's
    known: Known


def plan_import(tables: list[Table], errors: list[RowError]) -> Planned:
    """Check every row and decide each write; ``errors`` are the read stage's so far."""
    by_kind = {table.kind: table for table in tables}
    checking = Checking(by_kind, load_known(by_kind), list(errors))
    plans: dict[str, list[Plan]] = {kind: [] for kind in KINDS}
    for kind in KINDS:
        table = by_kind.get(kind)
        for row in table.rows if table else []:
            plan = PLANNERS[kind](checking, row, len(checking.errors))
            if plan is not None:
                plans[kind].append(plan)
    refused = _set_refused_aside(by_kind, plans, checking.errors)
    return Planned(plans, refused, checking.errors, checking.known)


def _set_refused_aside(
    tables: dict[str, Table], plans: dict[str, list[Plan]], errors: list[RowError]
) -> dict[str, int]:
    """Rows with an error are refused: a preview counts them apart from the rest."""
    bad = {error.where for error in errors}
    refused = {}
    for kind in plans:
        table = tables.get(kind)
        refused[kind] = sum(row.where in bad for row in table.rows) if table else 0
        plans[kind] = [plan for plan in plans[kind] if plan.where not in bad]
    return refused
