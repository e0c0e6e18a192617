"""The admin's share of two rules: coordinators' scope, and who reads the roster's history.

``ScopedAdmin`` is the base of every Pool Patrol admin page: its rows, its
lookups, its filters' choices, its autocomplete answers, its actions and
exports and its history all pass through ``vanpools.scope.visible``, so a
coordinator scoped to their sites meets nothing outside them. A row outside
a user's scope answers 404, exactly as an unknown ID does (Django's own admin
would redirect with "doesn't exist. Perhaps it was deleted?", which says the
same for both but is not a 404).

``RecordHistoryAdmin`` shows a roster record's history (django-simple-history)
read-only, inside the same scope, and without the home street address and
coordinates for users who may not see them (poolpatrol/privacy.py).
"""

import dataclasses
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.db.models import ForeignKey, Model, QuerySet
from django.forms import ModelChoiceField
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from simple_history.admin import SimpleHistoryAdmin
from simple_history.template_utils import HistoricalRecordContextHelper

from poolpatrol.admin_display import AuditAdmin
from poolpatrol.privacy import HOME_FIELDS, may_see_home
from vanpools.scope import VANPOOL_PATHS, is_scoped, visible, visible_sites


class ScopedAdmin(AuditAdmin):
    """An AuditAdmin whose every row, choice and lookup stays inside the user's scope."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return visible(super().get_queryset(request), request.user)

    def _get_obj_does_not_exist_redirect(
        self, request: HttpRequest, opts: Any, object_id: str
    ) -> HttpResponse:
        raise Http404(f"No {opts.verbose_name} with that ID.")

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        # Through a to-many relation a filter reaches rows outside the scope (an
        # employee's seat on another site's van): a scoped user filters on rows' own
        # fields and the filters the page offers only.
        if is_scoped(request.user) and _crosses_many(self.model, lookup):
            offered = {_parameter_of(item) for item in self.get_list_filter(request)}
            if lookup not in offered:
                return False
        return super().lookup_allowed(lookup, value, request)

    def get_list_filter(self, request: HttpRequest) -> Any:
        # A work-site filter through a relation would list every vanpool's site.
        return [
            work_site_filter(item) if _is_related_site(item) else item
            for item in super().get_list_filter(request)
        ]

    def formfield_for_foreignkey(
        self, db_field: ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        related = db_field.related_model
        choices = getattr(field, "queryset", None)
        if choices is not None and VANPOOL_PATHS.get(related._meta.label_lower):
            field.queryset = visible(choices, request.user)  # type: ignore[union-attr]
        return field


def work_site_filter(path: str) -> type[admin.SimpleListFilter]:
    """A list filter on ``path`` (``vanpool__work_site``) offering the user's own sites."""

    class WorkSiteFilter(admin.SimpleListFilter):
        title = "work site"
        parameter_name = path

        def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
            return [(site, site) for site in visible_sites(request.user)]

        def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
            return queryset.filter(**{path: self.value()}) if self.value() else queryset

    return WorkSiteFilter


def _is_related_site(item: Any) -> bool:
    return isinstance(item, str) and "__" in item and item.endswith("work_site")


def _parameter_of(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, tuple | list) and item:
        return str(item[0])
    return str(getattr(item, "parameter_name", ""))


def _crosses_many(model: type[Model], lookup: str) -> bool:
    current: Any = model
    for part in lookup.split("__"):
        try:
            field = current._meta.get_field(part)
        except Exception:  # a lookup (exact, in, gte…) or a transform: the path ends
            return False
        if field.one_to_many or field.many_to_many:
            return True
        if not field.is_relation:
            return False
        current = field.related_model
    return False


class _PrivateDeltas(HistoricalRecordContextHelper):
    """A history row's changes without those to home street address and coordinates."""

    def context_for_delta_changes(self, delta: Any) -> list[dict[str, Any]]:
        kept = [change for change in delta.changes if change.field not in HOME_FIELDS]
        return super().context_for_delta_changes(dataclasses.replace(delta, changes=kept))


class RecordHistoryAdmin(SimpleHistoryAdmin):
    """A roster record's history: read-only, scoped, home fields only for those allowed."""

    history_list_display = ["history_source"]

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: Any = None
    ) -> HttpResponse:
        self._refuse_outside_scope(request, object_id)
        return super().history_view(request, object_id, extra_context)

    def history_form_view(
        self, request: HttpRequest, object_id: str, version_id: str, extra_context: Any = None
    ) -> HttpResponse:
        # simple-history would save a POSTed form over the record: history is evidence.
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET"])
        self._refuse_outside_scope(request, object_id)
        return super().history_form_view(request, object_id, version_id, extra_context)

    def get_historical_record_context_helper(
        self, request: HttpRequest, historical_record: Any
    ) -> HistoricalRecordContextHelper:
        if may_see_home(request.user):
            return super().get_historical_record_context_helper(request, historical_record)
        return _PrivateDeltas(self.model, historical_record)

    def _refuse_outside_scope(self, request: HttpRequest, object_id: str) -> None:
        # A deleted record's history is found through its history rows; inside a
        # scope only what the user can still see has a history to read.
        if is_scoped(request.user) and self.get_object(request, unquote(object_id)) is None:
            raise Http404("No such record.")
