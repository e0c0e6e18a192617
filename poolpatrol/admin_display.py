"""What the admins share: links, stored JSON as readable HTML, and base classes.

Everything that renders stored data goes through format_html / format_html_join:
evidence, case meta and agent output carry text riders wrote, which must stay
text in an auditor's browser.
"""

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db import models
from django.forms import ModelForm
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from poolpatrol.privacy import may_see_home, names_home_field, refuses_param

EMPTY = "—"


def change_url(obj: models.Model) -> str:
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])


def change_link(obj: models.Model | None, text: object = None) -> SafeString | str:
    """A link to ``obj``'s change page; the related row must already be loaded."""
    if obj is None:
        return EMPTY
    return format_html('<a href="{}">{}</a>', change_url(obj), obj if text is None else text)


def add_link(model: type[models.Model], text: str, **initial: object) -> SafeString:
    """A link to ``model``'s add page with fields prefilled from the query string."""
    opts = model._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_add")
    return format_html('<a class="addlink" href="{}?{}">{}</a>', url, urlencode(initial), text)


def short(text: str, length: int = 80) -> str:
    return Truncator(text).chars(length) if text else EMPTY


def _label(key: object) -> str:
    return str(key).replace("_", " ")


def _is_citation(value: object) -> bool:
    return isinstance(value, Mapping) and {"record", "id", "field"} <= set(value)


def _cell_text(value: object) -> str:
    if value is None:
        return EMPTY
    if isinstance(value, bool):
        return "yes" if value else "no"
    # Evidence cites its sources as {record, id, field}: "employee EMP-1 · home_zip".
    if isinstance(value, list) and value and all(_is_citation(item) for item in value):
        return "; ".join(f"{c['record']} {c['id']} · {c['field']}" for c in value)
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def records_table(items: object) -> SafeString | str:
    """A list of dicts as a table: columns are the union of their keys, one row each."""
    if not items:
        return EMPTY
    if isinstance(items, Mapping):
        return key_value_table(items)
    if not isinstance(items, list):
        return _cell_text(items)
    rows = [item if isinstance(item, Mapping) else {"value": item} for item in items]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    # Sources read best after the facts they support.
    columns.sort(key=lambda column: column == "cites")
    head = format_html_join("", '<th scope="col">{}</th>', ((_label(c),) for c in columns))
    body = format_html_join("", "<tr>{}</tr>", ((_row_cells(row, columns),) for row in rows))
    return format_html(
        '<table class="pp-records"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>',
        head,
        body,
    )


def _row_cells(row: Mapping[str, Any], columns: Iterable[str]) -> SafeString:
    # A key one item lacks is blank, not "—": "—" means the item said null.
    cells = ((_cell_text(row[c]) if c in row else "",) for c in columns)
    return format_html_join("", "<td>{}</td>", cells)


def key_value_table(mapping: Mapping[str, Any]) -> SafeString | str:
    """A dict as label / value rows; nested dicts nest, lists of dicts become tables."""
    if not mapping:
        return EMPTY
    rows = ((_label(key), display_value(value)) for key, value in mapping.items())
    return format_html(
        '<table class="pp-kv"><tbody>{}</tbody></table>',
        format_html_join("", '<tr><th scope="row">{}</th><td>{}</td></tr>', rows),
    )


def display_value(value: object) -> SafeString | str:
    if isinstance(value, Mapping):
        return key_value_table(value)
    if isinstance(value, list):
        if any(isinstance(item, Mapping) for item in value):
            return records_table(value)
        return ", ".join(_cell_text(item) for item in value) or EMPTY
    return _cell_text(value)


def pretty_json(value: object) -> SafeString | str:
    if value is None:
        return EMPTY
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return format_html('<pre class="pp-json">{}</pre>', text)


class AuditAdmin(admin.ModelAdmin):
    """Defaults for every Pool Patrol admin page."""

    list_per_page = 100
    empty_value_display = EMPTY

    class Media:
        css = {"all": ["css/admin.css"]}

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        # Agents write to these rows (a case's status and meta, a message's
        # bucket) while a person has the form open; writing back only the
        # fields the form changed keeps those concurrent writes.
        concrete = {field.name: field for field in obj._meta.concrete_fields}
        changed = [name for name in form.changed_data if name in concrete]
        if changed:
            touched = [name for name, f in concrete.items() if getattr(f, "auto_now", False)]
            obj.save(update_fields=[*changed, *touched])

    # Home details (poolpatrol/privacy.py): without the home-address permission
    # no filter, ordering, search or popup value of a change list may name a
    # home field, on this model or through a relation. A refused lookup is
    # Django's DisallowedModelAdminLookup, a 400 whatever the value: no oracle.

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        if refuses_param(request.user, lookup, [value]):
            return False
        return super().lookup_allowed(lookup, value, request)

    def to_field_allowed(self, request: HttpRequest, to_field: str) -> bool:
        if names_home_field(to_field) and not may_see_home(request.user):
            return False
        return super().to_field_allowed(request, to_field)

    def get_search_fields(self, request: HttpRequest) -> Any:
        return _visible(request, super().get_search_fields(request))

    def get_list_display(self, request: HttpRequest) -> Any:
        return _visible(request, super().get_list_display(request))

    def get_list_filter(self, request: HttpRequest) -> Any:
        return _visible(request, super().get_list_filter(request))

    def get_sortable_by(self, request: HttpRequest) -> Any:
        columns = super().get_sortable_by(request)
        if may_see_home(request.user):
            return columns
        return [name for name in columns if not _orders_by_home(self, name)]

    def get_ordering(self, request: HttpRequest) -> Any:
        return _visible(request, super().get_ordering(request) or ())


def _visible(request: HttpRequest, names: Iterable[Any]) -> list[Any]:
    """``names`` without those naming a home field, unless the user may see them."""
    if may_see_home(request.user):
        return list(names)
    return [name for name in names if not names_home_field(_path_of(name))]


def _path_of(item: Any) -> str:
    # list_filter items are names, (name, FilterClass) pairs or filter classes.
    if isinstance(item, tuple | list) and item:
        item = item[0]
    if isinstance(item, str):
        return item
    return str(getattr(item, "parameter_name", "") or "")


def _orders_by_home(model_admin: admin.ModelAdmin, column: object) -> bool:
    """Whether sorting ``column`` (a name or a callable) would order by a home field."""
    if isinstance(column, str) and names_home_field(column):
        return True
    attr = getattr(model_admin, column, None) if isinstance(column, str) else column
    order = getattr(attr, "admin_order_field", None)
    return isinstance(order, str) and names_home_field(order)


class ReadOnlyAdminMixin:
    """For the audit trail: nobody adds, edits or deletes rows here, superusers included."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class ReadOnlyTabularInline(ReadOnlyAdminMixin, admin.TabularInline):
    """Rows shown on a parent's page for reading; each links to its own page."""

    extra = 0
    can_delete = False
    show_change_link = True
    empty_value_display = EMPTY


class ReadOnlyStackedInline(ReadOnlyAdminMixin, admin.StackedInline):
    """As ReadOnlyTabularInline, for rows whose tables need the page's width."""

    extra = 0
    can_delete = False
    show_change_link = True
    empty_value_display = EMPTY
