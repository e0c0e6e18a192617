"""Errors as JSON with one stable shape, whatever raised them.

    {"error": {"code": "validation_error", "message": "...", "fields": {"field": ["..."]}}}

``fields`` is present only for validation errors and names each bad field.
"""

from typing import Any

from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # not an API error: Django's 500 handling and logging apply
    code, message, fields = describe(exc, response)
    body: dict[str, Any] = {"code": code, "message": message}
    if fields is not None:
        body["fields"] = fields
    response.data = {"error": body}
    return response


def describe(exc: Exception, response: Response) -> tuple[str, str, dict[str, Any] | None]:
    if isinstance(exc, exceptions.ValidationError):
        detail = exc.detail
        fields = detail if isinstance(detail, dict) else {"non_field_errors": detail}
        return "validation_error", "The request has invalid fields.", fields
    if isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        return code, str(exc.detail), None
    return "error", "Bad request.", None
