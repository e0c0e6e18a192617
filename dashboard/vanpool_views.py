"""Vanpool pages: the list, and a vanpool's map and week (an employee's page: employee_views).

Distances here are the offline estimate (great-circle × circuity) from the
records as they are now, measured the way the location check measures them
(stored home coordinates, else the ZIP centroid; the pickup point, else its
ZIP, else the work site). Flags come from the vanpool's open case: what the
audit found, not a fresh verdict.

Data minimisation: without ``vanpools.view_home_address`` a user sees a
rider's ZIP and miles, never the street address, and the map puts the rider at
the ZIP centroid even when exact coordinates are on record.
"""

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Count, Exists, JSONField, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from audit.facts import RiderFacts, VanpoolFacts, rider_facts
from audit.location import Unplaceable, place_home, place_pickup
from audit.shift.days import compare_day
from audit.shift.readings import RiderShift, Unreadable, read_shift
from audit.shift.van import VanSchedule, read_van_schedule
from cases.models import Case
from dashboard.access import HtmxHttpRequest, dashboard_view, paginate
from dashboard.charts import vanpool_map, week
from dashboard.vanpool_forms import CLEAR, FLAGGED, VanpoolFilterForm
from poolpatrol.privacy import may_see_home
from vanpools.geo import OfflineDistanceProvider, Point, zip_centroid
from vanpools.models import Employee, Leave, Rider, Vanpool

if TYPE_CHECKING:
    from typing import TypeAlias, TypedDict

    from django_stubs_ext import WithAnnotations

    class _RowAnnotations(TypedDict):
        flagged: bool
        open_case_id: str | None
        open_case_status: str | None
        open_case_meta: dict | None
        active_seats: int

    VanpoolRows: TypeAlias = QuerySet[WithAnnotations[Vanpool, _RowAnnotations]]

REASONS: dict[str, str] = dict(Case.Reason.choices)
STATUSES: dict[str, str] = dict(Case.Status.choices)


def can_see_home_address(request: HttpRequest) -> bool:
    return may_see_home(request.user)


# --- The list --------------------------------------------------------------------------------


def _open_cases() -> QuerySet[Case]:
    return Case.objects.filter(vanpool=OuterRef("pk")).exclude(status=Case.Status.CLOSED)


def vanpool_rows() -> "VanpoolRows":
    """Every vanpool with its open case (if any) and active seat count, flagged first."""
    open_cases = _open_cases()
    seats = (
        Rider.objects.filter(vanpool=OuterRef("pk"), status=Rider.Status.ACTIVE)
        .order_by()
        .values("vanpool")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Vanpool.objects.annotate(
        flagged=Exists(open_cases),
        open_case_id=Subquery(open_cases.values("case_id")[:1]),
        open_case_status=Subquery(open_cases.values("status")[:1]),
        open_case_meta=Subquery(open_cases.values("meta")[:1], output_field=JSONField()),
        active_seats=Coalesce(Subquery(seats), 0),
    ).order_by("-flagged", "vanpool_id")


def filter_vanpools(rows: "VanpoolRows", data: dict) -> "VanpoolRows":
    if data.get("q"):
        rows = rows.filter(Q(vanpool_id__icontains=data["q"]) | Q(name__icontains=data["q"]))
    if data.get("site"):
        rows = rows.filter(work_site=data["site"])
    if data.get("status"):
        rows = rows.filter(status=data["status"])
    flag = data.get("flag")
    if flag == FLAGGED:
        rows = rows.filter(flagged=True)
    elif flag == CLEAR:
        rows = rows.filter(flagged=False)
    elif flag:
        rows = rows.filter(Exists(_open_cases().filter(meta__reason=flag)))
    return rows


def flagged_riders(meta: dict | None) -> list[str]:
    """Employee IDs an open case flagged on any check (its rider_flags)."""
    flags = (meta or {}).get("rider_flags") or {}
    if not isinstance(flags, dict):
        return []
    return sorted(
        eid for eid, checks in flags.items() if isinstance(checks, dict) and _is_flagged(checks)
    )


def _is_flagged(checks: dict) -> bool:
    return any(verdict != "pass" for verdict in checks.values())


@require_GET
@dashboard_view
def vanpool_list(request: HtmxHttpRequest) -> HttpResponse:
    sites = list(
        Vanpool.objects.order_by("work_site").values_list("work_site", flat=True).distinct()
    )
    form = VanpoolFilterForm(request.GET, sites=sites)
    context: dict = {"nav": "vanpools", "form": form}
    if not form.is_valid():
        return render(request, "vanpools/list.html", context, status=400)
    filters = {k: v for k, v in form.cleaned_data.items() if k != "page" and v}
    page = paginate(filter_vanpools(vanpool_rows(), filters), form.cleaned_data["page"])
    for vanpool in page:
        meta = vanpool.open_case_meta or {}
        vanpool.open_case_reason = REASONS.get(meta.get("reason", ""), "flagged")
        vanpool.open_case_status_label = STATUSES.get(vanpool.open_case_status or "", "")
        vanpool.flagged_count = len(flagged_riders(meta))
    context.update(
        page=page,
        query=_urlencode(filters),
        filtered=bool(filters),
    )
    template = "vanpools/list.html#rows" if request.htmx else "vanpools/list.html"
    return render(request, template, context)


def _urlencode(filters: dict) -> str:
    return urlencode(filters)


# --- One vanpool ---------------------------------------------------------------------------------


@dataclass
class RiderRow:
    """One seat as the vanpool page shows it."""

    rider: Rider
    employee: Employee
    checks: dict[str, str]  # check → verdict, from the open case
    home: Point | None = None  # where the audit measures from
    map_point: Point | None = None  # where the map draws them (ZIP centroid without permission)
    home_source: str = ""
    miles: float | None = None
    straight_miles: float | None = None
    problem: str = ""

    @property
    def flagged(self) -> bool:
        return _is_flagged(self.checks)

    @property
    def over_limit(self) -> bool:
        return self.miles is not None and self.miles > self.limit

    limit: float = 0.0


def measure_rider(
    row: RiderRow,
    facts: RiderFacts,
    pickup: Point | None,
    provider: OfflineDistanceProvider,
    *,
    exact_on_map: bool,
) -> None:
    """Fill in where the rider lives, how far that is, and where the map may draw them."""
    try:
        home = place_home(facts)
    except Unplaceable as problem:
        row.problem = problem.reason
        return
    row.home, row.home_source = home.point, home.source
    if pickup is not None:
        row.straight_miles, row.miles = provider.commute_miles(home.point, pickup)
    if exact_on_map or home.source == "zip_centroid":
        row.map_point = home.point
    else:
        # Exact coordinates would show the street: the map gets the ZIP's centre.
        row.map_point = zip_centroid(facts.home_zip)


@dataclass
class WeekChart:
    layout: week.WeekLayout
    dates: list[dt.date]
    van_bars: list[week.Bar]
    van_label: str
    rows: list[week.WeekRow]
    problem: str = ""
    tolerance: int = 0
    height: int = 0
    hours: list[dict] = field(default_factory=list)
    days: list[dict] = field(default_factory=list)
    mismatches: int = 0
    rows_svg: str = ""


def spans_in_week(schedule: object, dates: list[dt.date]) -> list[week.DaySpanOn]:
    """Working spans that start on the chart's days, plus the Sunday before (its night runs on)."""
    spans = []
    for offset in range(-1, 7):
        span = schedule.span_on(dates[0] + dt.timedelta(days=offset))  # type: ignore[attr-defined]
        if span is not None:
            spans.append(week.DaySpanOn(offset, span.start, span.end))
    return spans


def day_states(
    facts: RiderFacts, shift: RiderShift, van: VanSchedule, dates: list[dt.date], tolerance: int
) -> list[week.DayState]:
    """Per day of the week: does the rider work, and does the van serve that shift?"""
    states: list[week.DayState] = []
    for day in dates:
        span = shift.schedule.span_on(day)
        van_span = van.schedule.span_on(day)
        if span is None:
            states.append("off")
        elif any(leave.covers(day) for leave in facts.leave) or facts.status == "on_leave":
            states.append("leave")
        elif van_span is None:
            states.append("no_van")
        else:
            matches = compare_day(day, span, van_span, tolerance).matches
            states.append("match" if matches else "mismatch")
    return states


def week_chart(
    vanpool: Vanpool, rows: list[RiderRow], facts: list[RiderFacts], today: dt.date
) -> WeekChart:
    layout = week.WeekLayout()
    dates = week.week_dates(today)
    tolerance = settings.SHIFT_TOLERANCE_MINUTES
    shifts: dict[str, RiderShift] = {}
    problems: dict[str, str] = {}
    for rider in facts:
        try:
            shifts[rider.employee_id] = read_shift(rider.shift)
        except Unreadable as exc:
            problems[rider.employee_id] = f"Shift cannot be read: {exc.reason}"
    van_facts = VanpoolFacts(
        vanpool_id=vanpool.vanpool_id, schedule=list(vanpool.schedule or []), riders=tuple(facts)
    )
    try:
        van: VanSchedule | None = read_van_schedule(van_facts, shifts)
    except Unreadable as exc:
        van = None
        van_problem = exc.reason
    chart = WeekChart(
        layout=layout,
        dates=dates,
        van_bars=week.bars_for(spans_in_week(van.schedule, dates), layout) if van else [],
        van_label=van.sentence_hours if van else "",
        rows=[],
        problem="" if van else f"No van schedule to compare against: {van_problem}.",
        tolerance=tolerance,
    )
    for row, rider in zip(rows, facts, strict=True):
        shift = shifts.get(rider.employee_id)
        week_row = week.WeekRow(
            label=rider.employee_id,
            sublabel=row.employee.full_name,
            href=reverse("employee-detail", args=[rider.employee_id]),
            flagged=row.flagged,
            states=["unknown"] * 7,
            note=problems.get(rider.employee_id, ""),
        )
        if shift is not None:
            week_row.bars = week.bars_for(spans_in_week(shift.schedule, dates), layout)
            if van is not None:
                week_row.states = day_states(rider, shift, van, dates, tolerance)
        chart.rows.append(week_row)
    week.place_rows(chart.rows, layout)
    chart.height = layout.height(len(chart.rows) + 1)
    chart.hours = [
        {"x": layout.x(day, hour * 60), "label": f"{hour:02d}"}
        for day in range(7)
        for hour in (6, 12, 18)
    ]
    chart.days = [
        {"x": layout.x(day, 0), "mid": layout.x(day, 720), "date": date}
        for day, date in enumerate(dates)
    ]
    chart.mismatches = sum(row.mismatch_count for row in chart.rows)
    chart.rows_svg = week.week_rows_svg(chart.rows, chart.van_bars, layout)
    return chart


def _vanpool_riders(vanpool: Vanpool) -> list[Rider]:
    return list(
        Rider.objects.filter(vanpool=vanpool)
        .select_related("employee__shift", "cancelled_by")
        .prefetch_related(
            Prefetch("employee__leaves", queryset=Leave.objects.order_by("start_date"))
        )
        .order_by("status", "employee__employee_id")
    )


@require_GET
@dashboard_view
def vanpool_detail(request: HttpRequest, vanpool_id: str) -> HttpResponse:
    vanpool = get_object_or_404(
        Vanpool.objects.select_related("coordinator"), vanpool_id=vanpool_id
    )
    riders = _vanpool_riders(vanpool)
    active = [rider for rider in riders if rider.status == Rider.Status.ACTIVE]
    cancelled = [rider for rider in riders if rider.status != Rider.Status.ACTIVE]
    cases = list(vanpool.cases.order_by("-created_at")[:10])
    open_case = next((case for case in cases if case.is_open), None)
    rider_checks = (open_case.meta.get("rider_flags") or {}) if open_case else {}

    facts = [rider_facts(rider.employee) for rider in active]
    provider = OfflineDistanceProvider()
    pickup_facts = VanpoolFacts(
        vanpool_id=vanpool.vanpool_id,
        pickup=point_or_none(vanpool.pickup_lat, vanpool.pickup_lng),
        pickup_zip=vanpool.pickup_zip,
        work_site=vanpool.work_site,
        work_site_point=point_or_none(vanpool.work_site_lat, vanpool.work_site_lng),
    )
    try:
        pickup = place_pickup(pickup_facts)
        pickup_point, pickup_label, pickup_problem = pickup.point, pickup.label, ""
    except Unplaceable as problem:
        pickup_point, pickup_label, pickup_problem = None, "", problem.reason
    exact = can_see_home_address(request)
    limit = float(vanpool.effective_max_miles)
    rows = []
    for rider, rider_fact in zip(active, facts, strict=True):
        checks = rider_checks.get(rider.employee.employee_id)
        row = RiderRow(rider, rider.employee, checks if isinstance(checks, dict) else {})
        row.limit = limit
        measure_rider(row, rider_fact, pickup_point, provider, exact_on_map=exact)
        rows.append(row)
    context = {
        "nav": "vanpools",
        "vanpool": vanpool,
        "rows": rows,
        "cancelled": cancelled,
        "cases": cases,
        "open_case": open_case,
        "open_reason": REASONS.get(open_case.reason, "unknown") if open_case else "",
        "limit": limit,
        "circuity": provider.circuity,
        "pickup_label": pickup_label,
        "pickup_problem": pickup_problem,
        "map": _map(vanpool, rows, pickup_point, limit, provider.circuity),
        "week": week_chart(vanpool, rows, facts, timezone.localdate()),
        "show_address": exact,
        "flagged_count": sum(row.flagged for row in rows),
        "unplaced": [row for row in rows if row.map_point is None],
        "tile_url": settings.MAP_TILE_URL,
    }
    return render(request, "vanpools/detail.html", context)


def point_or_none(lat: float | None, lng: float | None) -> Point | None:
    return Point(lat, lng) if lat is not None and lng is not None else None


def _map(
    vanpool: Vanpool, rows: list[RiderRow], pickup: Point | None, limit: float, circuity: float
) -> vanpool_map.MapChart | None:
    if pickup is None:
        return None
    places = [vanpool_map.MapPlace("pickup", pickup, "Pickup")]
    site = point_or_none(vanpool.work_site_lat, vanpool.work_site_lng)
    if site is not None:
        places.append(vanpool_map.MapPlace("site", site, vanpool.work_site or "Work site"))
    places += [
        vanpool_map.MapPlace(
            "home",
            row.map_point,
            row.employee.employee_id,
            flagged=row.flagged,
            miles=row.miles,
            href=reverse("employee-detail", args=[row.employee.employee_id]),
        )
        for row in rows
        if row.map_point is not None
    ]
    return vanpool_map.map_chart(pickup, places, limit_miles=limit, circuity=circuity)
