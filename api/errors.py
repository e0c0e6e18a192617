"""Errors as JSON with one stable shape, whatever raised them.

    {"error": {"code": "validation_error", "message": "...", "fields": {"field": ["..."]}}}

``fields`` is present only for validation errors and names each bad field;
``message`` then repeats the first problem so a person reading a log sees it.
A path under /api/ that matches nothing gets the same shape (``not_found``).
"""

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class Conflict(exceptions.APIException):
    """The request is valid but the record's state refuses it (409)."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "The record's current state does not allow this."
    default_code = "conflict"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    # Django's own 404 and 403 (get_object_or_404, a service's PermissionDenied)
    # become DRF's, so they carry a code and keep their message.
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # not an API error: Django's 500 handling and logging apply
    code, message, fields = describe(exc, response)
    response.data = error_body(code, message, fields)
    return response


def error_body(code: str, message: str, fields: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if fields is not None:
        body["fields"] = fields
    return {"error": body}


def describe(exc: Exception, response: Response) -> tuple[str, str, dict[str, Any] | None]:
    if isinstance(exc, exceptions.ValidationError):
        detail = exc.detail
        fields = detail if isinstance(detail, dict) else {"non_field_errors": detail}
        return "validation_error", _first_problem(fields), fields
    if isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        return code, str(exc.detail), None
    return "error", "Bad request.", None


def _first_problem(fields: dict[str, Any]) -> str:
    for name, problems in fields.items():
        first = problems
        while isinstance(first, list | dict) and first:
            first = first[0] if isinstance(first, list) else next(iter(first.values()))
        if first:
            return str(first) if name == "non_field_errors" else f"{name}: {first}"
    return "The request has invalid fields."


@csrf_exempt  # it changes nothing; a POST to a bad path must get this 404, not a CSRF page
def not_found(request: HttpRequest, unmatched: str = "") -> HttpResponse:
    """Unknown /api/ path: a trailing slash the API does not use is redirected (308)."""
    path = request.path
    if path.endswith("/") and len(path) > 1:
        try:
            match = resolve(path.rstrip("/"))
        except Resolver404:
            match = None
        if match is not None and match.url_name != "api-not-found":
            query = request.META.get("QUERY_STRING", "")
            target = path.rstrip("/") + (f"?{query}" if query else "")
            return HttpResponsePermanentRedirect(target, preserve_request=True)
    body = error_body("not_found", f"No API endpoint at {path}.")
    return JsonResponse(body, status=404)
