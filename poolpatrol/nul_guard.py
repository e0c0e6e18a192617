"""No identifier holds a NUL character, and PostgreSQL refuses one in a query.

A path such as ``/api/cases/CASE-1%00`` would otherwise reach a lookup and
end as a 500 on PostgreSQL (SQLite just finds nothing). Query parameters and
form fields need no guard: Django's form fields (and so django-filter and
the dashboard's forms) and DRF's CharField already refuse NUL with a 400.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseNotFound, JsonResponse

NOT_FOUND = "Not found: no identifier contains a NUL character."


class NulPathGuard:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" not in request.path:
            return self.get_response(request)
        if request.path.startswith("/api/"):
            return JsonResponse({"error": {"code": "not_found", "message": NOT_FOUND}}, status=404)
        return HttpResponseNotFound(NOT_FOUND, content_type="text/plain; charset=utf-8")
