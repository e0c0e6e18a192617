"""The second factor: who must have one (MFA_REQUIRED_FOR), and allauth's parts that know it.

django-allauth's MFA does the work: enrolling an authenticator app (TOTP) with
recovery codes, and asking for a code at every password sign-in of a user who
has one. What it does not do is insist: poolpatrol/signin/policy.py holds the
users named here at enrolment until their session has passed a second factor.
"""

from typing import Any

from allauth.account.internal.flows.login import record_authentication
from allauth.core import context
from allauth.mfa.models import Authenticator
from allauth.mfa.totp import forms as allauth_totp_forms
from django.conf import settings

from poolpatrol.signin.config import ALL_STAFF


def second_factor_required(user: Any) -> bool:
    """Whether MFA_REQUIRED_FOR names this user's role (or `all` and they are staff)."""
    required = settings.MFA_REQUIRED_FOR
    if not required or not (user.is_authenticated and user.is_staff):
        return False
    if ALL_STAFF in required:
        return True
    return bool(user.groups.filter(name__in=required).exists())


def has_authenticator(user: Any) -> bool:
    return Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists()


class ActivateTOTPForm(allauth_totp_forms.ActivateTOTPForm):
    """allauth's enrolment form (MFA_FORMS); a valid code from the new app passes the factor.

    Recorded here, in the request, rather than on allauth's `authenticator_added`
    signal, which is sent once the transaction commits.
    """

    def clean_code(self) -> str:
        code: str = super().clean_code()
        record_authentication(context.request, self.user, "mfa", type=Authenticator.Type.TOTP)
        return code
