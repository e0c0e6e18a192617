"""The program page (being built)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from poolpatrol.dashboard import dashboard_view


@dashboard_view
def program(request: HttpRequest) -> HttpResponse:
    return render(request, "base.html", {"nav": "program"})
