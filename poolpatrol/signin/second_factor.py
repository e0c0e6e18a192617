"""The second factor: who must have one (MFA_REQUIRED_FOR), and the gate that holds them to it.

django-allauth's MFA does the work: enrolling an authenticator app (TOTP) with
recovery codes, and asking for a code at every password sign-in of a user who
has one. What it does not do is insist. For a user whose role requires it and
who signed in with a local password, every page but the few that enrol them or
ask for a code sends them there, until this session has passed a second factor:
a code at sign-in, a code when asked again, or enrolling itself (which takes a
code from the new app). Sign-ins through the identity provider are left to the
provider's own policy. API calls with a token are not sessions and never reach
this gate's question.
"""

from collections.abc import Callable
from typing import Any

from allauth.account.authentication import get_authentication_records
from allauth.account.internal.flows.login import record_authentication
from allauth.core import context
from allauth.mfa.adapter import DefaultMFAAdapter
from allauth.mfa.models import Authenticator
from allauth.mfa.totp import forms as allauth_totp_forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import Resolver404, resolve, reverse
from django.utils.http import urlencode
from django_htmx.http import HttpResponseClientRedirect

from poolpatrol.signin.config import ALL_STAFF

# What a user held at the gate may still open: enrolling, being asked for a code,
# their recovery codes, and the way out.
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


def second_factor_required(user: Any) -> bool:
    """Whether MFA_REQUIRED_FOR names this user's role (or `all` and they are staff)."""
    required = settings.MFA_REQUIRED_FOR
    if not required or not (user.is_authenticated and user.is_staff):
        return False
    if ALL_STAFF in required:
        return True
    return user.groups.filter(name__in=required).exists()


def _methods(request: HttpRequest) -> set[str]:
    return {record.get("method") for record in get_authentication_records(request, request.user)}


def _passed(request: HttpRequest) -> bool:
    return "mfa" in _methods(request)


def _signed_in_by_provider(request: HttpRequest) -> bool:
    return "socialaccount" in _methods(request)


def _has_authenticator(user: Any) -> bool:
    return Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists()


def _is_open(request: HttpRequest) -> bool:
    try:
        return resolve(request.path_info).url_name in OPEN_AT_THE_GATE
    except Resolver404:
        return False


def _send_to(request: HttpRequest, url_name: str) -> HttpResponse:
    url = f"{reverse(url_name)}?{urlencode({'next': request.get_full_path()})}"
    if request.headers.get("HX-Request") == "true":
        return HttpResponseClientRedirect(url)
    return HttpResponseRedirect(url)


class RequireSecondFactor:
    """Middleware, after authentication: holds users of MFA_REQUIRED_FOR at the gate."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            second_factor_required(request.user)
            and not _signed_in_by_provider(request)
            and not _passed(request)
            and not _is_open(request)
        ):
            if _has_authenticator(request.user):
                return _send_to(request, "mfa_reauthenticate")
            return _send_to(request, "mfa_activate_totp")
        return self.get_response(request)


class ActivateTOTPForm(allauth_totp_forms.ActivateTOTPForm):
    """allauth's enrolment form (MFA_FORMS); a valid code from the new app passes the factor.

    Recorded here, in the request, rather than on allauth's `authenticator_added`
    signal, which is sent once the transaction commits.
    """

    def clean_code(self) -> str:
        code: str = super().clean_code()
        record_authentication(context.request, self.user, "mfa", type=Authenticator.Type.TOTP)
        return code


class MFAAdapter(DefaultMFAAdapter):
    def can_delete_authenticator(self, authenticator: Authenticator) -> bool:
        # Someone whose role requires a second factor cannot switch theirs off.
        return not second_factor_required(authenticator.user)
