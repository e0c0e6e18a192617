"""The provider's administration API: its directory's users and groups, its client's redirect URIs.

What an identity provider's admin API (Okta's, Keycloak's) does, reduced to what
the tests change between sign-ins; a bearer token guards it. Plain HTTP, so a
test changes a user's groups in milliseconds rather than a Django start.
"""

import hmac
import json
import os
from typing import Any

from django.contrib.auth.models import Group, User
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods
from oauth2_provider.models import Application


def _authorised(request: HttpRequest) -> bool:
    token = os.environ["OIDC_PROVIDER_ADMIN_TOKEN"]
    given = request.headers.get("Authorization", "").removeprefix("Bearer ")
    return hmac.compare_digest(given, token)


def set_user(username: str, person: dict[str, Any]) -> None:
    user, _ = User.objects.get_or_create(username=username)
    user.set_password(person["password"])
    user.email = person.get("email", "")
    user.first_name = person.get("first_name", "")
    user.last_name = person.get("last_name", "")
    user.save()
    user.groups.set([Group.objects.get_or_create(name=name)[0] for name in person["groups"]])


@csrf_exempt
@require_http_methods(["PUT"])
def user(request: HttpRequest, username: str) -> HttpResponse:
    """Create or update a user with exactly the groups given."""
    if not _authorised(request):
        return HttpResponseForbidden()
    set_user(username, json.loads(request.body))
    return JsonResponse({"username": username})


@csrf_exempt
@require_http_methods(["POST"])
def redirect_uri(request: HttpRequest, client_id: str) -> HttpResponse:
    """Allow one more redirect URI for a client (a live server's port)."""
    if not _authorised(request):
        return HttpResponseForbidden()
    app = Application.objects.get(client_id=client_id)
    app.redirect_uris = " ".join(dict.fromkeys([*app.redirect_uris.split(), request.body.decode()]))
    app.save(update_fields=["redirect_uris"])
    return JsonResponse({"redirect_uris": app.redirect_uris.split()})
