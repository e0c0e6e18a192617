"""What a browser asks of any site, outside the dashboard's pages."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET


@require_GET
@cache_control(max_age=86400, public=True)
def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers ask for whatever the page names: the static icon.

    A temporary redirect: in production the static file's name carries its hash,
    which changes with the icon.
    """
    return redirect(static("img/favicon.ico"))
