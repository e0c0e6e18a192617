"""django-allauth's OpenID Connect provider, with the checks it leaves out.

allauth (65.x) keeps the ``state`` in the session and checks it, sends a PKCE
challenge, and checks the ID token's audience and expiry. It sends no nonce,
skips the token's signature when the token came straight from the token
endpoint, and believes whatever issuer the discovery document names. Here, for
every sign-in:

- a fresh ``nonce`` goes to the provider and is kept in allauth's state; the ID
  token must carry it back (OpenID Connect Core 1.0, 3.1.2.1 and 3.1.3.7);
- the discovery document's ``issuer`` and the ID token's ``iss`` must both be
  OIDC_ISSUER (OpenID Connect Discovery 1.0, 4.3);
- the ID token's signature is checked against the provider's published keys,
  with a minute's leeway between the provider's clock and ours;
- the userinfo answer must be about the same subject as the ID token (Core 5.3.2).

Registered through ``SOCIALACCOUNT_PROVIDERS["openid_connect"]["provider_class"]``;
its two URLs replace allauth's own for this provider (poolpatrol/signin/urls.py).
"""

import hmac
import secrets
from typing import Any

import jwt
from allauth.socialaccount.helpers import render_authentication_error
from allauth.socialaccount.internal import jwtkit
from allauth.socialaccount.models import SocialApp
from allauth.socialaccount.providers.oauth2.client import OAuth2Error
from allauth.socialaccount.providers.oauth2.views import OAuth2CallbackView, OAuth2LoginView
from allauth.socialaccount.providers.openid_connect.provider import OpenIDConnectProvider
from allauth.socialaccount.providers.openid_connect.views import OpenIDConnectOAuth2Adapter
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from requests import RequestException

# The provider's clock and ours may disagree by this much (iat, exp).
CLOCK_SKEW_SECONDS = 60
# Signatures by the provider's published public keys only (never a shared secret).
SIGNING_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


class OidcAdapter(OpenIDConnectOAuth2Adapter):
    # The sign-in's stashed state (with its nonce), handed over by CallbackView.
    state: dict[str, Any] | None = None

    @staticmethod
    def issuer() -> str:
        if settings.OIDC is None:
            # An app added in the admin, not by OIDC_ISSUER: nothing to check it against.
            raise OAuth2Error("single sign-on is configured by OIDC_ISSUER, which is not set")
        return str(settings.OIDC.issuer)

    def checked_config(self) -> dict[str, Any]:
        config: dict[str, Any] = self.openid_config
        if config.get("issuer") != self.issuer():
            raise OAuth2Error(
                f"the provider names its issuer {config.get('issuer')!r}, "
                f"not OIDC_ISSUER {self.issuer()!r}"
            )
        return config

    @property
    def authorize_url(self) -> str:
        return str(self.checked_config()["authorization_endpoint"])

    def complete_login(self, request: HttpRequest, app: SocialApp, token: Any, **kwargs: Any):
        id_token = kwargs["response"].get("id_token")
        if not id_token:
            raise OAuth2Error("the provider sent no ID token")
        claims = self._decode_id_token(app, id_token)
        data = {"id_token": claims}
        if app.settings.get("fetch_userinfo", True):
            userinfo = self._fetch_user_info(token.token)
            if userinfo.get("sub") != claims.get("sub"):
                raise OAuth2Error("userinfo is about another subject than the ID token")
            data["userinfo"] = userinfo
        return self.get_provider().sociallogin_from_response(request, data)

    def _decode_id_token(self, app: SocialApp, id_token: str) -> dict[str, Any]:
        try:
            algorithm, key = jwtkit.fetch_key(
                id_token, self.checked_config()["jwks_uri"], jwtkit.lookup_kid_jwk
            )
            if algorithm not in SIGNING_ALGORITHMS:
                raise OAuth2Error(f"the ID token is signed with {algorithm}, not a public key")
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key=key,
                algorithms=[algorithm],
                audience=app.client_id,
                issuer=self.issuer(),
                leeway=CLOCK_SKEW_SECONDS,
                options={"require": ["iss", "aud", "exp", "iat", "sub"]},
            )
        except (jwt.PyJWTError, KeyError, ValueError) as error:
            raise OAuth2Error(f"the ID token is not valid: {error}") from error
        expected = (self.state or {}).get("nonce")
        if not expected or not hmac.compare_digest(str(claims.get("nonce", "")), expected):
            raise OAuth2Error("the ID token's nonce is not this sign-in's")
        jwtkit.verify_jti(claims)  # allauth's replay check: each token once
        return claims


class OidcProvider(OpenIDConnectProvider):
    oauth2_adapter_class = OidcAdapter

    def redirect(self, request: HttpRequest, process: Any, next_url=None, data=None, **kwargs):
        nonce = secrets.token_urlsafe(32)
        auth_params = {**(kwargs.pop("auth_params", None) or self.get_auth_params())}
        auth_params["nonce"] = nonce
        # Extra keyword arguments are kept in the stashed state (allauth's stash_redirect_state).
        return super().redirect(
            request, process, next_url, data, auth_params=auth_params, nonce=nonce, **kwargs
        )


def _refused(view: Any, request: HttpRequest, error: Exception) -> HttpResponse:
    # The provider could not be reached or answered nonsense: say so, never a 500.
    return render_authentication_error(request, view.adapter.get_provider(), exception=error)


class LoginView(OAuth2LoginView):
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return super().dispatch(request, *args, **kwargs)
        except (OAuth2Error, RequestException) as error:
            return _refused(self, request, error)


class CallbackView(OAuth2CallbackView):
    adapter: OidcAdapter

    def _get_state(self, request: HttpRequest, provider: Any):
        state, response = super()._get_state(request, provider)
        self.adapter.state = state
        return state, response

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return super().dispatch(request, *args, **kwargs)
        except (OAuth2Error, RequestException) as error:
            return _refused(self, request, error)


def login(request: HttpRequest, provider_id: str) -> HttpResponse:
    try:
        return LoginView.adapter_view(OidcAdapter(request, provider_id))(request)
    except SocialApp.DoesNotExist:
        raise Http404 from None


def callback(request: HttpRequest, provider_id: str) -> HttpResponse:
    try:
        return CallbackView.adapter_view(OidcAdapter(request, provider_id))(request)
    except SocialApp.DoesNotExist:
        raise Http404 from None
