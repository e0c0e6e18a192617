"""Labelled cases for ridership, parking and the vanpool rules: read, stored, judged, scored.

The case shapes are docs/evaluation.md's (written for writers who see only
docs/audit.md's rules). Like the location and shift cases, each is written as
real rows — a vanpool, employees, shifts, leave, seats, trips, ride days,
swipes, permits, a month's report, holidays and what each source covers —
into the current (scratch) database, preloaded and judged by the same
``run_check`` the case manager uses. IDs and site names are made unique per
case, so one case's holidays or coverage never reach another's.

Scored per rider (per van for the vanpool rules): a **wrong fail** is a fail
where the label is not one (a rider who rides enough, or one the data cannot
judge); a **wrong pass** a pass where the label is a fail.
"""

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.test.utils import override_settings

from agents.contracts import SpecialistResult, VanpoolMonthEvidence, combine_verdicts
from agents.tracing import RunTrace
from audit.facts import VanpoolFacts, facts_json, preload_vanpools
from audit.resolve import run_check
from evals.harness.evidence import checked
from evals.harness.results import CaseResult
from vanpools.importing.records.kinds import COLUMNS as IMPORT_COLUMNS
from vanpools.models import (
    BadgeSwipe,
    DataCoverage,
    Employee,
    Holiday,
    Leave,
    ParkingPermit,
    RideDay,
    Rider,
    Shift,
    Trip,
    Vanpool,
    VanpoolMonth,
)

SPECIALIST_KINDS = ("ridership", "parking", "vanpool_rules")
VERDICTS = ("pass", "fail", "unknown")
# A case's trips, ride days and swipes are rows as the import reads them (docs/roster-format.md);
# "at" is an older name of a swipe's swiped_at.
ROW_FIELDS = {
    "trips": frozenset(IMPORT_COLUMNS["trips"]),
    "ride_days": frozenset(IMPORT_COLUMNS["ride_days"]),
    "badge_swipes": frozenset(IMPORT_COLUMNS["badge_swipes"]) | {"at"},
}
RULE_NAMES = ("seats", "occupancy", "commute")
# What a case's "rules" may override, and the setting each one is.
RIDERSHIP_RULES = {
    "window_days": "RIDERSHIP_WINDOW_DAYS",
    "min_days_per_week": "RIDERSHIP_MIN_DAYS_PER_WEEK",
    "min_share": "RIDERSHIP_MIN_SHARE",
    "min_workdays": "RIDERSHIP_MIN_WORKDAYS",
    "swipe_window_minutes": "RIDERSHIP_SWIPE_WINDOW_MINUTES",
}
LONG_AGO = dt.date(2000, 1, 1)  # a seat with no "joined" started long before any window


@dataclass
class Judged:
    expected: dict[str, Any]
    got: dict[str, Any]
    correct: bool
    result: SpecialistResult
    facts: VanpoolFacts
    audit_date: dt.date


# --- Reading -----------------------------------------------------------------------------


def check_specialist_case(case: dict[str, Any]) -> None:
    """Raise ValueError naming the field when a case is not in the documented shape."""
    kind = case["kind"]
    van = case.get("vanpool", {})
    if not isinstance(van, dict):
        raise ValueError("vanpool must be an object")
    riders = case.get("riders", [])
    if not isinstance(riders, list) or not all(
        isinstance(r, dict) and r.get("employee_id") for r in riders
    ):
        raise ValueError("riders must be a list of objects with employee_id")
    ids = [str(r["employee_id"]) for r in riders]
    if len(set(ids)) != len(ids):
        raise ValueError("an employee_id appears twice in riders")
    for rider in riders:
        _date(rider.get("joined"), f"{rider['employee_id']}: joined", optional=True)
        for name in ("pto", "leave"):
            spans(rider.get(name, []), f"{rider['employee_id']}: {name}")
    if kind == "vanpool_rules":
        month_of(case)
        _check_rules_expected(case.get("expected"))
    else:
        _date(case.get("audit_date"), "audit_date")
        _check_rider_expected(case.get("expected"), ids)
    rules = case.get("rules", {})
    if not isinstance(rules, dict) or set(rules) - set(RIDERSHIP_RULES):
        raise ValueError(f"rules may set only {', '.join(RIDERSHIP_RULES)}")
    if "min_share" in rules and "min_days_per_week" in rules:
        raise ValueError("rules: give min_share or min_days_per_week, not both")
    for source in ("trips", "ride_days", "badge_swipes"):
        block = case.get(source)
        if block is not None:
            _check_row_fields(_rows(block, source), source)
            if "covers" in block:
                _covers(block["covers"], f"{source}.covers")
    permits = case.get("permits")
    if permits is not None and not isinstance(permits, list):
        raise ValueError("permits must be a list (or null: no permit data)")


def _check_rider_expected(expected: Any, ids: list[str]) -> None:
    if not isinstance(expected, dict) or expected.get("verdict") not in VERDICTS:
        raise ValueError("expected.verdict must be pass, fail or unknown")
    riders = expected.get("riders")
    if not isinstance(riders, dict) or set(riders) != set(ids):
        raise ValueError("expected.riders must give every rider's verdict")
    if set(riders.values()) - set(VERDICTS):
        raise ValueError("expected.riders: each verdict is pass, fail or unknown")
    if combine_verdicts(list(riders.values())) != expected["verdict"]:
        raise ValueError("expected.verdict does not follow from expected.riders")


def _check_rules_expected(expected: Any) -> None:
    if not isinstance(expected, dict) or expected.get("verdict") not in VERDICTS:
        raise ValueError("expected.verdict must be pass, fail or unknown")
    rules = expected.get("rules")
    if not isinstance(rules, dict) or set(rules) != set(RULE_NAMES):
        raise ValueError(f"expected.rules must give {', '.join(RULE_NAMES)}")
    if set(rules.values()) - set(VERDICTS):
        raise ValueError("expected.rules: each verdict is pass, fail or unknown")


def _rows(block: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(block, dict) or not isinstance(block.get("rows"), list):
        raise ValueError(f"{where} must be an object with a list of rows")
    if not all(isinstance(row, dict) for row in block["rows"]):
        raise ValueError(f"{where}.rows must be objects")
    return block["rows"]


def _check_row_fields(rows: list[dict[str, Any]], source: str) -> None:
    """Each row's fields are the import's columns: a field read by no one is refused.

    A trip's driver given as ``driver`` (not ``driver_id``) was once read as no
    driver at all; the case then judged other data than its writer described.
    """
    allowed = ROW_FIELDS[source]
    for number, row in enumerate(rows, start=1):
        unknown = sorted(set(row) - allowed)
        if unknown:
            raise ValueError(
                f"{source}.rows[{number}]: unknown field {', '.join(map(repr, unknown))} "
                f"(the fields are {', '.join(sorted(allowed))})"
            )
        if source == "badge_swipes" and not ("at" in row or "swiped_at" in row or "time" in row):
            raise ValueError(f"{source}.rows[{number}]: give swiped_at, or date and time")


def _date(raw: Any, where: str, *, optional: bool = False) -> dt.date | None:
    # docs/audit.md: a blank optional date (a permit's valid_to) means no end, as in the importer.
    if optional and (raw is None or raw == ""):
        return None
    try:
        return dt.date.fromisoformat(str(raw))
    except ValueError:
        raise ValueError(f"{where}: {raw!r} is not a date (YYYY-MM-DD)") from None


def _covers(raw: Any, where: str) -> tuple[dt.date, dt.date]:
    start, _, end = str(raw).partition("..")
    first, last = _date(start.strip(), where), _date(end.strip() or start.strip(), where)
    assert first is not None and last is not None
    if last < first:
        raise ValueError(f"{where}: ends before it starts")
    return first, last


def spans(entries: Any, where: str) -> list[tuple[dt.date, dt.date]]:
    """Dates or ``start..end`` ranges, one or a list."""
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        raise ValueError(f"{where} must be a date, a 'start..end' range, or a list of them")
    return [_covers(entry, where) for entry in entries]


def month_of(case: dict[str, Any]) -> dt.date:
    try:
        return dt.datetime.strptime(str(case.get("month")), "%Y-%m").date()
    except ValueError:
        raise ValueError("month must be YYYY-MM") from None


def audit_date_of(case: dict[str, Any]) -> dt.date:
    """The vanpool rules judge the month before the audit: audit on the next month's 1st."""
    if case["kind"] == "vanpool_rules":
        month = month_of(case)
        return (month.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return dt.date.fromisoformat(case["audit_date"])


# --- Storing and judging -----------------------------------------------------------------


def run_specialist_case(case: dict[str, Any], number: int) -> Judged:
    audit_date = audit_date_of(case)
    with case_rules(case):
        vanpool_id = _store(case, number, audit_date)
        facts = preload_vanpools([vanpool_id], audit_date)[vanpool_id]
        root = RunTrace(agent="evaluate", backend="", input={"case": case["id"]})
        result = run_check(case["kind"], facts, audit_date, root)
    if case["kind"] == "vanpool_rules":
        return _judged_van(case, result, facts, audit_date)
    by_stored = {
        _employee_id(r["employee_id"], number): str(r["employee_id"]) for r in case["riders"]
    }
    got_riders = {by_stored[flag.employee_id]: flag.verdict for flag in result.riders}
    expected = {"verdict": case["expected"]["verdict"], "riders": case["expected"]["riders"]}
    got = {"verdict": result.verdict, "riders": got_riders}
    return Judged(expected, got, expected == got, result, facts, audit_date)


def _judged_van(
    case: dict[str, Any], result: SpecialistResult, facts: VanpoolFacts, audit_date: dt.date
) -> Judged:
    month = next(item for item in result.evidence if isinstance(item, VanpoolMonthEvidence))
    expected = {"verdict": case["expected"]["verdict"], "rules": case["expected"]["rules"]}
    got = {"verdict": result.verdict, "rules": dict(month.rules)}
    return Judged(expected, got, expected == got, result, facts, audit_date)


@contextmanager
def case_rules(case: dict[str, Any]) -> Iterator[None]:
    rules = case.get("rules", {})
    overrides = {RIDERSHIP_RULES[name]: value for name, value in rules.items()}
    if "min_days_per_week" in rules:
        overrides["RIDERSHIP_MIN_SHARE"] = None  # the case names days a week: no share
    with override_settings(**overrides):
        yield


def _employee_id(raw: object, number: int) -> str:
    return f"EVAL{number}-{raw}"


def _site(case: dict[str, Any], number: int) -> str:
    return f"{case.get('vanpool', {}).get('work_site') or 'Evaluation'} #{number}"


def _store(case: dict[str, Any], number: int, audit_date: dt.date) -> str:
    van = case.get("vanpool", {})
    vanpool_id = f"VP-EVAL{number}"
    site = _site(case, number)
    vanpool = Vanpool.objects.create(
        vanpool_id=vanpool_id,
        name=case["id"][:120],
        work_site=site,
        schedule=van.get("schedule") or [],
        seats=van.get("seats"),
        miles_per_trip=van.get("miles_per_trip"),
    )
    employees = {
        str(rider["employee_id"]): _store_rider(vanpool, rider, number, index)
        for index, rider in enumerate(case.get("riders", []))
    }
    window = (audit_date - dt.timedelta(days=400), audit_date - dt.timedelta(days=1))
    if case["kind"] == "vanpool_rules":
        month = month_of(case)
        window = (month, audit_date - dt.timedelta(days=1))
    _store_trips(case, vanpool, employees, window, number)
    _store_ride_days(case, vanpool, employees, window)
    _store_swipes(case, vanpool, employees, window, site)
    _store_permits(case, employees, site, number)
    _store_month(case, vanpool)
    for entry in case.get("holidays", []):
        day, name = (
            (entry["date"], entry.get("name", "holiday"))
            if isinstance(entry, dict)
            else (entry, "holiday")
        )
        Holiday.objects.get_or_create(
            date=dt.date.fromisoformat(day), work_site=site, defaults={"name": name}
        )
    return vanpool_id


def _store_rider(vanpool: Vanpool, rider: dict[str, Any], number: int, index: int) -> Employee:
    employee = Employee.objects.create(
        employee_id=_employee_id(rider["employee_id"], number),
        first_name="Eval",
        last_name=str(index),
        email=f"eval{number}-{index}@example.com",
        work_site=vanpool.work_site,
        home_zip="94587",
        status=rider.get("status", "active"),
        time_type=rider.get("time_type", "full_time"),
        shift=_store_shift(rider.get("shift"), number, index),
    )
    for name in ("pto", "leave"):
        for start, end in spans(rider.get(name, []), name):
            Leave.objects.get_or_create(
                employee=employee, start_date=start, end_date=end, kind=name
            )
    joined = _date(rider.get("joined"), "joined", optional=True) or LONG_AGO
    Rider.objects.create(vanpool=vanpool, employee=employee, joined=joined)
    return employee


def _store_shift(shift: dict[str, Any] | None, number: int, index: int) -> Shift | None:
    if not shift:
        return None
    return Shift.objects.create(
        shift_id=f"EVAL{number}-{index}",
        name=str(shift.get("name", "shift"))[:100],
        schedule=shift.get("schedule") or [],
        rotation=shift.get("rotation"),
        schedule_text=str(shift.get("schedule_text", ""))[:500],
        overnight=bool(shift.get("overnight", False)) or _crosses_midnight(shift),
    )


def _crosses_midnight(shift: dict[str, Any]) -> bool:
    days = list(shift.get("schedule") or []) + list((shift.get("rotation") or {}).get("days", []))
    return any(day and str(day.get("end", "")) < str(day.get("start", "")) for day in days)


def _coverage(
    kind: str, block: dict[str, Any], window: tuple[dt.date, dt.date], **where: Any
) -> None:
    start, end = _covers(block["covers"], kind) if "covers" in block else window
    DataCoverage.objects.create(kind=kind, start=start, end=end, **where)


def _own_van(row: dict[str, Any], case: dict[str, Any]) -> bool:
    named = row.get("vanpool_id")
    return not named or named == case.get("vanpool", {}).get("vanpool_id")


def _store_trips(
    case: dict[str, Any],
    vanpool: Vanpool,
    employees: dict[str, Employee],
    window: tuple[dt.date, dt.date],
    number: int,
) -> None:
    block = case.get("trips")
    if block is None:
        return
    _coverage(DataCoverage.Kind.TRIPS, block, window, vanpool=vanpool)
    for index, row in enumerate(_rows(block, "trips")):
        if not _own_van(row, case):
            continue  # another van's trip: it shows no one aboard this one
        driver = str(row["driver_id"]) if row.get("driver_id") is not None else None
        named = [str(p) for p in row.get("passengers") or []]
        aboard = {p for p in named if p != driver}
        count = len(aboard) if named else int(row.get("passenger_count") or 0)
        ref = f"EVAL{number}-{row.get('trip_id') or index}"
        trip = Trip.objects.create(
            vanpool=vanpool,
            date=dt.date.fromisoformat(row["date"]),
            direction=row.get("direction", ""),
            trip_ref=ref,
            driver=employees.get(driver) if driver else None,
            passengers=count,
        )
        for person in {*named, *([driver] if driver else [])}:
            if person in employees:
                RideDay.objects.get_or_create(
                    vanpool=vanpool,
                    employee=employees[person],
                    date=trip.date,
                    source=RideDay.Source.TRIP,
                    defaults={"ref": ref},
                )


def _store_ride_days(
    case: dict[str, Any],
    vanpool: Vanpool,
    employees: dict[str, Employee],
    window: tuple[dt.date, dt.date],
) -> None:
    block = case.get("ride_days")
    if block is None:
        return
    _coverage(DataCoverage.Kind.RIDE_DAYS, block, window, vanpool=vanpool)
    for index, row in enumerate(_rows(block, "ride_days")):
        person = str(row.get("employee_id"))
        if not _own_van(row, case):
            continue
        # A ride-day row for someone not in the case still counts toward the van's month.
        employee = employees.get(person) or _passer_by(vanpool, person)
        RideDay.objects.get_or_create(
            vanpool=vanpool,
            employee=employee,
            date=dt.date.fromisoformat(row["date"]),
            source=RideDay.Source.RIDE_DAY,
            defaults={"ref": f"row {index + 1}"},
        )


def _passer_by(vanpool: Vanpool, person: str) -> Employee:
    employee, _ = Employee.objects.get_or_create(
        employee_id=f"{vanpool.vanpool_id[3:]}-X-{person}"[:20].upper().replace("_", "-"),
        defaults={
            "first_name": "Other",
            "last_name": person,
            "email": "other@example.com",
            "work_site": vanpool.work_site,
            "home_zip": "94587",
        },
    )
    return employee


def _store_swipes(
    case: dict[str, Any],
    vanpool: Vanpool,
    employees: dict[str, Employee],
    window: tuple[dt.date, dt.date],
    site: str,
) -> None:
    block = case.get("badge_swipes")
    if block is None:
        return
    _coverage(DataCoverage.Kind.BADGE_SWIPES, block, window, work_site=site)
    given_site = str(case.get("vanpool", {}).get("work_site") or "").strip().casefold()
    for row in _rows(block, "badge_swipes"):
        employee = employees.get(str(row.get("employee_id")))
        if employee is None:
            continue
        at = _swiped_at(row)
        swipe_site = str(row.get("site") or "")
        if swipe_site and swipe_site.strip().casefold() == given_site:
            swipe_site = site  # the case's site, renamed as the van's was
        BadgeSwipe.objects.get_or_create(
            employee=employee,
            date=at.date(),
            time=at.time().replace(tzinfo=None),
            gate="",
            defaults={"site": swipe_site, "direction": row.get("direction", "")},
        )


def _swiped_at(row: dict[str, Any]) -> dt.datetime:
    """The swipe's moment: ``swiped_at`` (or ``at``), or its ``date`` and ``time``."""
    given = row.get("swiped_at") or row.get("at")
    if given:
        return dt.datetime.fromisoformat(str(given))
    return dt.datetime.combine(
        dt.date.fromisoformat(str(row["date"])), dt.time.fromisoformat(str(row["time"]))
    )


def _store_permits(
    case: dict[str, Any], employees: dict[str, Employee], site: str, number: int
) -> None:
    permits = case.get("permits")
    if permits is None:
        return
    DataCoverage.objects.create(kind=DataCoverage.Kind.PERMITS, work_site=site)
    for index, row in enumerate(permits):
        employee = employees.get(str(row.get("employee_id")))
        if employee is None:
            continue
        ParkingPermit.objects.create(
            permit_id=f"EVAL{number}-{row.get('permit_id') or index}",
            employee=employee,
            lot=str(row.get("lot", "")),
            valid_from=dt.date.fromisoformat(row["valid_from"]),
            valid_to=_date(row.get("valid_to"), "valid_to", optional=True),
            status=row.get("status", "active"),
            kind=row.get("kind", "standard"),
        )


def _store_month(case: dict[str, Any], vanpool: Vanpool) -> None:
    given = case.get("month_facts")
    if not given or case["kind"] != "vanpool_rules":
        return
    VanpoolMonth.objects.create(
        vanpool=vanpool,
        month=month_of(case),
        seats=given.get("seats"),
        vehicle_miles=given.get("vehicle_miles"),
        miles_per_trip=given.get("miles_per_trip"),
        commute_share=given.get("commute_share"),
    )


def reasoning_evidence(judged: Judged) -> list[Any]:
    """What the check's reasoning may cite besides its evidence: its input and the day."""
    return [judged.result.evidence, facts_json(judged.facts), judged.audit_date.isoformat()]


# --- Scoring ----------------------------------------------------------------------------


def specialist_metrics(pairs: list[tuple[dict[str, Any], dict[str, Any], bool]]) -> dict[str, Any]:
    """Case accuracy, and per rider (or van) accuracy, wrong fails and wrong passes."""
    total = len(pairs) or 1
    units = [unit for expected, got, _ in pairs for unit in _units(expected, got)]
    return {
        "verdict_accuracy": sum(correct for _, _, correct in pairs) / total,
        "unit_accuracy": sum(e == g for e, g in units) / (len(units) or 1),
        "wrong_fail": sum(g == "fail" and e != "fail" for e, g in units),
        "wrong_pass": sum(e == "fail" and g == "pass" for e, g in units),
        "unknown_passed": sum(e == "unknown" and g == "pass" for e, g in units),
        "unknown_rate": sum(got["verdict"] == "unknown" for _, got, _ in pairs) / total,
        "wrong_pass_on_conflict": sum(
            expected["verdict"] == "fail" and got["verdict"] == "pass" for expected, got, _ in pairs
        ),
    }


def _units(expected: dict[str, Any], got: dict[str, Any]) -> list[tuple[str, str]]:
    if "riders" in expected:
        return [
            (verdict, got["riders"].get(rider, "")) for rider, verdict in expected["riders"].items()
        ]
    return [(expected["verdict"], got["verdict"])]


def run_specialist_result(case: dict[str, Any], number: int) -> CaseResult:
    """One item judged and scored, with its reasoning checked against the rows it cites."""
    judged = run_specialist_case(case, number)
    text = judged.result.reasoning
    return CaseResult(
        id=case["id"],
        kind=case["kind"],
        expected=judged.expected,
        got=judged.got,
        correct=judged.correct,
        checked=[checked(f"{case['kind']} reasoning", text, reasoning_evidence(judged))],
    )
