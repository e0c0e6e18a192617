"""What every dashboard page shares: who may see it and how a page of rows is cut.

Coordinators and auditors (staff with the case view permission) see the
dashboard; anyone else who is logged in gets 403, anyone not logged in is sent
to the login page. Deciding needs ``cases.decide_pendingaction`` on top, checked
by the decision services themselves. Without the home-address permission a
query parameter that names a home field (a filter, an ordering) is a 400 on
every page, whatever its value (poolpatrol/privacy.py).
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django import forms
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django_htmx.middleware import HtmxDetails

from poolpatrol.privacy import refused_params

DASHBOARD_PERMISSION = "cases.view_case"
PAGE_SIZE = 50

View = Callable[..., HttpResponse]


class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware leaves it (for type checking only)."""

    htmx: HtmxDetails


def can_use_dashboard(user: Any) -> bool:
    return bool(user.is_active and user.is_staff and user.has_perm(DASHBOARD_PERMISSION))


def dashboard_view(view: View) -> View:
    """Login required; staff with the dashboard permission only (403 otherwise)."""

    @wraps(view)
    def guarded(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not can_use_dashboard(request.user):
            raise PermissionDenied("The dashboard is for program coordinators and auditors.")
        refused = refused_params(request.user, request.GET)
        if refused:
            # Names the parameter, never echoes the value: the answer is the same for all.
            return HttpResponseBadRequest(
                f"Bad query parameters — {', '.join(refused)}: home street addresses and "
                "coordinates cannot be filtered, sorted or searched without the "
                "home-address permission",
                content_type="text/plain",
            )
        return view(request, *args, **kwargs)

    return guarded


class PageForm(forms.Form):
    """``?page=`` validated like any other query parameter: a bad one is a 400."""

    page = forms.IntegerField(min_value=1, required=False)


def paginate(queryset: QuerySet, page_number: int | None, per_page: int = PAGE_SIZE) -> Page:
    """One page of rows; a page past the end shows the last page."""
    return Paginator(queryset, per_page).get_page(page_number or 1)
