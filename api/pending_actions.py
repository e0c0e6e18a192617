"""The review queue: /api/pending-actions…, decided through ``caseloop.decisions``.

Same rules as the dashboard, because it is the same function: only staff with
``cases.decide_pendingaction`` decide (403 otherwise), an action is claimed
with a conditional update (409 when it was already decided, superseded or
expired), and a decision that does not fit the action is a 400.
"""

from typing import Any, cast

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django_filters import rest_framework as filters
from drf_spectacular.utils import (
    OpenApiParameter,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import PublicIdLookup, StrictFilterSet, text_filter
from api.errors import Conflict
from caseloop import decisions
from caseloop.audits import AlreadyDecided
from cases.kinds import PAYLOADS, kind_choices
from cases.lifecycle import IllegalTransition
from cases.models import Case, PendingAction
from outreach.models import Message
from outreach.subjects import validate_subject

BUCKETS = [b for b in Message.Bucket.values if b]


# The payload's schema is the kinds' own classes (cases.kinds), one of them: each lists every
# field it has and no other (api.schema.ReviewPayloadExtension), so a payload fits its own only.
PAYLOAD_SCHEMA = PolymorphicProxySerializer(
    component_name="ReviewPayload",
    # drf-spectacular's pydantic extension reads each class's JSON schema.
    serializers=cast(list[Any], list(PAYLOADS)),
    resource_type_field_name=None,
)


@extend_schema_field(PAYLOAD_SCHEMA)
class PayloadField(serializers.Field):
    """What the person is asked, read by the action's kind: every field, defaults included."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, value: PendingAction) -> dict[str, Any]:
        return value.ask.shown()


class PendingActionSerializer(serializers.ModelSerializer):
    payload = PayloadField(help_text="The kind's payload (the schema of its kind's class).")
    case = serializers.SlugRelatedField[Case](slug_field="case_id", read_only=True, allow_null=True)
    vanpool = serializers.CharField(source="case.vanpool.vanpool_id", allow_null=True, default=None)
    rider = serializers.CharField(
        source="rider.employee.employee_id",
        allow_null=True,
        default=None,
        help_text="employee_id of the seat a cancellation is about.",
    )
    message = serializers.SlugRelatedField[Message](
        slug_field="message_id", read_only=True, allow_null=True
    )
    decided_by = serializers.SlugRelatedField[User](
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = PendingAction
        fields = [
            "id",
            "kind",
            "status",
            "case",
            "vanpool",
            "rider",
            "message",
            "payload",
            "requested_by",
            "created_at",
            "decided_by",
            "decided_at",
            "note",
            "executed_at",
            "result",
        ]


class EditsSerializer(serializers.Serializer):
    """What a reviewer may change or supply; each field names the kind that reads it."""

    subject = serializers.CharField(
        required=False,
        max_length=200,
        validators=[validate_subject],
        help_text="A drafted reply (review_email): the subject to send instead of the draft's.",
    )
    text = serializers.CharField(
        required=False,
        max_length=20000,
        help_text="A drafted reply (review_email): the body to send instead of the draft's.",
    )
    bucket = serializers.ChoiceField(
        choices=BUCKETS,
        required=False,
        help_text="A reply to label (label_reply): the bucket it belongs in.",
    )
    thread = serializers.CharField(
        required=False,
        max_length=20,
        help_text="An unmatched email (match_inbound): the thread it belongs to.",
    )
    employee_id = serializers.CharField(
        required=False,
        max_length=20,
        help_text="An unmatched email (match_inbound): the rider who wrote it.",
    )
    override = serializers.BooleanField(
        required=False, help_text="cancel_membership: approve over a failed supervisor review"
    )
    override_reason = serializers.CharField(
        required=False, max_length=2000, help_text="cancel_membership: why, with override"
    )
    rulings = serializers.DictField(
        child=serializers.ChoiceField(choices=["pass", "fail"]),
        required=False,
        help_text="decide_verification: {employee_id: pass|fail}",
    )


class ApproveSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    edits = EditsSerializer(required=False)


class RejectSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class PendingActionFilter(StrictFilterSet):
    status = filters.ChoiceFilter(choices=PendingAction.Status.choices)
    kind = filters.ChoiceFilter(choices=kind_choices())
    case = text_filter(field_name="case__case_id", help_text="case_id.")

    class Meta:
        model = PendingAction
        fields = ["status", "kind", "case"]


ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="The pending action's id.")


@extend_schema_view(retrieve=extend_schema(parameters=[ID]))
class PendingActionViewSet(PublicIdLookup, viewsets.ReadOnlyModelViewSet):
    """The review queue: steps waiting for a staff member's decision."""

    serializer_class = PendingActionSerializer
    filterset_class = PendingActionFilter
    lookup_value_regex = r"[0-9]{1,18}"
    # Reading the queue is enough to reach a decision; the decision itself
    # checks cases.decide_pendingaction (as on the dashboard) and says 403.
    action_permissions = {
        "approve": ["cases.view_pendingaction"],
        "reject": ["cases.view_pendingaction"],
    }
    extra_error_codes = {"approve": ["409"], "reject": ["409"]}

    def get_queryset(self) -> QuerySet[PendingAction]:
        return PendingAction.objects.select_related(
            "case__vanpool", "rider__employee", "message", "decided_by"
        ).order_by("created_at", "id")

    @extend_schema(
        summary="Approve (with a reviewer's edits where the kind takes them)",
        request=ApproveSerializer,
        parameters=[ID],
        responses={200: PendingActionSerializer},
    )
    @action(detail=True, methods=["post"], filter_backends=[], pagination_class=None)
    def approve(self, request: Request, pk: str) -> Response:
        given = ApproveSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        return self._decide(
            pk,
            decisions.approve,
            "edits",
            by=request.user,
            note=given.validated_data["note"],
            edits=given.validated_data.get("edits") or {},
        )

    @extend_schema(
        summary="Reject",
        request=RejectSerializer,
        parameters=[ID],
        responses={200: PendingActionSerializer},
    )
    @action(detail=True, methods=["post"], filter_backends=[], pagination_class=None)
    def reject(self, request: Request, pk: str) -> Response:
        given = RejectSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        return self._decide(
            pk, decisions.reject, "note", by=request.user, note=given.validated_data["note"]
        )

    def _decide(self, pk: str, decide: Any, field: str, **kwargs: Any) -> Response:
        action_row = get_object_or_404(PendingAction, pk=pk)
        try:
            decide(action_row, **kwargs)
        except (AlreadyDecided, IllegalTransition) as exc:
            raise Conflict(str(exc)) from None
        except ValueError as exc:  # InvalidDecision, or rulings that do not fit
            raise serializers.ValidationError({field: [str(exc)]}) from None
        # PermissionDenied from the decision becomes a 403 in the error shape.
        return Response(self.get_serializer(self.get_queryset().get(pk=action_row.pk)).data)
