"""Middleware, after authentication: a signed-in session meets the sign-in settings.

- LOCAL_LOGIN=false: a session made with a password (before the switch) is
  signed out; only sessions made through the identity provider go on.
- MFA_REQUIRED_FOR: a user it names who signed in with a password is held at
  enrolment (no authenticator yet) or asked for a code (this session never gave
  one) on every page but the few that do that, until they have an
  authenticator and this session has passed a second factor: a code at
  sign-in, a code when asked again, or enrolling (which takes a code from the
  new app). Sign-ins through the identity provider are left to the provider's
  own policy.

How a session signed in is read from allauth's record of it (the methods used:
"password", "socialaccount", "mfa"). API calls with a token are not sessions:
they never meet this.
"""

from collections.abc import Callable

from allauth.account.authentication import get_authentication_records
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import Resolver404, resolve, reverse
from django.utils.http import urlencode
from django_htmx.http import HttpResponseClientRedirect

from poolpatrol.signin.second_factor import has_authenticator, second_factor_required

# What a user held for a second factor may still open: enrolling, being asked
# for a code, their recovery codes, and the way out.
OPEN_AT_THE_GATE = frozenset(
    {
        "mfa_index",
        "mfa_activate_totp",
        "mfa_reauthenticate",
        "mfa_view_recovery_codes",
        "mfa_download_recovery_codes",
        "account_reauthenticate",
        "account_logout",
        "logout",
        "login",
    }
)
ENROL_FIRST = "Your role needs a second factor: set up an authenticator app to go on."
ASK_AGAIN = "Your role needs a second factor: enter a code from your authenticator app to go on."
PASSWORDS_OFF = "Passwords are switched off here: sign in again with single sign-on."


def _methods(request: HttpRequest) -> set[str]:
    return {record.get("method") for record in get_authentication_records(request, request.user)}


def _is_open(request: HttpRequest) -> bool:
    try:
        return resolve(request.path_info).url_name in OPEN_AT_THE_GATE
    except Resolver404:
        return False


def _send_to(request: HttpRequest, url_name: str, why: str) -> HttpResponse:
    messages.info(request, why)
    url = f"{reverse(url_name)}?{urlencode({'next': request.get_full_path()})}"
    if request.headers.get("HX-Request") == "true":
        return HttpResponseClientRedirect(url)
    return HttpResponseRedirect(url)


def _held_for_a_second_factor(request: HttpRequest, methods: set[str]) -> HttpResponse | None:
    if "socialaccount" in methods:
        return None
    if not second_factor_required(request.user) or _is_open(request):
        return None
    # The authenticator first: one switched off (a lost phone) means enrolling again,
    # whatever this session passed before.
    if not has_authenticator(request.user):
        return _send_to(request, "mfa_activate_totp", ENROL_FIRST)
    if "mfa" not in methods:
        return _send_to(request, "mfa_reauthenticate", ASK_AGAIN)
    return None


class SignInPolicy:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated:
            methods = _methods(request)
            if not settings.LOCAL_LOGIN and "socialaccount" not in methods:
                logout(request)
                return _send_to(request, "login", PASSWORDS_OFF)
            if held := _held_for_a_second_factor(request, methods):
                return held
        return self.get_response(request)
