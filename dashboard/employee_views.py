"""An employee's page: their seats, the distance to the active one, their cases and leave.

The distance is the offline estimate the vanpool page shows, measured the way
the location check measures it; without ``vanpools.view_home_address`` the
page shows the ZIP and the miles, never the street address.
"""

from dataclasses import dataclass

from django.db.models import Prefetch, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from audit.facts import RiderFacts, VanpoolFacts
from audit.location import Unplaceable, place_home, place_pickup
from cases.models import Case
from dashboard.access import dashboard_view
from dashboard.vanpool_views import can_see_home_address, point_or_none
from vanpools.geo import OfflineDistanceProvider
from vanpools.models import Employee, Leave, Rider

CASE_HISTORY_LIMIT = 50


@dataclass
class CaseRow:
    case: Case
    checks: dict[str, str]


@require_GET
@dashboard_view
def employee_detail(request: HttpRequest, employee_id: str) -> HttpResponse:
    employee = get_object_or_404(
        Employee.objects.select_related("shift").prefetch_related(
            Prefetch("leaves", queryset=Leave.objects.order_by("start_date"))
        ),
        employee_id=employee_id,
    )
    memberships = list(
        employee.memberships.select_related("vanpool", "cancelled_by").order_by(
            "status", "-joined", "-pk"
        )
    )
    seat = next((m for m in memberships if m.status == Rider.Status.ACTIVE), None)
    distance = _distance_to_seat(employee, seat)
    # A case that names an employee is always about a vanpool they rode: the
    # vanpool index narrows the JSON scan to a handful of rows.
    cases = (
        Case.objects.filter(vanpool__in={m.vanpool_id for m in memberships})
        .filter(
            Q(meta__rider_flags__has_key=employee.employee_id)
            | Q(pending_actions__rider__employee=employee)
        )
        .distinct()
        .select_related("vanpool")
        .order_by("-created_at")[:CASE_HISTORY_LIMIT]
    )
    case_rows = []
    for case in cases:
        checks = (case.meta.get("rider_flags") or {}).get(employee.employee_id)
        case_rows.append(CaseRow(case, checks if isinstance(checks, dict) else {}))
    today = timezone.localdate()
    context = {
        "nav": "vanpools",
        "employee": employee,
        "memberships": memberships,
        "seat": seat,
        "distance": distance,
        "case_rows": case_rows,
        "case_limit": CASE_HISTORY_LIMIT,
        "leaves": [leave for leave in employee.leaves.all() if leave.end_date >= today],
        "show_address": can_see_home_address(request),
    }
    return render(request, "vanpools/employee.html", context)


@dataclass(frozen=True)
class SeatDistance:
    miles: float | None
    straight_miles: float | None
    limit: float
    home_source: str
    problem: str

    @property
    def over_limit(self) -> bool:
        return self.miles is not None and self.miles > self.limit


def _distance_to_seat(employee: Employee, seat: Rider | None) -> SeatDistance | None:
    if seat is None:
        return None
    vanpool = seat.vanpool
    facts = VanpoolFacts(
        vanpool_id=vanpool.vanpool_id,
        pickup=point_or_none(vanpool.pickup_lat, vanpool.pickup_lng),
        pickup_zip=vanpool.pickup_zip,
        work_site=vanpool.work_site,
        work_site_point=point_or_none(vanpool.work_site_lat, vanpool.work_site_lng),
    )
    rider = RiderFacts(
        employee_id=employee.employee_id,
        home_zip=employee.home_zip,
        home=point_or_none(employee.home_lat, employee.home_lng),
    )
    limit = float(vanpool.effective_max_miles)
    try:
        pickup = place_pickup(facts)
        home = place_home(rider)
    except Unplaceable as problem:
        return SeatDistance(None, None, limit, "", problem.reason)
    straight, commute = OfflineDistanceProvider().commute_miles(home.point, pickup.point)
    return SeatDistance(commute, straight, limit, home.source, "")
