"""Vanpool and employee pages (being built)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from poolpatrol.dashboard import dashboard_view


@dashboard_view
def vanpool_list(request: HttpRequest) -> HttpResponse:
    return render(request, "base.html", {"nav": "vanpools"})


@dashboard_view
def vanpool_detail(request: HttpRequest, vanpool_id: str) -> HttpResponse:
    return render(request, "base.html", {"nav": "vanpools"})


@dashboard_view
def employee_detail(request: HttpRequest, employee_id: str) -> HttpResponse:
    return render(request, "base.html", {"nav": "vanpools"})
