"""Admin for agent runs: the record auditors read to answer "why did it do that?"."""

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from agents.models import AgentRun
from poolpatrol.admin_display import (
    EMPTY,
    ReadOnlyAdminMixin,
    change_link,
    change_url,
    pretty_json,
    short,
)
from poolpatrol.privacy import may_see_home, withhold_home_points
from vanpools.admin_scope import ScopedAdmin

# Without the home-address permission the run's JSON is shown through
# withhold_home_points: a trace written before homes were withheld at the
# source (or a copy that slipped in) still shows no home point.
WITHHELD = {"input_json": "input_withheld", "output_json": "output_withheld"}


class ErrorFilter(admin.SimpleListFilter):
    title = "error"
    parameter_name = "error"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("yes", "with an error"), ("no", "without an error")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[AgentRun]) -> QuerySet[AgentRun]:
        if self.value() == "yes":
            return queryset.exclude(error="")
        if self.value() == "no":
            return queryset.filter(error="")
        return queryset


@admin.register(AgentRun)
class AgentRunAdmin(ReadOnlyAdminMixin, ScopedAdmin):
    list_display = [
        "agent",
        "backend",
        "model",
        "case_link",
        "vanpool_link",
        "tokens",
        "cost_usd",
        "latency",
        "has_error",
        "created_at",
    ]
    list_filter = ["agent", "backend", ErrorFilter, "model", "prompt_version"]
    search_fields = ["agent", "model", "case__case_id", "vanpool__vanpool_id", "error"]
    list_select_related = ["case", "vanpool"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    fieldsets = [
        (None, {"fields": ["agent", "backend", "model", "prompt_version", "created_at"]}),
        ("Subject", {"fields": ["case", "vanpool", "parent", "child_runs"]}),
        ("Run", {"fields": ["input_json", "output_json", "error"]}),
        ("Cost", {"fields": ["tokens_in", "tokens_out", "cost_usd", "latency_ms"]}),
    ]
    readonly_fields = [
        *(name for _, options in fieldsets for name in options["fields"] if isinstance(name, str)),
        *WITHHELD.values(),
    ]

    def get_fieldsets(self, request: HttpRequest, obj: AgentRun | None = None) -> Any:
        fieldsets = super().get_fieldsets(request, obj)
        if may_see_home(request.user):
            return fieldsets
        return [
            (name, {**options, "fields": [WITHHELD.get(str(f), f) for f in options["fields"]]})
            for name, options in fieldsets
        ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentRun]:
        # The change page's parent, case and vanpool links read these rows.
        return super().get_queryset(request).select_related("parent", "case", "vanpool")

    @admin.display(description="case", ordering="case__case_id")
    def case_link(self, run: AgentRun) -> SafeString | str:
        return change_link(run.case)

    @admin.display(description="vanpool", ordering="vanpool__vanpool_id")
    def vanpool_link(self, run: AgentRun) -> SafeString | str:
        return change_link(run.vanpool, run.vanpool.vanpool_id) if run.vanpool else EMPTY

    @admin.display(description="tokens in / out")
    def tokens(self, run: AgentRun) -> str:
        return f"{run.tokens_in:,} / {run.tokens_out:,}"

    @admin.display(description="latency", ordering="latency_ms")
    def latency(self, run: AgentRun) -> str:
        return f"{run.latency_ms:,} ms"

    @admin.display(description="error")
    def has_error(self, run: AgentRun) -> SafeString | str:
        if not run.error:
            return "no"
        return format_html('<span class="pp-error" title="{}">yes</span>', short(run.error, 200))

    @admin.display(description="input")
    def input_json(self, run: AgentRun) -> SafeString | str:
        return pretty_json(run.input)

    @admin.display(description="output")
    def output_json(self, run: AgentRun) -> SafeString | str:
        return pretty_json(run.output)

    @admin.display(description="input")
    def input_withheld(self, run: AgentRun) -> SafeString | str:
        return pretty_json(withhold_home_points(run.input))

    @admin.display(description="output")
    def output_withheld(self, run: AgentRun) -> SafeString | str:
        return pretty_json(withhold_home_points(run.output))

    @admin.display(description="runs it started")
    def child_runs(self, run: AgentRun) -> SafeString | str:
        children = list(run.children.order_by("created_at", "id"))
        if not children:
            return EMPTY
        items = ((change_url(child), child) for child in children)
        return format_html(
            '<ul class="pp-list">{}</ul>',
            format_html_join("", '<li><a href="{}">{}</a></li>', items),
        )
