"""The coordinators' dashboard: the review queue and cases (being built)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from poolpatrol.dashboard import dashboard_view


@dashboard_view
def review_queue(request: HttpRequest) -> HttpResponse:
    return render(request, "base.html", {"nav": "queue"})


@dashboard_view
def case_list(request: HttpRequest) -> HttpResponse:
    return render(request, "base.html", {"nav": "cases"})


@dashboard_view
def case_detail(request: HttpRequest, case_id: str) -> HttpResponse:
    return render(request, "base.html", {"nav": "cases"})
