"""Planning a vanpool row: the shared checks, and its coordinator by email."""

from django.contrib.auth.models import User

from vanpools.importing.check.context import Checking
from vanpools.importing.check.plans import Plan
from vanpools.importing.check.rows import apply_values, claim_id, parse_row, validate_row
from vanpools.importing.rows import Row
from vanpools.models import Vanpool


def plan_vanpool(checking: Checking, row: Row, first_error: int) -> Plan | None:
    values = parse_row(checking, row, "vanpools")
    key = claim_id(checking, row, "vanpools", values)
    if key is None:
        return None
    vanpool = checking.known.vanpools.get(key) or Vanpool(vanpool_id=key)
    checking.known.vanpools[key] = vanpool  # the file's employees may be seated on it
    plan = apply_values(row, vanpool, "vanpools", values)
    if "coordinator_email" in values:
        coordinator = _coordinator(checking, row, values["coordinator_email"])
        if coordinator is not None and vanpool.coordinator_id != coordinator.pk:
            plan.before["coordinator"] = vanpool.coordinator.email if vanpool.coordinator else ""
            vanpool.coordinator = coordinator
            plan.changed.add("coordinator")
    validate_row(checking, row, vanpool, "vanpools", first_error)
    return plan


def _coordinator(checking: Checking, row: Row, email: str) -> User | None:
    users = checking.known.coordinators.get(email.lower(), [])
    if len(users) == 1:
        return users[0]
    if users:
        checking.error(row, "coordinator_email", f"'{email}' belongs to several staff users")
    else:
        checking.error(row, "coordinator_email", f"'{email}' is not the email of a staff user")
    return None
