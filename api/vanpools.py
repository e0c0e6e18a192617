"""Vanpools, their seats, and queueing an audit: /api/vanpools…"""

from django.contrib.auth.models import User
from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django_filters import rest_framework as filters
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import generics, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import PublicIdLookup, StrictFilterSet, text_filter
from cases.models import Case
from poolpatrol.queue import enqueue_audit
from vanpools.models import Rider, Vanpool
from vanpools.scope import visible

VANPOOL_ID_RE = r"VP-[A-Z0-9][A-Z0-9-]*"


class PointSerializer(serializers.Serializer):
    lat = serializers.FloatField()
    lng = serializers.FloatField()


def point(lat: float | None, lng: float | None) -> dict[str, float] | None:
    return None if lat is None or lng is None else {"lat": lat, "lng": lng}


class RiderSerializer(serializers.ModelSerializer):
    """A seat: who, since when, and whether (and why) it was cancelled."""

    employee_id = serializers.CharField(source="employee.employee_id")
    name = serializers.CharField(source="employee.full_name")
    work_site = serializers.CharField(source="employee.work_site")
    home_zip = serializers.CharField(source="employee.home_zip")
    cancelled_by = serializers.SlugRelatedField[User](
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Rider
        fields = [
            "employee_id",
            "name",
            "work_site",
            "home_zip",
            "status",
            "joined",
            "cancelled_at",
            "cancelled_by",
            "cancel_reason",
        ]


class VanpoolSerializer(serializers.ModelSerializer):
    pickup = serializers.SerializerMethodField()
    work_site_location = serializers.SerializerMethodField()
    max_commute_miles = serializers.IntegerField(
        source="effective_max_miles", help_text="The vanpool's limit, else the program default."
    )
    coordinator = serializers.SlugRelatedField[User](
        slug_field="username", read_only=True, allow_null=True
    )
    active_riders = serializers.IntegerField(help_text="Active seats.")
    open_case = serializers.CharField(
        allow_null=True, help_text="case_id of the vanpool's open case, if any."
    )

    class Meta:
        model = Vanpool
        fields = [
            "vanpool_id",
            "name",
            "status",
            "work_site",
            "work_site_address",
            "work_site_location",
            "pickup_address",
            "pickup_zip",
            "pickup",
            "capacity",
            "schedule",
            "max_commute_miles",
            "coordinator",
            "active_riders",
            "open_case",
            "created_at",
            "updated_at",
        ]

    @extend_schema_field(PointSerializer(allow_null=True))
    def get_pickup(self, vanpool: Vanpool) -> dict[str, float] | None:
        return point(vanpool.pickup_lat, vanpool.pickup_lng)

    @extend_schema_field(PointSerializer(allow_null=True))
    def get_work_site_location(self, vanpool: Vanpool) -> dict[str, float] | None:
        return point(vanpool.work_site_lat, vanpool.work_site_lng)


class VanpoolDetailSerializer(VanpoolSerializer):
    riders = RiderSerializer(source="active_seats", many=True, help_text="The active seats.")

    class Meta(VanpoolSerializer.Meta):
        fields = [*VanpoolSerializer.Meta.fields, "riders"]


class VanpoolFilter(StrictFilterSet):
    site = text_filter(field_name="work_site", help_text="Work site, exactly.")
    status = filters.ChoiceFilter(choices=Vanpool.Status.choices)

    class Meta:
        model = Vanpool
        fields = ["site", "status"]


class RiderFilter(StrictFilterSet):
    status = filters.ChoiceFilter(choices=Rider.Status.choices)

    class Meta:
        model = Rider
        fields = ["status"]


AuditQueued = inline_serializer(
    "AuditQueued",
    {
        "vanpool_id": serializers.CharField(),
        "status": serializers.CharField(help_text="Always `queued`."),
        "follow": serializers.URLField(help_text="The vanpool's cases: where the result lands."),
    },
)


def vanpools() -> QuerySet[Vanpool]:
    open_cases = Case.objects.filter(vanpool=OuterRef("pk")).exclude(status=Case.Status.CLOSED)
    return (
        Vanpool.objects.select_related("coordinator")
        .annotate(
            active_riders=Count("riders", filter=Q(riders__status=Rider.Status.ACTIVE)),
            open_case=Subquery(open_cases.values("case_id")[:1]),
        )
        .order_by("vanpool_id")
    )


class VanpoolViewSet(PublicIdLookup, viewsets.ReadOnlyModelViewSet):
    """Vanpools with their open case and active seat count; the detail lists the riders."""

    lookup_field = "vanpool_id"
    lookup_value_regex = VANPOOL_ID_RE
    filterset_class = VanpoolFilter
    # An audit may open a case: it takes the same permission as opening one by hand.
    action_permissions = {"audit": ["vanpools.view_vanpool", "cases.add_case"]}

    def get_queryset(self) -> QuerySet[Vanpool]:
        if self.action != "retrieve":
            return visible(vanpools(), self.request.user)
        seats = (
            Rider.objects.filter(status=Rider.Status.ACTIVE)
            .select_related("employee", "cancelled_by")
            .order_by("employee__employee_id")
        )
        return visible(vanpools(), self.request.user).prefetch_related(
            Prefetch("riders", queryset=seats, to_attr="active_seats")
        )

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return VanpoolDetailSerializer if self.action == "retrieve" else VanpoolSerializer

    @extend_schema(
        summary="Queue an audit of the vanpool",
        request=None,
        responses={202: OpenApiResponse(AuditQueued, description="Queued; follow the link.")},
    )
    @action(detail=True, methods=["post"], filter_backends=[], pagination_class=None)
    def audit(self, request: Request, vanpool_id: str) -> Response:
        vanpool = get_object_or_404(
            visible(Vanpool.objects.all(), request.user), vanpool_id=vanpool_id
        )
        enqueue_audit(vanpool.vanpool_id)  # on commit, through the audit task
        follow = request.build_absolute_uri(
            f"{reverse('api-case-list')}?vanpool={vanpool.vanpool_id}"
        )
        body = {"vanpool_id": vanpool.vanpool_id, "status": "queued", "follow": follow}
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": follow})


@extend_schema(summary="Seats on the vanpool, active and cancelled")
class VanpoolRidersView(generics.ListAPIView):
    serializer_class = RiderSerializer
    filterset_class = RiderFilter
    queryset = Rider.objects.none()  # for the permission check: vanpools.view_rider

    def get_queryset(self) -> QuerySet[Rider]:
        if getattr(self, "swagger_fake_view", False):  # schema generation
            return Rider.objects.none()
        vanpool = get_object_or_404(
            visible(Vanpool.objects.all(), self.request.user), vanpool_id=self.kwargs["vanpool_id"]
        )
        return (
            Rider.objects.filter(vanpool=vanpool)
            .select_related("employee", "cancelled_by")
            .order_by("employee__employee_id")
        )
