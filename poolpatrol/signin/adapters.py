"""How django-allauth treats Pool Patrol's staff (ACCOUNT_ADAPTER, SOCIALACCOUNT_ADAPTER).

Nobody signs themselves up: local accounts are made by an auditor or a command,
and single sign-on makes or updates the account of whoever the provider vouches
for, with the roles its groups claim grants (poolpatrol/signin/roles.py). A
provider identity is its own account (provider + subject), never joined to a
local account by a matching email address.
"""

import logging
from collections.abc import Mapping
from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialLogin
from allauth.socialaccount.providers.base import AuthProcess
from django.conf import settings
from django.http import HttpRequest, HttpResponseForbidden

from poolpatrol.signin.roles import apply_roles, claimed_groups, roles_for

logger = logging.getLogger(__name__)


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        return False


def provider_claims(sociallogin: SocialLogin) -> dict[str, Any]:
    """The ID token's claims with the userinfo answer over them (groups may be in either)."""
    extra: Mapping[str, Any] = sociallogin.account.extra_data or {}
    return {**extra.get("id_token", {}), **extra.get("userinfo", {})}


def sync_from_claims(user: Any, claims: Mapping[str, Any]) -> None:
    """Name, email and roles as the provider says them now."""
    fields = {
        "first_name": claims.get("given_name"),
        "last_name": claims.get("family_name"),
        "email": claims.get("email"),
    }
    changed = [name for name, value in fields.items() if value and getattr(user, name) != value]
    for name in changed:
        setattr(user, name, fields[name])
    if changed:
        user.save(update_fields=changed)
    oidc = settings.OIDC
    if oidc is None:  # unreachable through OidcAdapter, which refuses first
        apply_roles(user, set())
        return
    apply_roles(user, roles_for(claimed_groups(claims, oidc.groups_claim), oidc.role_map))


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest, sociallogin: SocialLogin) -> bool:
        return True

    def is_auto_signup_allowed(self, request: HttpRequest, sociallogin: SocialLogin) -> bool:
        # Never a sign-up form: the provider has said who this is.
        return True

    def pre_social_login(self, request: HttpRequest, sociallogin: SocialLogin) -> None:
        # Signing in only: attaching a provider identity to the account already
        # signed in (allauth's "connect") would let one person's identity take
        # over another's roles.
        if sociallogin.state.get("process") != AuthProcess.LOGIN:
            raise ImmediateHttpResponse(HttpResponseForbidden("Only sign-in is offered."))
        if sociallogin.is_existing:
            sync_from_claims(sociallogin.user, provider_claims(sociallogin))

    def save_user(self, request: HttpRequest, sociallogin: SocialLogin, form: Any = None) -> Any:
        user = super().save_user(request, sociallogin, form)
        sync_from_claims(user, provider_claims(sociallogin))
        return user

    def on_authentication_error(
        self,
        request: HttpRequest,
        provider: Any,
        error: Any = None,
        exception: Any = None,
        extra_context: Any = None,
    ) -> None:
        # The person sees allauth's page; the reason is for whoever runs the server.
        cause = getattr(exception, "__cause__", None)
        reason = f"{exception}: {cause}" if cause else str(exception or "no such sign-in (state)")
        logger.warning("Single sign-on refused (%s): %s", error, reason)
        super().on_authentication_error(request, provider, error, exception, extra_context)
