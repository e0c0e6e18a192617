"""The API's filter backends: no filter, ordering or search on home fields without permission.

Every list view filters through ``FilterBackend`` (the default) or, where a view
has no filters of its own, ``RefuseHomeFields``. Both ask the one rule in
poolpatrol/privacy.py first: without ``vanpools.view_home_address`` a query
parameter naming a home field (``?home_address__startswith=``,
``?ordering=employee__home_lat``) is a 400 naming the parameter, the same
answer whatever its value, even where no filter of that name exists.
"""

from typing import Any

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.request import Request

from poolpatrol.privacy import refused_params

REFUSED = (
    "home street addresses and coordinates cannot be filtered, sorted or searched "
    "without the home-address permission"
)


def refuse_home_params(request: Request) -> None:
    refused = refused_params(request.user, request.query_params)
    if refused:
        raise ValidationError({name: [REFUSED] for name in refused})


class RefuseHomeFields(BaseFilterBackend):
    """For list views without filters: refuses home-field parameters, filters nothing."""

    def filter_queryset(self, request: Request, queryset: QuerySet, view: Any) -> QuerySet:
        refuse_home_params(request)
        return queryset


class FilterBackend(DjangoFilterBackend):
    """django-filter's backend, after the home-field rule."""

    def filter_queryset(self, request: Request, queryset: QuerySet, view: Any) -> QuerySet:
        refuse_home_params(request)
        return super().filter_queryset(request, queryset, view)
