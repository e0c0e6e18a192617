"""What every resource view shares: lookup by public identifier, filters on lists only."""

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class PublicIdLookup:
    # Detail views find the row by its public identifier, ignoring list filters:
    # DRF's ``get_object`` runs the list's filters too, so ``?status=`` on a
    # detail URL would turn a found row into a 404. (A comment, not a
    # docstring: drf-spectacular would show it on every operation.)

    def get_object(self) -> Any:
        lookup = self.lookup_url_kwarg or self.lookup_field  # type: ignore[attr-defined]
        if "\x00" in self.kwargs[lookup]:  # type: ignore[attr-defined]
            raise Http404  # no ID holds NUL, and PostgreSQL would refuse to look
        obj = get_object_or_404(
            self.get_queryset(),  # type: ignore[attr-defined]
            **{self.lookup_field: self.kwargs[lookup]},  # type: ignore[attr-defined]
        )
        self.check_object_permissions(self.request, obj)  # type: ignore[attr-defined]
        return obj


class StrictFilterSet(filters.FilterSet):
    """An empty filter (``?status=``) is a 400 naming it, not a silent "any".

    django-filter skips empty values; a client that sent one most likely has a
    bug, and the schema says the value must be one of the choices.
    """

    def is_valid(self) -> bool:
        self.form.errors  # noqa: B018 - runs the form's validation first
        getlist = getattr(self.data, "getlist", None)
        if getlist is not None:
            for name in self.filters:
                if "" in getlist(name) and name not in self.form.errors:
                    self.form.add_error(name, "give a value, or leave the parameter out")
        return super().is_valid()


def text_filter(*, help_text: str, **kwargs: Any) -> filters.CharFilter:
    """A text filter the schema documents as non-empty (an empty one is a 400)."""
    text = filters.CharFilter(help_text=help_text, **kwargs)
    schema = {"type": "string", "minLength": 1, "description": help_text}
    return extend_schema_field(schema)(text)


class PublicIdField(serializers.SlugRelatedField):
    """A row named by its public identifier; NUL is refused before the lookup.

    PostgreSQL refuses NUL in text, so looking one up would be a 500.
    """

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str) and "\x00" in data:
            self.fail(
                "does_not_exist", slug_name=self.slug_field, value=data.replace("\x00", "\\0")
            )
        return super().to_internal_value(data)
