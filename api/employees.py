"""Employees and their shifts: /api/employees…

Data minimisation as on the dashboard: the home street address and exact home
coordinates are shown only to users with ``vanpools.view_home_address``
(Auditors); everyone else gets ``null`` there and sees the ZIP.
"""

from typing import Any

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery
from django.shortcuts import get_object_or_404
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers, viewsets

from api.base import PublicIdLookup, StrictFilterSet, text_filter
from api.filters import RefuseHomeFields
from api.vanpools import VANPOOL_ID_RE, PointSerializer, point
from poolpatrol.privacy import may_see_home
from vanpools.models import Employee, Leave, Rider, Shift
from vanpools.scope import vanpools_for, visible

EMPLOYEE_ID_RE = r"[A-Z][A-Z0-9]*-?[A-Z0-9-]*"


class ShiftSerializer(serializers.ModelSerializer):
    summary = serializers.CharField(read_only=True)

    class Meta:
        model = Shift
        fields = [
            "shift_id",
            "name",
            "summary",
            "schedule",
            "rotation",
            "schedule_text",
            "overnight",
        ]


class ShiftRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Shift
        fields = ["shift_id", "name"]


class LeaveSerializer(serializers.ModelSerializer):
    class Meta:
        model = Leave
        fields = ["kind", "start_date", "end_date", "note"]


class EmployeeSerializer(serializers.ModelSerializer):
    name = serializers.CharField(source="full_name")
    shift = ShiftRefSerializer(allow_null=True)
    vanpool = serializers.CharField(
        source="current_vanpool", allow_null=True, help_text="vanpool_id of the active seat."
    )
    home_address = serializers.SerializerMethodField(
        help_text="Street address; null without the home-address permission."
    )
    home = serializers.SerializerMethodField(
        help_text="Exact home coordinates; null without the home-address permission."
    )

    class Meta:
        model = Employee
        fields = [
            "employee_id",
            "first_name",
            "last_name",
            "name",
            "email",
            "email_undeliverable_at",
            "title",
            "work_site",
            "home_zip",
            "home_address",
            "home",
            "status",
            "time_type",
            "shift",
            "vanpool",
            "created_at",
            "updated_at",
        ]

    def _may_see_home(self) -> bool:
        request = self.context.get("request")
        return bool(request and may_see_home(request.user))

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_home_address(self, employee: Employee) -> str | None:
        return employee.home_address if self._may_see_home() else None

    @extend_schema_field(PointSerializer(allow_null=True))
    def get_home(self, employee: Employee) -> dict[str, float] | None:
        return point(employee.home_lat, employee.home_lng) if self._may_see_home() else None


class EmployeeDetailSerializer(EmployeeSerializer):
    leave = LeaveSerializer(source="leaves", many=True, help_text="Leave and PTO on record.")

    class Meta(EmployeeSerializer.Meta):
        fields = [*EmployeeSerializer.Meta.fields, "leave"]


class EmployeeFilter(StrictFilterSet):
    site = text_filter(field_name="work_site", help_text="Work site, exactly.")
    status = filters.ChoiceFilter(choices=Employee.Status.choices)
    shift = text_filter(field_name="shift__shift_id", help_text="shift_id.")
    vanpool = text_filter(
        method="in_vanpool", help_text="vanpool_id: employees with an active seat on it."
    )

    class Meta:
        model = Employee
        fields = ["site", "status", "shift", "vanpool"]

    def in_vanpool(self, queryset: QuerySet[Employee], name: str, value: str) -> QuerySet:
        # One active seat per employee (a constraint), so the join adds no duplicates.
        # Only the caller's vanpools: a van outside their scope finds no one, as an
        # unknown one does.
        return queryset.filter(
            memberships__vanpool__in=vanpools_for(self.request.user),
            memberships__vanpool__vanpool_id=value,
            memberships__status=Rider.Status.ACTIVE,
        )


def employees(user: Any) -> QuerySet[Employee]:
    """The employees ``user`` may see; ``current_vanpool`` only when it is one of theirs."""
    seat = Rider.objects.filter(
        employee=OuterRef("pk"), status=Rider.Status.ACTIVE, vanpool__in=vanpools_for(user)
    )
    return (
        visible(Employee.objects.all(), user)
        .select_related("shift")
        .annotate(current_vanpool=Subquery(seat.values("vanpool__vanpool_id")[:1]))
        .order_by("employee_id")
    )


class EmployeeViewSet(PublicIdLookup, viewsets.ReadOnlyModelViewSet):
    """Employees. Home street address and coordinates need the home-address permission."""

    lookup_field = "employee_id"
    lookup_value_regex = EMPLOYEE_ID_RE
    filterset_class = EmployeeFilter

    def get_queryset(self) -> QuerySet[Employee]:
        if self.action == "retrieve":
            leave = Leave.objects.order_by("start_date", "id")
            return employees(self.request.user).prefetch_related(Prefetch("leaves", queryset=leave))
        return employees(self.request.user)

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return EmployeeDetailSerializer if self.action == "retrieve" else EmployeeSerializer


@extend_schema(summary="The employee's shift schedule (a list, for rotations to come)")
class EmployeeShiftsView(generics.ListAPIView):
    serializer_class = ShiftSerializer
    queryset = Shift.objects.none()  # for the permission check: vanpools.view_shift
    filter_backends = [RefuseHomeFields]

    def get_queryset(self) -> QuerySet[Shift]:
        if getattr(self, "swagger_fake_view", False):  # schema generation
            return Shift.objects.none()
        employee = get_object_or_404(
            visible(Employee.objects.all(), self.request.user),
            employee_id=self.kwargs["employee_id"],
        )
        if employee.shift_id is None:  # filter(pk=None) would find nothing too
            return Shift.objects.none()
        return Shift.objects.filter(pk=employee.shift_id).order_by("shift_id")


__all__ = ["EMPLOYEE_ID_RE", "VANPOOL_ID_RE", "EmployeeShiftsView", "EmployeeViewSet"]
