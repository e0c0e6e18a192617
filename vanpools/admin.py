"""Admin for the program records: shifts, vanpools, employees, leave and seats."""

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import Count, ForeignKey, Prefetch, Q, QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from cases.admin import reason_label
from cases.models import Case
from poolpatrol.admin_display import (
    EMPTY,
    ReadOnlyTabularInline,
    add_link,
    change_link,
    change_url,
    short,
)
from poolpatrol.privacy import HOME_FIELDS, may_see_home
from vanpools import admin_records  # noqa: F401  (registers the ride and permit records)
from vanpools.admin_import import import_view
from vanpools.admin_report import monthly_report_action
from vanpools.admin_scope import RecordHistoryAdmin, ScopedAdmin
from vanpools.models import CoordinatorSite, Employee, Leave, Rider, Shift, Vanpool
from vanpools.scope import vanpools_for, visible_sites

if TYPE_CHECKING:
    from typing import TypedDict

    from django_stubs_ext import WithAnnotations

    class _ShiftTotals(TypedDict):
        employee_total: int

    class _VanpoolTotals(TypedDict):
        active_rider_total: int
        open_cases: list[Case]

    class _EmployeeSeats(TypedDict):
        seats_shown: list[Rider]  # newest first, within the user's scope


ACTIVE = Rider.Status.ACTIVE
# The roster's lists carry an "Import roster…" button (admin_import.py).
ROSTER_CHANGE_LIST = "admin/vanpools/roster_change_list.html"


@admin.register(Shift)
class ShiftAdmin(RecordHistoryAdmin, ScopedAdmin):
    change_list_template = ROSTER_CHANGE_LIST
    # Explicit: the count annotation's GROUP BY drops the model's default order.
    ordering = ["shift_id"]
    list_display = ["shift_id", "name", "summary", "overnight", "employee_count"]
    list_filter = ["overnight"]
    search_fields = ["shift_id", "name", "schedule_text"]
    readonly_fields = ["summary"]
    fields = ["shift_id", "name", "schedule", "rotation", "schedule_text", "overnight", "summary"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Shift]:
        return super().get_queryset(request).annotate(employee_total=Count("employees"))

    @admin.display(description="employees", ordering="employee_total")
    def employee_count(self, shift: "WithAnnotations[Shift, _ShiftTotals]") -> int:
        return shift.employee_total


class RiderInline(ReadOnlyTabularInline):
    """Every seat, active and cancelled: cancelled seats are part of the record."""

    model = Rider
    fields = ("employee", "employee_email", "joined", "status", "cancelled_at", "cancel_reason")
    readonly_fields = fields
    verbose_name_plural = "riders (active and cancelled)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Rider]:
        # Rider.__str__ reads the employee and the vanpool on every row.
        return super().get_queryset(request).select_related("employee", "vanpool")

    @admin.display(description="email")
    def employee_email(self, rider: Rider) -> str:
        return rider.employee.email


class CaseInline(ReadOnlyTabularInline):
    model = Case
    fields = ("case_id", "status", "outcome", "reason", "reaudit_count", "created_at", "closed_at")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Case]:
        return super().get_queryset(request).select_related("vanpool")

    @admin.display(description="reason")
    def reason(self, case: Case) -> str:
        return reason_label(case)


@admin.register(Vanpool)
class VanpoolAdmin(RecordHistoryAdmin, ScopedAdmin):
    change_list_template = ROSTER_CHANGE_LIST
    # Explicit: the count annotation's GROUP BY drops the model's default order.
    ordering = ["vanpool_id"]
    list_display = [
        "vanpool_id",
        "name",
        "work_site",
        "status",
        "active_riders",
        "open_case",
        "max_miles",
    ]
    list_filter = ["status", "work_site"]
    search_fields = [
        "vanpool_id",
        "name",
        "pickup_address",
        "riders__employee__employee_id",
        "riders__employee__email",
    ]
    list_select_related = ["coordinator"]
    readonly_fields = ["seated", "created_at", "updated_at"]
    fieldsets = [
        (None, {"fields": ["vanpool_id", "name", "status", "coordinator", "seated"]}),
        (
            "Work site",
            {"fields": ["work_site", "work_site_address", ("work_site_lat", "work_site_lng")]},
        ),
        (
            "Pickup point",
            {"fields": ["pickup_address", "pickup_zip", ("pickup_lat", "pickup_lng")]},
        ),
        ("Audit rules", {"fields": ["capacity", "schedule", "max_commute_miles"]}),
        ("§132(f) and the monthly report", {"fields": ["seats", "miles_per_trip"]}),
        ("Record", {"fields": ["created_at", "updated_at"]}),
    ]
    inlines = [RiderInline, CaseInline]
    actions = ["export_monthly_report"]

    @admin.action(description="Export the selected vanpools' monthly report (CSV or XLSX)")
    def export_monthly_report(
        self, request: HttpRequest, queryset: QuerySet[Vanpool]
    ) -> HttpResponse:
        return monthly_report_action(self, request, queryset)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Vanpool]:
        open_cases = Case.objects.exclude(status=Case.Status.CLOSED)
        return (
            super()
            .get_queryset(request)
            .annotate(active_rider_total=Count("riders", filter=Q(riders__status=ACTIVE)))
            .prefetch_related(Prefetch("cases", queryset=open_cases, to_attr="open_cases"))
        )

    def formfield_for_foreignkey(
        self, db_field: ForeignKey, request: HttpRequest, **kwargs: object
    ) -> ModelChoiceField | None:
        # Only staff can coordinate a vanpool; everyone else would be noise in the list.
        if db_field.name == "coordinator":
            kwargs["queryset"] = get_user_model().objects.filter(is_staff=True)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description="active riders", ordering="active_rider_total")
    def active_riders(self, vanpool: "WithAnnotations[Vanpool, _VanpoolTotals]") -> str:
        return f"{vanpool.active_rider_total} / {vanpool.capacity}"

    @admin.display(description="open case")
    def open_case(self, vanpool: "WithAnnotations[Vanpool, _VanpoolTotals]") -> SafeString | str:
        # The database allows one open case per vanpool, so this is 0 or 1 rows.
        for case in vanpool.open_cases:
            return format_html("{} ({})", change_link(case), case.get_status_display())
        return EMPTY

    @admin.display(description="max miles", ordering="max_commute_miles")
    def max_miles(self, vanpool: Vanpool) -> str:
        if vanpool.max_commute_miles is None:
            return f"{vanpool.effective_max_miles} (default)"
        return str(vanpool.max_commute_miles)

    @admin.display(description="seats")
    def seated(self, vanpool: "WithAnnotations[Vanpool, _VanpoolTotals]") -> SafeString | str:
        if vanpool.pk is None:
            return EMPTY
        return format_html(
            "{} active of {} seats · {}",
            vanpool.active_rider_total,
            vanpool.capacity,
            add_link(Rider, "Add a rider", vanpool=vanpool.pk),
        )


class LeaveForm(forms.ModelForm):
    class Meta:
        model = Leave
        fields = ["kind", "start_date", "end_date", "note"]

    def clean(self) -> dict[str, object]:
        super().clean()
        data = self.cleaned_data
        start, end = data.get("start_date"), data.get("end_date")
        if start and end and end < start:
            raise ValidationError({"end_date": "The leave ends before it starts."})
        return data


class LeaveInline(admin.TabularInline):
    model = Leave
    form = LeaveForm
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[Leave]:
        return super().get_queryset(request).select_related("employee")


def _without(fields: Any, hidden: frozenset[str]) -> list[Any]:
    """A fieldset's fields (names or tuples of names on one line) without ``hidden``."""
    kept: list[Any] = []
    for field in fields:
        if isinstance(field, tuple | list):
            line = tuple(name for name in field if name not in hidden)
            if line:
                kept.append(line if len(line) > 1 else line[0])
        elif field not in hidden:
            kept.append(field)
    return kept


@admin.register(Employee)
class EmployeeAdmin(RecordHistoryAdmin, ScopedAdmin):
    change_list_template = ROSTER_CHANGE_LIST
    list_display = [
        "employee_id",
        "full_name",
        "email",
        "work_site",
        "home_zip",
        "shift",
        "status",
        "time_type",
        "current_vanpool",
    ]
    list_filter = ["status", "time_type", "preferred_language", "work_site"]
    search_fields = ["employee_id", "first_name", "last_name", "email"]
    list_select_related = ["shift"]
    readonly_fields = ["seats", "home_zip_as_given", "created_at", "updated_at"]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "employee_id",
                    ("first_name", "last_name"),
                    "email",
                    "email_undeliverable_at",
                    "title",
                ],
                # Cleared by hand once HR fixes a bounced address.
                "description": "Outreach skips an address marked undeliverable by a bounce.",
            },
        ),
        ("Work", {"fields": ["work_site", "shift", "status", "time_type"]}),
        (
            "Language",
            {
                "fields": ["preferred_language", "requested_language"],
                "description": "Emails are written in the language the rider asked for by "
                "reply, else the roster's, else that of the rider's latest reply the "
                "detector was sure of, else the program's (PROGRAM_LANGUAGE). Clear the "
                "rider's request to go back to the roster's.",
            },
        ),
        (
            "Home",
            {
                "fields": [
                    "home_address",
                    ("home_zip", "home_zip_as_given"),
                    ("home_lat", "home_lng"),
                ],
                # Why a rider with a restored ZIP may be "unknown" rather than failed.
                "description": "“as given” is the roster's text when the import put back a "
                "leading zero; it stops counting once the ZIP is edited.",
            },
        ),
        ("Seats", {"fields": ["seats"]}),
        ("Record", {"fields": ["created_at", "updated_at"]}),
    ]
    inlines = [LeaveInline]

    def get_fieldsets(self, request: HttpRequest, obj: Employee | None = None) -> Any:
        """Without ``view_home_address`` the street and exact coordinates are not shown.

        The same data minimisation as the dashboard and the API: the ZIP is
        what an audit needs; the street is for auditors. Left out of the
        fieldsets, they are out of the form too, so a POST cannot change them.
        """
        fieldsets = super().get_fieldsets(request, obj)
        if may_see_home(request.user):
            return fieldsets
        return [
            (name, {**options, "fields": _without(options["fields"], HOME_FIELDS)})
            for name, options in fieldsets
        ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Employee]:
        # Under COORDINATOR_SCOPE=sites, a seat on another site's van is not shown.
        seats = Rider.objects.filter(vanpool__in=vanpools_for(request.user))
        seats = seats.select_related("vanpool").order_by("-joined", "-pk")
        return (
            super()
            .get_queryset(request)
            .prefetch_related(Prefetch("memberships", queryset=seats, to_attr="seats_shown"))
        )

    def get_urls(self) -> list[URLPattern]:
        def roster_import(request: HttpRequest) -> HttpResponse:
            return import_view(self, request)

        view = self.admin_site.admin_view(roster_import)
        return [path("import/", view, name="vanpools_roster_import"), *super().get_urls()]

    @admin.display(description="name", ordering="last_name")
    def full_name(self, employee: Employee) -> str:
        return employee.full_name

    @admin.display(description="current vanpool")
    def current_vanpool(
        self, employee: "WithAnnotations[Employee, _EmployeeSeats]"
    ) -> SafeString | str:
        # At most one: the database allows one active seat per employee.
        for seat in employee.seats_shown:
            if seat.status == ACTIVE:
                return change_link(seat.vanpool, seat.vanpool.vanpool_id)
        return EMPTY

    @admin.display(description="seats, newest first")
    def seats(self, employee: "WithAnnotations[Employee, _EmployeeSeats]") -> SafeString | str:
        if employee.pk is None:
            return EMPTY
        memberships = employee.seats_shown
        lines = format_html_join(
            "",
            '<li><a href="{}">{}</a> · joined {} · {}</li>',
            ((change_url(m), m.vanpool, m.joined, m.get_status_display()) for m in memberships),
        )
        add = add_link(Rider, "Add a seat", employee=employee.pk)
        return format_html('<ul class="pp-list">{}</ul>{}', lines, add)


@admin.register(Leave)
class LeaveAdmin(RecordHistoryAdmin, ScopedAdmin):
    form = LeaveForm
    list_display = ["employee", "kind", "start_date", "end_date", "note_short"]
    list_filter = ["kind"]
    search_fields = ["employee__employee_id", "employee__first_name", "employee__last_name"]
    list_select_related = ["employee"]
    autocomplete_fields = ["employee"]
    date_hierarchy = "start_date"
    # LeaveForm lists the inline's fields; here the employee is chosen too.
    fields = ["employee", "kind", "start_date", "end_date", "note"]

    @admin.display(description="note")
    def note_short(self, leave: Leave) -> str:
        return short(leave.note)


@admin.register(CoordinatorSite)
class CoordinatorSiteAdmin(ScopedAdmin):
    """Which staff coordinate which work site (COORDINATOR_SCOPE=sites, vanpools/scope.py)."""

    list_display = ["user", "work_site"]
    list_filter = ["work_site"]
    search_fields = ["user__username", "work_site"]
    list_select_related = ["user"]
    autocomplete_fields = ["user"]

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        # The sites the vanpools name: a typo would scope a coordinator to nothing.
        if db_field.name == "work_site":
            sites = visible_sites(request.user)
            return forms.ChoiceField(choices=[(site, site) for site in sites], label="work site")
        return super().formfield_for_dbfield(db_field, request, **kwargs)


class RiderForm(forms.ModelForm):
    class Meta:
        model = Rider
        fields = ["vanpool", "employee", "joined"]

    def clean_employee(self) -> Employee:
        # The one-active-seat constraint is conditional on status, which this
        # form does not edit, so Django would not check it: a clash would be a 500.
        employee = self.cleaned_data["employee"]
        if self.instance.status != ACTIVE:
            return employee
        other = (
            Rider.objects.filter(employee=employee, status=ACTIVE)
            .exclude(pk=self.instance.pk)
            .select_related("vanpool")
            .first()
        )
        if other:
            raise ValidationError(
                f"{employee.employee_id} already has an active seat in {other.vanpool.vanpool_id}."
            )
        return employee


@admin.register(Rider)
class RiderAdmin(RecordHistoryAdmin, ScopedAdmin):
    form = RiderForm
    list_display = ["__str__", "employee_name", "vanpool_link", "joined", "status", "cancelled_at"]
    list_filter = ["status", "vanpool__work_site"]
    search_fields = [
        "employee__employee_id",
        "employee__email",
        "employee__first_name",
        "employee__last_name",
        "vanpool__vanpool_id",
    ]
    list_select_related = ["employee", "vanpool"]
    autocomplete_fields = ["vanpool", "employee"]
    # Cancelling a seat is its own workflow (who, when, why), not a field edit.
    readonly_fields = ["status", "cancelled_at", "cancelled_by", "cancel_reason"]
    fields = ["vanpool", "employee", "joined", *readonly_fields]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Rider]:
        return super().get_queryset(request).select_related("employee", "vanpool", "cancelled_by")

    def has_delete_permission(self, request: HttpRequest, obj: Rider | None = None) -> bool:
        # The audit trail cites seats; a cancelled seat is kept, never removed.
        return False

    @admin.display(description="name", ordering="employee__last_name")
    def employee_name(self, rider: Rider) -> SafeString | str:
        return change_link(rider.employee, rider.employee.full_name)

    @admin.display(description="vanpool", ordering="vanpool__vanpool_id")
    def vanpool_link(self, rider: Rider) -> SafeString | str:
        return change_link(rider.vanpool)
