"""The auditors' roster import in the admin: upload, preview, confirm.

The same importer as ``manage.py import_roster``: the upload is checked as a
dry run and its preview shown (created, updated, unchanged and refused rows,
the first changes, warnings, every error). Only a clean preview offers
"Import"; confirming imports the stored upload, which is then deleted.

Between the two requests the upload waits in a RosterUpload row under a
random token (the confirming request may reach another web host), taken by
its uploader only; uploads left unconfirmed for a day are removed.
django-import-export was considered: it imports one model per file, row by
row, where a roster is three kinds checked against each other and written
all or nothing, so its preview would not be the command's.
"""

import datetime as dt
import re
import secrets
import tempfile
from pathlib import Path
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone

from vanpools.importing import KINDS, ImportFailed, ImportResult, RowError, import_file
from vanpools.models import RosterUpload

ROSTER_SUFFIXES = (".csv", ".json")
MAPPING_SUFFIXES = (".toml", ".yaml", ".yml")
UPLOAD_MAX_AGE_SECONDS = 24 * 3600
TOKEN = re.compile(r"[A-Za-z0-9_-]{20,64}")
# Permissions an import needs: it creates and changes all three kinds of row.
IMPORT_PERMISSIONS = [
    f"vanpools.{action}_{model}"
    for model in ("shift", "vanpool", "employee")
    for action in ("add", "change")
]


class RosterUploadForm(forms.Form):
    roster = forms.FileField(help_text="The export: a .csv or .json file.")
    mapping = forms.FileField(
        required=False,
        help_text="Optional: a .toml or .yaml mapping naming which export column feeds "
        "which roster column (docs/roster-format.md).",
    )
    kind = forms.ChoiceField(
        required=False,
        choices=[("", "from the file's columns"), *((kind, kind) for kind in KINDS)],
        help_text="What a CSV's rows are, when its header does not say.",
    )

    def clean_roster(self) -> UploadedFile:
        return _with_suffix(self.cleaned_data["roster"], ROSTER_SUFFIXES)

    def clean_mapping(self) -> UploadedFile | None:
        mapping = self.cleaned_data.get("mapping")
        return _with_suffix(mapping, MAPPING_SUFFIXES) if mapping else None


class ConfirmForm(forms.Form):
    token = forms.RegexField(regex=rf"\A{TOKEN.pattern}\Z")


def _with_suffix(upload: UploadedFile, suffixes: tuple[str, ...]) -> UploadedFile:
    name = Path(upload.name or "").name
    if Path(name).suffix.lower() not in suffixes:
        raise forms.ValidationError(f"'{name}' is not a {' or '.join(suffixes)} file.")
    return upload


def import_view(model_admin: admin.ModelAdmin, request: HttpRequest) -> HttpResponse:
    """GET: the upload form. POST: preview an upload, or import a previewed one."""
    if not request.user.has_perms(IMPORT_PERMISSIONS):
        raise PermissionDenied
    if request.method == "POST" and "confirm" in request.POST:
        return _confirm(model_admin, request)
    form = RosterUploadForm(request.POST or None, request.FILES or None)
    context: dict[str, object] = {"form": form}
    if request.method == "POST" and form.is_valid():
        upload = _store(request, form.cleaned_data)
        context |= _preview(upload)
    return _render(model_admin, request, context)


def _preview(upload: RosterUpload) -> dict[str, object]:
    result: ImportResult | None
    errors: list[RowError] = []
    try:
        result = _run(upload, dry_run=True)
    except ImportFailed as exc:
        result, errors = exc.preview, exc.errors
        upload.delete()  # nothing to confirm: the next try is a new upload
    return {
        "preview": result,
        "errors": errors,
        "token": upload.token if not errors else "",
        "file_name": upload.roster_name,
    }


def _confirm(model_admin: admin.ModelAdmin, request: HttpRequest) -> HttpResponse:
    form = ConfirmForm(request.POST)
    token = form.cleaned_data["token"] if form.is_valid() else ""
    with transaction.atomic():
        # Taken under a lock and deleted with the import: a second click imports nothing.
        upload = (
            RosterUpload.objects.select_for_update()
            .filter(token=token, uploaded_by_id=request.user.pk)
            .first()
        )
        if upload is None:
            messages.error(request, "That upload is no longer here: upload the file again.")
            return HttpResponseRedirect(request.path)
        try:
            result = _run(upload, dry_run=False)
        except ImportFailed as exc:
            failed = exc
        else:
            upload.delete()
            messages.success(request, "Imported: " + _counts_text(result))
            for warning in result.warnings:
                messages.warning(request, warning)
            return HttpResponseRedirect(reverse("admin:vanpools_employee_changelist"))
    # The records changed since the preview: show what is wrong now.
    RosterUpload.objects.filter(pk=upload.pk).delete()
    context: dict[str, object] = {
        "form": RosterUploadForm(),
        "preview": None,
        "errors": failed.errors,
        "file_name": upload.roster_name,
    }
    return _render(model_admin, request, context)


def _run(upload: RosterUpload, *, dry_run: bool) -> ImportResult:
    """The importer reads files: the upload is written to a temporary folder for it."""
    with tempfile.TemporaryDirectory(prefix="roster-") as folder:
        roster = Path(folder) / f"roster{Path(upload.roster_name).suffix.lower()}"
        roster.write_bytes(bytes(upload.roster))
        mapping = None
        if upload.mapping is not None:
            mapping = Path(folder) / f"mapping{Path(upload.mapping_name).suffix.lower()}"
            mapping.write_bytes(bytes(upload.mapping))
        return import_file(roster, kind=upload.kind or None, dry_run=dry_run, mapping=mapping)


def _counts_text(result: ImportResult) -> str:
    parts = []
    for kind in result.kinds:
        count = result.counts[kind]
        parts.append(
            f"{kind} {count['created']} created, {count['updated']} updated, "
            f"{count['unchanged']} unchanged"
        )
    return "; ".join(parts) or "the file has no rows"


def _render(
    model_admin: admin.ModelAdmin, request: HttpRequest, context: dict[str, object]
) -> HttpResponse:
    context |= {
        **model_admin.admin_site.each_context(request),
        "title": "Import roster",
        "opts": model_admin.model._meta,
        "kinds": KINDS,
    }
    return TemplateResponse(request, "admin/vanpools/roster_import.html", context)


def _store(request: HttpRequest, data: dict[str, Any]) -> RosterUpload:
    RosterUpload.objects.filter(
        created_at__lt=timezone.now() - dt.timedelta(seconds=UPLOAD_MAX_AGE_SECONDS)
    ).delete()
    roster: UploadedFile = data["roster"]
    mapping: UploadedFile | None = data["mapping"]
    return RosterUpload.objects.create(
        token=secrets.token_urlsafe(24),
        roster_name=_display_name(roster),
        roster=roster.read(),
        mapping_name=_display_name(mapping) if mapping else "",
        mapping=mapping.read() if mapping else None,
        kind=data["kind"] or "",
        uploaded_by_id=request.user.pk,
    )


def _display_name(upload: UploadedFile) -> str:
    # The client's name is shown and its suffix read; nothing else of it is used.
    return re.sub(r"[^A-Za-z0-9._ -]", "_", Path(upload.name or "").name)[:120]
