"""Admin for email threads and messages.

What was sent or received is a record: its addresses, text, times and
provider ids are read-only once stored. A person may attach an unmatched
message to a thread, or correct its status or bucket.
"""

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.safestring import SafeString

from outreach.models import EmailThread, Message
from outreach.subjects import validate_subject
from poolpatrol.admin_display import (
    EMPTY,
    ReadOnlyTabularInline,
    change_link,
    short,
)
from vanpools.admin_scope import ScopedAdmin

if TYPE_CHECKING:
    from typing import TypedDict

    from django_stubs_ext import WithAnnotations

    class _MessageTotal(TypedDict):
        message_total: int


def bucket_label(message: Message) -> str:
    if not message.bucket:
        return EMPTY
    if message.bucket_confidence is None:
        return message.get_bucket_display()
    return f"{message.get_bucket_display()} · {message.bucket_confidence:.2f}"


class OneLineSubject(forms.ModelForm):
    """A subject typed in the admin follows the rule every other form does: one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "subject" in self.fields:  # read-only on a stored message
            self.fields["subject"].validators.append(validate_subject)


class MessageInline(ReadOnlyTabularInline):
    model = Message
    fields = (
        "message_id",
        "direction",
        "from_email",
        "subject",
        "status",
        "bucket_and_confidence",
        "sent_at",
        "received_at",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Message]:
        return super().get_queryset(request).select_related("thread")

    @admin.display(description="bucket")
    def bucket_and_confidence(self, message: Message) -> str:
        return bucket_label(message)


@admin.register(EmailThread)
class EmailThreadAdmin(ScopedAdmin):
    form = OneLineSubject
    # Explicit: the count annotation's GROUP BY drops the model's default order.
    ordering = ["-created_at"]
    list_display = ["thread_id", "case_link", "subject", "message_count", "created_at"]
    list_filter = ["case__status"]
    search_fields = ["thread_id", "case__case_id", "subject"]
    list_select_related = ["case"]
    date_hierarchy = "created_at"
    autocomplete_fields = ["case"]
    readonly_fields = ["thread_id", "case", "reply_token", "created_at"]
    fields = ["thread_id", "case", "subject", "reply_token", "created_at"]
    add_fields = ["case", "subject"]
    inlines = [MessageInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[EmailThread]:
        return super().get_queryset(request).annotate(message_total=Count("messages"))

    def get_fields(self, request: HttpRequest, obj: EmailThread | None = None) -> list[Any]:
        return self.fields if obj else self.add_fields

    def get_readonly_fields(
        self, request: HttpRequest, obj: EmailThread | None = None
    ) -> list[str]:
        # A thread belongs to its case for good; the case is chosen once.
        return self.readonly_fields if obj else []

    @admin.display(description="case", ordering="case__case_id")
    def case_link(self, thread: EmailThread) -> SafeString | str:
        return change_link(thread.case)

    @admin.display(description="messages", ordering="message_total")
    def message_count(self, thread: "WithAnnotations[EmailThread, _MessageTotal]") -> int:
        return thread.message_total


@admin.register(Message)
class MessageAdmin(ScopedAdmin):
    form = OneLineSubject
    list_display = [
        "message_id",
        "thread_link",
        "direction",
        "from_email",
        "subject_short",
        "kind",
        "status",
        "bucket_and_confidence",
        "sent_or_received",
    ]
    list_filter = ["direction", "status", "kind", "bucket", "template"]
    search_fields = [
        "message_id",
        "from_email",
        "subject",
        "rfc_message_id",
        "provider_message_id",
        "thread__thread_id",
    ]
    list_select_related = ["thread"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    autocomplete_fields = ["thread", "employee"]
    readonly_fields = [
        "message_id",
        "direction",
        "kind",
        "template",
        "from_email",
        "recipients",
        "cc",
        "reply_to",
        "subject",
        "text_body",
        "in_reply_to",
        "references",
        "flags",
        "classification",
        "sent_at",
        "received_at",
        "processed_at",
        "attempts",
        "last_error",
        "next_attempt_at",
        "provider_message_id",
        "rfc_message_id",
        "raw_sha256",
        "headers",
        "raw",
        "created_at",
    ]
    fieldsets = [
        (None, {"fields": ["message_id", "thread", "employee", "direction", "kind", "status"]}),
        (
            "Email",
            {
                "fields": [
                    "template",
                    "from_email",
                    "recipients",
                    "cc",
                    "reply_to",
                    "subject",
                    "text_body",
                    "flags",
                ]
            },
        ),
        ("Classification", {"fields": ["bucket", "bucket_confidence", "classification"]}),
        (
            "Delivery",
            {
                "fields": [
                    "sent_at",
                    "received_at",
                    "processed_at",
                    "attempts",
                    "last_error",
                    "next_attempt_at",
                    "provider_message_id",
                    "rfc_message_id",
                    "in_reply_to",
                    "references",
                    "created_at",
                ]
            },
        ),
        (
            "Raw message",
            {"fields": ["raw_sha256", "headers", "raw"], "classes": ["collapse"]},
        ),
    ]
    add_fieldsets = [
        (None, {"fields": ["thread", "direction", "status"]}),
        ("Email", {"fields": ["from_email", "to", "subject", "text_body"]}),
        ("Classification", {"fields": ["bucket", "bucket_confidence"]}),
        (
            "Delivery",
            {"fields": ["sent_at", "received_at", "provider_message_id", "rfc_message_id"]},
        ),
    ]

    def get_fieldsets(self, request: HttpRequest, obj: Message | None = None) -> list[Any]:
        return self.fieldsets if obj else self.add_fieldsets

    def get_readonly_fields(self, request: HttpRequest, obj: Message | None = None) -> list[str]:
        return self.readonly_fields if obj else []

    @admin.display(description="thread", ordering="thread__thread_id")
    def thread_link(self, message: Message) -> SafeString | str:
        return change_link(message.thread)

    @admin.display(description="subject", ordering="subject")
    def subject_short(self, message: Message) -> str:
        return short(message.subject, 60)

    @admin.display(description="bucket", ordering="bucket")
    def bucket_and_confidence(self, message: Message) -> str:
        return bucket_label(message)

    @admin.display(description="sent / received")
    def sent_or_received(self, message: Message) -> Any:
        return message.sent_at or message.received_at or EMPTY

    @admin.display(description="to")
    def recipients(self, message: Message) -> str:
        return ", ".join(str(address) for address in message.to) or EMPTY
