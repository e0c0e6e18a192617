"""Email threads and their messages: /api/emails/threads…

A staff member's message goes through ``outreach.staff_messages``: the same
outbox as the case loop, sent once after commit, with a CaseEvent on the case.
"""

from typing import cast

from django.contrib.auth.models import User
from django.db.models import Count, Max, Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from api.base import PublicIdLookup, StrictFilterSet, text_filter
from outreach.models import EmailThread, Message
from outreach.staff_messages import CannotWrite, add_staff_message
from outreach.subjects import SubjectError, validate_subject
from vanpools.models import Employee
from vanpools.scope import visible

THREAD_ID_RE = r"THREAD-[0-9A-F]{8}"


class PageAnswerSerializer(serializers.Serializer):
    """A rider's answer on the answer page: the choice, the date it lasts until, their words."""

    choice = serializers.CharField()
    route = serializers.CharField()
    until = serializers.CharField(allow_blank=True)
    text = serializers.CharField(allow_blank=True)


class MessageSerializer(serializers.ModelSerializer):
    thread = serializers.SlugRelatedField[EmailThread](
        slug_field="thread_id", read_only=True, allow_null=True
    )
    employee = serializers.SlugRelatedField[Employee](
        slug_field="employee_id", read_only=True, allow_null=True
    )
    to = serializers.ListField(child=serializers.CharField())
    cc = serializers.ListField(child=serializers.CharField())
    flags = serializers.ListField(child=serializers.CharField())
    # Set on a rider's answer from the answer page; null on every email.
    answer = PageAnswerSerializer(source="page_answer", allow_null=True, read_only=True)

    class Meta:
        model = Message
        fields = [
            "message_id",
            "thread",
            "direction",
            "status",
            "kind",
            "employee",
            "from_email",
            "to",
            "cc",
            "subject",
            "text_body",
            "template",
            "bucket",
            "bucket_confidence",
            "flags",
            "answer",
            "sent_at",
            "received_at",
            "created_at",
        ]


def messages() -> QuerySet[Message]:
    return Message.objects.select_related("thread", "employee").order_by("created_at", "id")


class ThreadSerializer(serializers.ModelSerializer):
    case = serializers.CharField(source="case.case_id")
    vanpool = serializers.CharField(source="case.vanpool.vanpool_id")
    message_count = serializers.IntegerField()
    last_message_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        model = EmailThread
        fields = [
            "thread_id",
            "case",
            "vanpool",
            "subject",
            "message_count",
            "last_message_at",
            "created_at",
        ]


class ThreadDetailSerializer(ThreadSerializer):
    messages = MessageSerializer(many=True, help_text="Every message, oldest first.")

    class Meta(ThreadSerializer.Meta):
        fields = [*ThreadSerializer.Meta.fields, "messages"]


class StaffMessageSerializer(serializers.Serializer):
    employee_id = serializers.CharField(
        max_length=20, help_text="The rider to write to (a seat on the case's vanpool)."
    )
    subject = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=200,
        validators=[validate_subject],
        help_text="One line. Default: Re: …",
    )
    text = serializers.CharField(max_length=20000, help_text="Plain text; sent as written.")

    def validate_employee_id(self, value: str) -> Employee:
        # An employee outside the caller's scope is as unknown as one that does not exist.
        employees = visible(Employee.objects.all(), self.context["request"].user)
        employee = employees.filter(employee_id=value).first()
        if employee is None:
            raise serializers.ValidationError(f"no employee {value}")
        return employee


class ThreadFilter(StrictFilterSet):
    case = text_filter(field_name="case__case_id", help_text="case_id.")
    vanpool = text_filter(field_name="case__vanpool__vanpool_id", help_text="vanpool_id.")

    class Meta:
        model = EmailThread
        fields = ["case", "vanpool"]


class ThreadViewSet(PublicIdLookup, viewsets.ReadOnlyModelViewSet):
    """Email threads with riders, one per case."""

    lookup_field = "thread_id"
    lookup_value_regex = THREAD_ID_RE
    filterset_class = ThreadFilter
    action_permissions = {"messages": ["outreach.view_emailthread", "outreach.add_message"]}

    def get_queryset(self) -> QuerySet[EmailThread]:
        threads = (
            visible(EmailThread.objects.all(), self.request.user)
            .select_related("case__vanpool")
            .annotate(message_count=Count("messages"), last_message_at=Max("messages__created_at"))
            .order_by("-created_at", "-id")
        )
        if self.action == "retrieve":
            return threads.prefetch_related(Prefetch("messages", queryset=messages()))
        return threads

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return ThreadDetailSerializer if self.action == "retrieve" else ThreadSerializer

    @extend_schema(
        summary="Write to a rider on this thread (sent through the outbox, once)",
        request=StaffMessageSerializer,
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                description="Retries with the same key return the first message. Without one, "
                "the same text from the same person to the same rider counts as a retry.",
            )
        ],
        responses={
            201: MessageSerializer,
            200: OpenApiResponse(
                MessageSerializer, description="A retry: the message queued first."
            ),
        },
    )
    @action(detail=True, methods=["post"], filter_backends=[], pagination_class=None)
    def messages(self, request: Request, thread_id: str) -> Response:
        thread = get_object_or_404(
            visible(EmailThread.objects.select_related("case__vanpool"), request.user),
            thread_id=thread_id,
        )
        given = StaffMessageSerializer(data=request.data, context={"request": request})
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            queued = add_staff_message(
                thread,
                by=cast(User, request.user),  # StaffModelPermissions let only staff in
                employee=data["employee_id"],
                subject=data["subject"],
                text=data["text"],
                idempotency_key=request.headers.get("Idempotency-Key", "")[:200],
            )
        except CannotWrite as exc:
            raise serializers.ValidationError({"employee_id": [str(exc)]}) from None
        except SubjectError as exc:  # the default "Re: <thread subject>" is checked too
            raise serializers.ValidationError({"subject": [str(exc)]}) from None
        message = messages().get(pk=queued.message.pk)
        code = status.HTTP_201_CREATED if queued.created else status.HTTP_200_OK
        return Response(MessageSerializer(message).data, status=code)
