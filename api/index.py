"""/api/: what the API offers, as links. Holds no data, so anyone may read it."""

from django.http import HttpRequest
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

# (name, URL name, what it holds)
RESOURCES = (
    ("vanpools", "api-vanpool-list", "vanpools with their pickup point and schedule"),
    ("employees", "api-employee-list", "employees with their shifts and seats"),
    ("cases", "api-case-list", "audit cases with their evidence and trail; POST opens one"),
    ("email_threads", "api-thread-list", "outreach threads and their messages"),
    ("pending_actions", "api-pendingaction-list", "the review queue; approve or reject"),
)
DOCS = (
    ("schema", "api-schema", "the OpenAPI 3 schema"),
    ("docs", "api-docs", "the schema in Swagger UI (staff login)"),
    ("redoc", "api-redoc", "the schema in Redoc (staff login)"),
)


def _links(request: HttpRequest, entries: tuple[tuple[str, str, str], ...]) -> dict[str, dict]:
    return {
        name: {"href": request.build_absolute_uri(reverse(url_name)), "description": about}
        for name, url_name, about in entries
    }


class ApiIndexView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        return Response(
            {
                "name": "Pool Patrol API",
                "authentication": "a staff user's token (Authorization: Token …) or session",
                "resources": _links(request, RESOURCES),
                "documentation": _links(request, DOCS),
            }
        )
