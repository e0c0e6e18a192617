"""The admin's "monthly report" action on the vanpool list: pick a month and a format, download.

An admin action that asks first: the selected vanpools come back with the
chosen month (``export_vanpool_report``'s rows, ``vanpools.monthly_report``).
"""

import datetime as dt
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from poolpatrol import spreadsheets
from vanpools.models import Vanpool
from vanpools.monthly_report import COLUMNS, FORMATS, parse_month, report_rows

XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


class ReportForm(forms.Form):
    month = forms.CharField(help_text="YYYY-MM", max_length=7)
    format = forms.ChoiceField(choices=[(kind, kind.upper()) for kind in FORMATS])

    def clean_month(self) -> dt.date:
        try:
            return parse_month(self.cleaned_data["month"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None


def last_month() -> str:
    first = timezone.localdate().replace(day=1)
    return (first - dt.timedelta(days=1)).strftime("%Y-%m")


def monthly_report_action(
    model_admin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Vanpool]
) -> HttpResponse:
    form = ReportForm(request.POST if "apply" in request.POST else None)
    if form.is_bound and form.is_valid():
        month, kind = form.cleaned_data["month"], form.cleaned_data["format"]
        rows = list(report_rows(queryset, month))
        return _download(rows, month, kind)
    if not form.is_bound:
        form = ReportForm(initial={"month": last_month(), "format": "csv"})
    context: dict[str, Any] = {
        **model_admin.admin_site.each_context(request),
        "title": "Monthly vanpool report",
        "opts": model_admin.model._meta,
        "form": form,
        "vanpools": queryset.order_by("vanpool_id"),
        "selected": request.POST.getlist(helpers.ACTION_CHECKBOX_NAME),
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
    }
    return TemplateResponse(request, "admin/vanpools/monthly_report.html", context)


def _download(rows: list, month: dt.date, kind: str) -> HttpResponse:
    name = f"vanpool-report-{month:%Y-%m}.{kind}"
    if kind == "xlsx":
        data = spreadsheets.as_xlsx(COLUMNS, rows, f"Vanpools {month:%Y-%m}")
        response = HttpResponse(data, content_type=XLSX_TYPE)
    else:
        data = spreadsheets.as_csv(COLUMNS, rows).encode("utf-8-sig")
        response = HttpResponse(data, content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
