"""The schema and its two readers, for staff only, with every asset served from here.

Swagger UI comes from drf-spectacular-sidecar with its start-up script as a
separate file (the site's CSP allows no inline scripts); Redoc's page is ours
because drf-spectacular's template fetches web fonts from Google.
"""

from django.http import HttpRequest, HttpResponse
from django.template import engines
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from api.permissions import IsStaff

REDOC_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{{ title }}</title>
</head>
<body>
  <redoc spec-url="{{ schema_url }}"></redoc>
  <script src="{{ redoc_standalone }}"></script>
</body>
</html>
"""


class SchemaView(SpectacularAPIView):
    permission_classes = [IsStaff]


class SwaggerView(SpectacularSwaggerSplitView):
    permission_classes = [IsStaff]


class RedocView(SpectacularRedocView):
    permission_classes = [IsStaff]

    @extend_schema(exclude=True)
    def get(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        page = engines["django"].from_string(REDOC_PAGE)
        context = {
            "title": self.title,
            "schema_url": self._get_schema_url(request),
            "redoc_standalone": self._redoc_standalone(),
        }
        return HttpResponse(page.render(context, request))
