"""Admin for cases and their evidence, trail and review queue.

A case's status never changes here: that is ``cases.lifecycle.transition``'s
job, which writes the CaseEvent. A case added here is opened through
``open_case`` for the same reason.
"""

from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.safestring import SafeString

from cases.export import as_csv, as_xlsx, findings
from cases.lifecycle import open_case
from cases.models import (
    Case,
    CaseEvent,
    CaseLesson,
    CaseReview,
    PendingAction,
    Verification,
)
from poolpatrol.admin_display import (
    EMPTY,
    AuditAdmin,
    ReadOnlyAdminMixin,
    ReadOnlyStackedInline,
    ReadOnlyTabularInline,
    change_link,
    key_value_table,
    records_table,
    short,
)
from vanpools.models import Vanpool

CLOSED = Case.Status.CLOSED


def reason_label(case: Case) -> str:
    reason = case.reason
    return Case.Reason(reason).label if reason in Case.Reason.values else reason or EMPTY


class ReasonFilter(admin.SimpleListFilter):
    title = "reason"
    parameter_name = "reason"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return list(Case.Reason.choices)

    def queryset(self, request: HttpRequest, queryset: QuerySet[Case]) -> QuerySet[Case]:
        if self.value():
            return queryset.filter(meta__reason=self.value())
        return queryset


class VerificationDisplay:
    """Evidence as tables, shared by the verification page and the case's inline."""

    @admin.display(description="evidence")
    def evidence_table(self, verification: Verification) -> SafeString | str:
        return records_table(verification.evidence)

    @admin.display(description="rider flags")
    def rider_flags_table(self, verification: Verification) -> SafeString | str:
        return key_value_table(verification.rider_flags)


class VerificationInline(VerificationDisplay, ReadOnlyStackedInline):
    model = Verification
    fields = [
        ("check_type", "verdict", "confidence", "backend", "created_at"),
        "reasoning",
        "evidence_table",
        "rider_flags_table",
    ]
    readonly_fields = [
        "check_type",
        "verdict",
        "confidence",
        "backend",
        "created_at",
        "reasoning",
        "evidence_table",
        "rider_flags_table",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Verification]:
        return super().get_queryset(request).select_related("case", "vanpool")


class CaseEventInline(ReadOnlyTabularInline):
    model = CaseEvent
    fields = ("created_at", "actor", "from_status", "to_status", "note", "data_table")
    readonly_fields = fields
    verbose_name_plural = "audit trail"

    def get_queryset(self, request: HttpRequest) -> QuerySet[CaseEvent]:
        # CaseEvent.__str__ and .actor read the user on every row.
        return super().get_queryset(request).select_related("case", "actor_user")

    @admin.display(description="data")
    def data_table(self, event: CaseEvent) -> SafeString | str:
        return key_value_table(event.data)


class PendingActionInline(ReadOnlyTabularInline):
    model = PendingAction
    fields = ("kind", "rider", "status", "requested_by", "decided_by", "decided_at", "note")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[PendingAction]:
        # The rider column prints Rider.__str__, which reads employee and vanpool.
        return (
            super()
            .get_queryset(request)
            .select_related("case", "rider__employee", "rider__vanpool", "decided_by")
        )


class CaseAddForm(forms.ModelForm):
    """What ``open_case`` needs; the case itself is made by it, not by the form."""

    reason = forms.ChoiceField(
        choices=Case.Reason.choices,
        help_text="The case is opened as the audit opens one: you are recorded as its opener.",
    )
    failed_checks = forms.MultipleChoiceField(
        choices=Verification.CheckType.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    details = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)

    class Meta:
        model = Case
        fields = ["vanpool"]

    def clean_vanpool(self) -> Vanpool:
        vanpool = self.cleaned_data["vanpool"]
        existing = vanpool.cases.exclude(status=CLOSED).first()
        if existing:
            raise ValidationError(
                f"{vanpool.vanpool_id} already has an open case, {existing.case_id}."
            )
        return vanpool


XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _download(data: bytes, extension: str, content_type: str) -> HttpResponse:
    name = f"findings-{timezone.localdate().isoformat()}.{extension}"
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@admin.register(Case)
class CaseAdmin(AuditAdmin):
    list_display = [
        "case_id",
        "vanpool_link",
        "status",
        "outcome",
        "reason",
        "failed_checks",
        "reaudit_count",
        "reply_deadline",
        "updated_at",
    ]
    list_filter = ["status", "outcome", ReasonFilter, "vanpool__work_site"]
    search_fields = ["case_id", "vanpool__vanpool_id", "vanpool__name"]
    list_select_related = ["vanpool"]
    date_hierarchy = "created_at"
    autocomplete_fields = ["vanpool"]
    # Only the reply deadline is a person's to move; the rest is the lifecycle's.
    readonly_fields = [
        "case_id",
        "vanpool",
        "status",
        "outcome",
        "closed_at",
        "meta_table",
        "reaudit_count",
        "thread_link",
        "created_at",
        "updated_at",
    ]
    fieldsets = [
        (None, {"fields": ["case_id", "vanpool", "status", "outcome", "closed_at"]}),
        ("Finding", {"fields": ["meta_table", "reaudit_count", "reply_deadline"]}),
        ("Outreach", {"fields": ["thread_link"]}),
        ("Record", {"fields": ["created_at", "updated_at"]}),
    ]
    add_fieldsets = [(None, {"fields": ["vanpool", "reason", "failed_checks", "details"]})]
    inlines = [VerificationInline, CaseEventInline, PendingActionInline]
    actions = ["export_csv", "export_xlsx"]

    @admin.action(description="Export the selected cases' findings (CSV)")
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Case]) -> HttpResponse:
        return _download(as_csv(findings(queryset)).encode("utf-8-sig"), "csv", "text/csv")

    @admin.action(description="Export the selected cases' findings (XLSX)")
    def export_xlsx(self, request: HttpRequest, queryset: QuerySet[Case]) -> HttpResponse:
        return _download(as_xlsx(findings(queryset)), "xlsx", XLSX_TYPE)

    def get_fieldsets(self, request: HttpRequest, obj: Case | None = None) -> list[Any]:
        return self.fieldsets if obj else self.add_fieldsets

    def get_readonly_fields(self, request: HttpRequest, obj: Case | None = None) -> list[str]:
        return self.readonly_fields if obj else []

    def get_form(
        self, request: HttpRequest, obj: Case | None = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is None:
            kwargs["form"] = CaseAddForm
        return super().get_form(request, obj, change, **kwargs)

    def get_inlines(self, request: HttpRequest, obj: Case | None) -> list[Any]:
        return self.inlines if obj else []

    def save_model(self, request: HttpRequest, obj: Case, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        data = form.cleaned_data
        case, created = open_case(
            data["vanpool"],
            actor=cast(User, request.user),  # the admin lets only staff in
            reason=data["reason"],
            failed_checks=list(data["failed_checks"]),
            details=data["details"],
        )
        # The admin logs and redirects with ``obj``: make it the row open_case wrote.
        obj.pk = case.pk
        obj.refresh_from_db()
        if not created:
            # A concurrent audit opened one between the form's check and now.
            self.message_user(
                request,
                f"{case.vanpool.vanpool_id} already had open case {case.case_id}.",
                messages.WARNING,
            )

    @admin.display(description="vanpool", ordering="vanpool__vanpool_id")
    def vanpool_link(self, case: Case) -> SafeString | str:
        return change_link(case.vanpool, case.vanpool.vanpool_id)

    @admin.display(description="reason")
    def reason(self, case: Case) -> str:
        return reason_label(case)

    @admin.display(description="failed checks")
    def failed_checks(self, case: Case) -> str:
        return ", ".join(case.failed_checks) or EMPTY

    @admin.display(description="meta")
    def meta_table(self, case: Case) -> SafeString | str:
        return key_value_table(case.meta)

    @admin.display(description="email thread")
    def thread_link(self, case: Case) -> SafeString | str:
        thread = getattr(case, "thread", None)
        return change_link(thread) if thread else EMPTY


@admin.register(Verification)
class VerificationAdmin(VerificationDisplay, AuditAdmin):
    list_display = [
        "id",
        "case_link",
        "vanpool_link",
        "check_type",
        "verdict",
        "confidence",
        "backend",
        "model",
        "created_at",
    ]
    list_filter = ["check_type", "verdict", "backend", "vanpool__work_site"]
    search_fields = ["case__case_id", "vanpool__vanpool_id", "reasoning"]
    list_select_related = ["case", "vanpool"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    autocomplete_fields = ["case", "vanpool"]
    readonly_fields = ["evidence_table", "rider_flags_table", "created_at"]
    fields = [
        "case",
        "vanpool",
        "check_type",
        "verdict",
        "confidence",
        "reasoning",
        "evidence_table",
        "rider_flags_table",
        "backend",
        "model",
        "created_at",
    ]
    add_fields = [
        "case",
        "vanpool",
        "check_type",
        "verdict",
        "confidence",
        "reasoning",
        "evidence",
        "rider_flags",
        "backend",
        "model",
    ]

    def get_fields(self, request: HttpRequest, obj: Verification | None = None) -> list[Any]:
        return self.fields if obj else self.add_fields

    def has_change_permission(self, request: HttpRequest, obj: Verification | None = None) -> bool:
        # A stored verdict is evidence a case cites: it is never edited afterwards.
        return False

    @admin.display(description="case", ordering="case__case_id")
    def case_link(self, verification: Verification) -> SafeString | str:
        return change_link(verification.case)

    @admin.display(description="vanpool", ordering="vanpool__vanpool_id")
    def vanpool_link(self, verification: Verification) -> SafeString | str:
        return change_link(verification.vanpool, verification.vanpool.vanpool_id)


@admin.register(CaseEvent)
class CaseEventAdmin(ReadOnlyAdminMixin, AuditAdmin):
    list_display = ["created_at", "case_link", "move", "actor", "note_short"]
    list_filter = ["to_status", "actor_agent"]
    search_fields = ["case__case_id", "note", "actor_agent", "actor_user__username"]
    list_select_related = ["case", "actor_user"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    fields = ("case", "created_at", "actor", "from_status", "to_status", "note", "data_table")
    readonly_fields = fields

    @admin.display(description="case", ordering="case__case_id")
    def case_link(self, event: CaseEvent) -> SafeString | str:
        return change_link(event.case)

    @admin.display(description="move")
    def move(self, event: CaseEvent) -> str:
        return f"{event.from_status or '∅'} → {event.to_status}"

    @admin.display(description="note")
    def note_short(self, event: CaseEvent) -> str:
        return short(event.note)

    @admin.display(description="data")
    def data_table(self, event: CaseEvent) -> SafeString | str:
        return key_value_table(event.data)


@admin.register(PendingAction)
class PendingActionAdmin(AuditAdmin):
    list_display = [
        "kind",
        "case_link",
        "rider_link",
        "status",
        "requested_by",
        "decided_by",
        "decided_at",
        "created_at",
    ]
    list_filter = ["kind", "status"]
    search_fields = [
        "case__case_id",
        "rider__employee__employee_id",
        "rider__employee__email",
        "requested_by",
    ]
    list_select_related = ["case", "rider__employee", "rider__vanpool", "decided_by"]
    date_hierarchy = "created_at"
    autocomplete_fields = ["case", "rider"]
    # A decision is made, and carried out, by the review queue; here a person
    # reads it and may add a note.
    readonly_fields = [
        "kind",
        "case",
        "rider",
        "payload_table",
        "status",
        "requested_by",
        "decided_by",
        "decided_at",
        "executed_at",
        "result_table",
        "created_at",
    ]
    fieldsets = [
        (None, {"fields": ["kind", "case", "rider", "payload_table", "note"]}),
        (
            "Decision",
            {
                "fields": [
                    "status",
                    "requested_by",
                    ("decided_by", "decided_at"),
                    "executed_at",
                    "result_table",
                ]
            },
        ),
        ("Record", {"fields": ["created_at"]}),
    ]
    add_fieldsets = [(None, {"fields": ["kind", "case", "rider", "payload", "note"]})]

    def get_fieldsets(self, request: HttpRequest, obj: PendingAction | None = None) -> list[Any]:
        return self.fieldsets if obj else self.add_fieldsets

    def get_readonly_fields(
        self, request: HttpRequest, obj: PendingAction | None = None
    ) -> list[str]:
        return self.readonly_fields if obj else []

    def save_model(self, request: HttpRequest, obj: PendingAction, form: Any, change: bool) -> None:
        if not change:
            obj.requested_by = request.user.get_username()
        super().save_model(request, obj, form, change)

    @admin.display(description="case", ordering="case__case_id")
    def case_link(self, action: PendingAction) -> SafeString | str:
        return change_link(action.case)

    @admin.display(description="rider")
    def rider_link(self, action: PendingAction) -> SafeString | str:
        return change_link(action.rider)

    @admin.display(description="payload")
    def payload_table(self, action: PendingAction) -> SafeString | str:
        return key_value_table(action.ask.stored())

    @admin.display(description="result")
    def result_table(self, action: PendingAction) -> SafeString | str:
        return key_value_table(action.result)


# --- Supervisor reviews and lessons: written by agents, read here -------------------------


@admin.register(CaseReview)
class CaseReviewAdmin(ReadOnlyAdminMixin, AuditAdmin):
    list_display = [
        "validated_at",
        "case_link",
        "score",
        "passed",
        "justification",
        "issue_count",
        "backend",
        "deterministic_only",
    ]
    list_filter = ["passed", "justification", "backend", "deterministic_only"]
    search_fields = ["case__case_id"]
    list_select_related = ["case"]
    date_hierarchy = "validated_at"
    show_full_result_count = False
    fields = [
        "case",
        "trigger_event",
        "validated_at",
        ("score", "passed", "justification"),
        ("backend", "model", "deterministic_only"),
        "issues_table",
        "feedback_table",
    ]
    readonly_fields = [
        "case",
        "trigger_event",
        "validated_at",
        "score",
        "passed",
        "justification",
        "backend",
        "model",
        "deterministic_only",
        "issues_table",
        "feedback_table",
    ]

    @admin.display(description="case", ordering="case__case_id")
    def case_link(self, review: CaseReview) -> SafeString | str:
        return change_link(review.case)

    @admin.display(description="issues")
    def issue_count(self, review: CaseReview) -> int:
        return len(review.issues)

    @admin.display(description="issues")
    def issues_table(self, review: CaseReview) -> SafeString | str:
        return records_table(review.issues)

    @admin.display(description="feedback")
    def feedback_table(self, review: CaseReview) -> SafeString | str:
        return key_value_table(review.feedback)


@admin.register(CaseLesson)
class CaseLessonAdmin(ReadOnlyAdminMixin, AuditAdmin):
    list_display = ["created_at", "case_link", "reason", "site", "outcome", "pattern", "sentence"]
    list_filter = ["outcome", "reason", "site", "pattern"]
    search_fields = ["case__case_id", "pattern", "sentence"]
    list_select_related = ["case"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    fields = [
        "case",
        "created_at",
        ("reason", "site", "outcome"),
        "pattern",
        "sentence",
        "signals_table",
        ("backend", "model"),
    ]
    readonly_fields = [
        "case",
        "created_at",
        "reason",
        "site",
        "outcome",
        "pattern",
        "sentence",
        "signals_table",
        "backend",
        "model",
    ]

    @admin.display(description="case", ordering="case__case_id")
    def case_link(self, lesson: CaseLesson) -> SafeString | str:
        return change_link(lesson.case)

    @admin.display(description="key signals")
    def signals_table(self, lesson: CaseLesson) -> SafeString | str:
        return key_value_table(lesson.key_signals)
