"""Sign-in settings read from the environment, refused at start-up when they do not parse.

``settings.py`` calls these once; nothing here touches the database. The roles are the
Django groups the migrations create (vanpools/migrations/0002_staff_groups.py).
"""

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from poolpatrol.env import env_bool, env_str

# The staff roles: the Django groups that hold the permissions (README, "Roles and logins").
ROLES = ("Auditors", "Coordinators")
# What MFA_REQUIRED_FOR names besides `none` and `all`, and the role each word means.
MFA_ROLE_WORDS = {"auditors": "Auditors", "coordinators": "Coordinators"}
ALL_STAFF = "all"
# The provider's id in allauth: part of the callback URL the provider is given
# (/accounts/oidc/sso/login/callback/) and of every SSO account's key.
SSO_PROVIDER_ID = "sso"


@dataclass(frozen=True)
class OidcSettings:
    issuer: str
    client_id: str
    client_secret: str
    name: str
    scopes: tuple[str, ...]
    groups_claim: str
    # provider group → the roles it grants
    role_map: dict[str, tuple[str, ...]]

    @property
    def origin(self) -> str:
        """scheme://host[:port] of the issuer: where the browser is sent to sign in."""
        parts = urlsplit(self.issuer)
        return f"{parts.scheme}://{parts.netloc}"


def _role(value: object, group: str) -> str:
    for role in ROLES:
        if isinstance(value, str) and value.strip().lower() == role.lower():
            return role
    raise ImproperlyConfigured(
        f"OIDC_ROLE_MAP: group {group!r} maps to {value!r}; a role is one of {', '.join(ROLES)}"
    )


def parse_role_map(raw: str) -> dict[str, tuple[str, ...]]:
    """``{"provider group": "Auditors"}`` or a list of roles per group, as JSON.

    JSON because group names are the provider's own: an LDAP DN holds commas and
    equals signs, an Entra ID group is a GUID, a Keycloak group a path.
    """
    try:
        entries = json.loads(raw)
    except ValueError as error:
        raise ImproperlyConfigured(f"OIDC_ROLE_MAP is not JSON: {error}") from None
    if not isinstance(entries, dict) or not entries:
        raise ImproperlyConfigured(
            'OIDC_ROLE_MAP must be a JSON object such as {"pool-auditors": "Auditors"}'
        )
    role_map = {}
    for group, roles in entries.items():
        listed = roles if isinstance(roles, list) else [roles]
        role_map[group] = tuple(dict.fromkeys(_role(role, group) for role in listed))
    return role_map


def _scopes(raw: str) -> tuple[str, ...]:
    scopes = tuple(dict.fromkeys(raw.replace(",", " ").split()))
    if "openid" not in scopes:
        raise ImproperlyConfigured(f"OIDC_SCOPES={raw!r} must include openid")
    return scopes


def _issuer(raw: str, production: bool) -> str:
    issuer = raw.strip()
    parts = urlsplit(issuer)
    if parts.scheme not in {"http", "https"} or not parts.netloc or parts.query:
        raise ImproperlyConfigured(
            f"OIDC_ISSUER={raw!r} must be the provider's issuer URL, e.g. https://login.example.com"
        )
    if production and parts.scheme != "https":
        raise ImproperlyConfigured("OIDC_ISSUER must be https:// when PRODUCTION=true")
    return issuer


def oidc_from_env(production: bool) -> OidcSettings | None:
    """The OpenID Connect provider, or None when OIDC_ISSUER is not set."""
    if not env_str("OIDC_ISSUER").strip():
        return None
    missing = [
        name
        for name in ("OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "OIDC_ROLE_MAP")
        if not env_str(name).strip()
    ]
    if missing:
        raise ImproperlyConfigured(f"OIDC_ISSUER is set: {', '.join(missing)} must be set too")
    return OidcSettings(
        issuer=_issuer(env_str("OIDC_ISSUER"), production),
        client_id=env_str("OIDC_CLIENT_ID").strip(),
        client_secret=env_str("OIDC_CLIENT_SECRET"),
        name=env_str("OIDC_NAME").strip() or "single sign-on",
        scopes=_scopes(env_str("OIDC_SCOPES", "openid profile email")),
        groups_claim=env_str("OIDC_GROUPS_CLAIM").strip() or "groups",
        role_map=parse_role_map(env_str("OIDC_ROLE_MAP")),
    )


def local_login_from_env(oidc: OidcSettings | None) -> bool:
    """LOCAL_LOGIN (default true); false needs single sign-on, or nobody could sign in."""
    local_login = env_bool("LOCAL_LOGIN", True)
    if not local_login and oidc is None:
        raise ImproperlyConfigured("LOCAL_LOGIN=false needs single sign-on: set OIDC_ISSUER")
    return local_login


def mfa_required_for_from_env() -> frozenset[str]:
    """MFA_REQUIRED_FOR: `none`, `all` (every staff user) or roles: `auditors,coordinators`."""
    raw = env_str("MFA_REQUIRED_FOR", "none")
    words = {word.strip().lower() for word in raw.split(",") if word.strip()}
    if words <= {"none"}:
        return frozenset()
    if words == {ALL_STAFF}:
        return frozenset({ALL_STAFF})
    unknown = words - set(MFA_ROLE_WORDS)
    if unknown:
        raise ImproperlyConfigured(
            f"MFA_REQUIRED_FOR={raw!r}: use none, all, or roles from "
            f"{', '.join(MFA_ROLE_WORDS)} (comma-separated)"
        )
    return frozenset(MFA_ROLE_WORDS[word] for word in words)


def social_providers(oidc: OidcSettings | None) -> dict[str, Any]:
    """SOCIALACCOUNT_PROVIDERS: allauth's OpenID Connect provider, with this one app."""
    apps = []
    if oidc is not None:
        app_settings = {
            # Discovery is at <issuer>/.well-known/openid-configuration, less a final "/".
            "server_url": oidc.issuer.rstrip("/"),
            "scope": list(oidc.scopes),
        }
        apps.append(
            {
                "provider_id": SSO_PROVIDER_ID,
                "name": oidc.name,
                "client_id": oidc.client_id,
                "secret": oidc.client_secret,
                "settings": app_settings,
            }
        )
    return {
        "openid_connect": {
            "provider_class": "poolpatrol.signin.oidc.OidcProvider",
            "OAUTH_PKCE_ENABLED": True,
            "APPS": apps,
        }
    }
