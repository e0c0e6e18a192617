"""Cases: /api/cases… Opening and status changes go through ``cases.lifecycle``.

The API holds no rules of its own: a case opens through ``open_case`` (which
keeps one open case per vanpool), its status moves through ``transition``
(which refuses illegal moves and writes the CaseEvent), its deadline through
``set_reply_deadline``. Two doors stay shut here: cancelling a membership
happens only when a person approves a cancel_membership PendingAction, and
pre-cancel is entered by the case loop, which creates those actions.
"""

from typing import Any, cast

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, mixins, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import PublicIdField, PublicIdLookup, StrictFilterSet, text_filter
from api.emails import MessageSerializer, messages
from api.errors import Conflict
from api.filters import RefuseHomeFields
from cases.lifecycle import KEEP, IllegalTransition, open_case, set_reply_deadline, transition
from cases.models import Case, CaseEvent, Verification
from outreach.models import Message
from vanpools.models import Vanpool
from vanpools.scope import visible

CASE_ID_RE = r"CASE-[0-9A-F]{8}"
Status = Case.Status


class VerificationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Verification
        fields = [
            "check_type",
            "verdict",
            "confidence",
            "reasoning",
            "evidence",
            "rider_flags",
            "backend",
            "model",
            "audit_date",
            "created_at",
        ]


class CaseEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(help_text="A username, or agent:<name>.")

    class Meta:
        model = CaseEvent
        fields = ["from_status", "to_status", "actor", "note", "data", "created_at"]


class CaseSerializer(serializers.ModelSerializer):
    vanpool = serializers.CharField(source="vanpool.vanpool_id")
    reason = serializers.ChoiceField(choices=Case.Reason.choices, allow_blank=True)
    failed_checks = serializers.ListField(child=serializers.CharField())
    details = serializers.SerializerMethodField()
    rider_flags = serializers.SerializerMethodField()
    flags = serializers.SerializerMethodField()
    opened_by = serializers.SerializerMethodField()
    updated_by = serializers.SerializerMethodField()
    thread = serializers.SerializerMethodField()

    class Meta:
        model = Case
        fields = [
            "case_id",
            "vanpool",
            "status",
            "outcome",
            "reason",
            "failed_checks",
            "details",
            "rider_flags",
            "flags",
            "reaudit_count",
            "reply_deadline",
            "thread",
            "opened_by",
            "updated_by",
            "created_at",
            "updated_at",
            "closed_at",
        ]

    def get_details(self, case: Case) -> str:
        return str(case.meta.get("details", ""))

    @extend_schema_field(
        serializers.DictField(child=serializers.DictField(child=serializers.CharField()))
    )
    def get_rider_flags(self, case: Case) -> dict[str, dict[str, str]]:
        """employee_id → {check: verdict} for the riders the audit flagged."""
        return case.meta.get("rider_flags", {})

    def get_flags(self, case: Case) -> list[str]:
        return [str(flag) for flag in case.meta.get("flags", [])]

    def get_opened_by(self, case: Case) -> str:
        return str(case.meta.get("opened_by", ""))

    def get_updated_by(self, case: Case) -> str:
        return str(case.meta.get("updated_by", ""))

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_thread(self, case: Case) -> str | None:
        thread = getattr(case, "thread", None)
        return thread.thread_id if thread else None


class CaseDetailSerializer(CaseSerializer):
    verifications = VerificationSerializer(
        many=True, help_text="Each check's verdict, with the evidence it cites."
    )
    events = CaseEventSerializer(many=True, help_text="The audit trail, oldest first.")

    class Meta(CaseSerializer.Meta):
        fields = [*CaseSerializer.Meta.fields, "verifications", "events"]


class ScopedVanpoolField(PublicIdField):
    """A vanpool ID; one outside the caller's scope is as unknown as one that does not exist."""

    def get_queryset(self) -> QuerySet[Vanpool]:
        return visible(Vanpool.objects.all(), self.context["request"].user)


class CaseCreateSerializer(serializers.Serializer):
    vanpool = ScopedVanpoolField(
        slug_field="vanpool_id", queryset=Vanpool.objects.all(), help_text="vanpool_id."
    )
    reason = serializers.ChoiceField(choices=Case.Reason.choices)
    failed_checks = serializers.ListField(
        child=serializers.ChoiceField(choices=Verification.CheckType.choices),
        required=False,
        default=list,
        max_length=len(Verification.CheckType.choices),
    )
    details = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)

    def validate_failed_checks(self, value: list[str]) -> list[str]:
        return sorted(set(value))


class CaseUpdateSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=Status.choices, required=False, help_text="Moved through the case lifecycle."
    )
    outcome = serializers.ChoiceField(
        choices=[Case.Outcome.RESOLVED, Case.Outcome.DISMISSED],
        required=False,
        help_text="With status closed. `cancelled` only comes from approved cancellations.",
    )
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    reply_deadline = serializers.DateTimeField(required=False, allow_null=True)

    def validate_status(self, value: str) -> str:
        if value == Status.PRE_CANCEL:
            raise serializers.ValidationError(
                "pre_cancel is entered by the case loop, which asks a person about each "
                "cancellation; it cannot be set here"
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "status" not in attrs and "reply_deadline" not in attrs:
            raise serializers.ValidationError(
                {"status": ["give a status or a reply_deadline to change"]}
            )
        if attrs.get("outcome") and attrs.get("status") != Status.CLOSED:
            raise serializers.ValidationError({"outcome": ["only a closed case has an outcome"]})
        if attrs.get("status") == Status.CLOSED and not attrs.get("outcome"):
            raise serializers.ValidationError({"outcome": ["closing needs resolved or dismissed"]})
        return attrs


class CaseFilter(StrictFilterSet):
    status = filters.ChoiceFilter(choices=Status.choices)
    outcome = filters.ChoiceFilter(choices=[o for o in Case.Outcome.choices if o[0]])
    vanpool = text_filter(field_name="vanpool__vanpool_id", help_text="vanpool_id.")
    reason = filters.ChoiceFilter(choices=Case.Reason.choices, field_name="meta__reason")
    opened_since = filters.DateFilter(
        field_name="created_at",
        lookup_expr="date__gte",
        help_text="Opened on or after this date (YYYY-MM-DD, program time zone).",
    )

    class Meta:
        model = Case
        fields = ["status", "outcome", "vanpool", "reason", "opened_since"]


def cases() -> QuerySet[Case]:
    return Case.objects.select_related("vanpool", "thread").order_by("-created_at", "-id")


class CaseViewSet(
    PublicIdLookup, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Audit cases; the detail carries each check's verification and the audit trail."""

    lookup_field = "case_id"
    lookup_value_regex = CASE_ID_RE
    filterset_class = CaseFilter
    extra_error_codes = {"create": ["409"]}

    def get_queryset(self) -> QuerySet[Case]:
        if self.action == "list":
            return visible(cases(), self.request.user)
        return visible(cases(), self.request.user).prefetch_related(
            Prefetch("verifications", queryset=Verification.objects.order_by("created_at", "id")),
            Prefetch("events", queryset=CaseEvent.objects.select_related("actor_user")),
        )

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return CaseSerializer if self.action == "list" else CaseDetailSerializer

    def _detail(self, case: Case, **kwargs: Any) -> Response:
        fresh = self.get_queryset().get(pk=case.pk)
        return Response(
            CaseDetailSerializer(fresh, context=self.get_serializer_context()).data, **kwargs
        )

    @extend_schema(
        summary="Open a case for a vanpool by hand",
        request=CaseCreateSerializer,
        responses={201: CaseDetailSerializer},
    )
    def create(self, request: Request) -> Response:
        given = CaseCreateSerializer(data=request.data, context={"request": request})
        given.is_valid(raise_exception=True)
        data = given.validated_data
        vanpool = data["vanpool"]
        refuse_second_case(vanpool)
        case, created = open_case(
            vanpool,
            actor=cast(User, request.user),  # StaffModelPermissions let only staff in
            reason=data["reason"],
            failed_checks=data["failed_checks"],
            details=data["details"],
        )
        if not created:  # a concurrent audit opened one after our check
            refuse_second_case(vanpool)
        location = request.build_absolute_uri(f"{request.path.rstrip('/')}/{case.case_id}")
        return self._detail(case, status=status.HTTP_201_CREATED, headers={"Location": location})

    @extend_schema(
        summary="Change a case's status or reply deadline (through the lifecycle)",
        request=CaseUpdateSerializer,
        responses={200: CaseDetailSerializer},
    )
    def partial_update(self, request: Request, case_id: str) -> Response:
        case = get_object_or_404(visible(Case.objects.all(), request.user), case_id=case_id)
        given = CaseUpdateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            with transaction.atomic():
                case = change_case(case, request.user, data)
        except IllegalTransition as exc:
            field = "status" if "status" in data else "reply_deadline"
            raise serializers.ValidationError({field: [str(exc)]}) from None
        return self._detail(case)


def refuse_second_case(vanpool: Vanpool) -> None:
    existing = vanpool.cases.exclude(status=Status.CLOSED).values_list("case_id", flat=True)
    if existing:
        raise Conflict(f"{vanpool.vanpool_id} already has an open case, {existing[0]}.")


def change_case(case: Case, user: Any, data: dict[str, Any]) -> Case:
    deadline = data.get("reply_deadline", KEEP)
    note = data.get("note", "")
    if "status" in data:
        return transition(
            case,
            data["status"],
            actor=user,
            note=note,
            outcome=data.get("outcome", ""),
            reply_deadline=deadline,
        )
    return set_reply_deadline(case, deadline, actor=user, note=note or "reply deadline moved")


@extend_schema(summary="Every email on the case's thread, oldest first")
class CaseEmailsView(generics.ListAPIView):
    serializer_class = MessageSerializer
    queryset = Message.objects.none()  # for the permission check: outreach.view_message
    filter_backends = [RefuseHomeFields]

    def get_queryset(self) -> QuerySet[Message]:
        if getattr(self, "swagger_fake_view", False):  # schema generation
            return Message.objects.none()
        case = get_object_or_404(
            visible(Case.objects.all(), self.request.user), case_id=self.kwargs["case_id"]
        )
        return messages().filter(thread__case=case)
