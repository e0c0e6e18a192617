"""A real OpenID Connect provider on loopback for the sign-in tests (tests/oidc_provider).

``running_provider(folder)`` starts django-oauth-toolkit's provider in its own
process with its own SQLite database and a fresh RSA signing key, and stops it
afterwards. ``OidcProvider.app_settings()`` is what OIDC_* would give the app;
``signin_settings`` puts it on Django's settings for one test.
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from poolpatrol.signin.config import OidcSettings, parse_role_map, social_providers

ROOT = Path(__file__).resolve().parent.parent
CLIENT_ID = "pool-patrol"
CLIENT_SECRET = "pool-patrol-test-client-secret"
PASSWORD = "directory-password"
CALLBACK = "/accounts/oidc/sso/login/callback/"
# The company's groups and the roles they grant (OIDC_ROLE_MAP).
ROLE_MAP = {"pool-auditors": "Auditors", "pool-coordinators": "Coordinators"}
# The company's directory when the provider starts: username → groups and name.
DIRECTORY = {
    "dana": {"groups": ["pool-auditors", "staff"], "first_name": "Dana", "last_name": "Reyes"},
    "luis": {"groups": ["pool-coordinators"], "first_name": "Luis", "last_name": "Ortega"},
    "erin": {"groups": ["sales", "staff"], "first_name": "Erin", "last_name": "Walsh"},
}
ADMIN_TOKEN = "provider-admin-token"


def person(username: str, groups: list[str], **names: str) -> dict[str, Any]:
    """A directory user as the provider's admin API takes it."""
    return {
        "groups": groups,
        "password": PASSWORD,
        "email": f"{username}@example-corp.test",
        **names,
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _signing_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@dataclass(frozen=True)
class OidcProvider:
    port: int
    folder: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def issuer(self) -> str:
        return f"{self.url}/o"

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "OIDC_"))}
        return keep | {
            "DJANGO_SETTINGS_MODULE": "tests.oidc_provider.settings",
            "OIDC_PROVIDER_DIR": str(self.folder),
            "OIDC_PROVIDER_ISSUER": self.issuer,
            "OIDC_PROVIDER_ADMIN_TOKEN": ADMIN_TOKEN,
        }

    def _admin(self, method: str, path: str, **kwargs: Any) -> None:
        response = requests.request(
            method,
            f"{self.url}/directory/{path}",
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            timeout=30,
            **kwargs,
        )
        assert response.status_code == 200, response.text

    def user(self, username: str, *groups: str) -> None:
        """Create or update a directory user with exactly these groups (the admin API)."""
        self._admin("PUT", f"users/{username}", json=person(username, list(groups)))

    def allow_redirect(self, app_url: str) -> None:
        """Register ``app_url``'s callback with the client (a live server's port)."""
        self._admin(
            "POST", f"clients/{CLIENT_ID}/redirect-uris", data=app_url.rstrip("/") + CALLBACK
        )

    def app_settings(self, issuer: str | None = None, **changes: Any) -> OidcSettings:
        return app_settings(issuer or self.issuer, **changes)


def app_settings(issuer: str, **changes: Any) -> OidcSettings:
    """What OIDC_* would give the app for a provider at ``issuer`` (this client, ROLE_MAP)."""
    fields: dict[str, Any] = {
        "issuer": issuer,
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "name": "Example Corp",
        "scopes": ("openid", "profile", "email", "groups"),
        "groups_claim": "groups",
        "role_map": parse_role_map(json.dumps(ROLE_MAP)),
    }
    return OidcSettings(**(fields | changes))


class DirectoryBrowser:
    """A person's browser at the provider: follows its redirects, fills its login form.

    The app side of the dance goes through Django's test client (``Client``),
    the provider side through this, each with its own cookies, as one browser
    keeps them per host.
    """

    def __init__(self, provider: OidcProvider) -> None:
        self.provider = provider
        self.session = requests.Session()

    def authorize(self, authorize_url: str, username: str, password: str = PASSWORD) -> str:
        """Sign in at the provider; the URL it sends the browser back to (the app's callback)."""
        response = self.session.get(authorize_url, allow_redirects=False, timeout=30)
        if response.status_code == 302 and "/login/" in response.headers["Location"]:
            login_url = self.provider.url + response.headers["Location"]
            self.session.get(login_url, timeout=30)
            response = self.session.post(
                login_url,
                data={
                    "username": username,
                    "password": password,
                    "csrfmiddlewaretoken": self.session.cookies["provider_csrftoken"],
                    "next": dict(parse_qsl(urlsplit(login_url).query))["next"],
                },
                allow_redirects=False,
                timeout=30,
            )
            assert response.status_code == 302, response.text
            response = self.session.get(
                self.provider.url + response.headers["Location"], allow_redirects=False, timeout=30
            )
        assert response.status_code == 302, response.text
        return str(response.headers["Location"])


def with_query(url: str, **changes: str | None) -> str:
    """``url`` with query parameters replaced (or dropped, for None)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    for name, value in changes.items():
        if value is None:
            query.pop(name, None)
        else:
            query[name] = value
    return urlunsplit(parts._replace(query=urlencode(query)))


def local_path(url: str) -> str:
    """The path and query of an absolute URL, for Django's test client."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}" if parts.query else parts.path


def signin_settings(settings: Any, oidc: OidcSettings, **extra: Any) -> None:
    """Point the app at ``oidc`` for one test, as OIDC_* in the environment would."""
    settings.OIDC = oidc
    settings.SOCIALACCOUNT_PROVIDERS = social_providers(oidc)
    policy = settings.CONTENT_SECURITY_POLICY
    directives = policy["DIRECTIVES"] | {"form-action": ["'self'", oidc.origin]}
    settings.CONTENT_SECURITY_POLICY = policy | {"DIRECTIVES": directives}
    for name, value in extra.items():
        setattr(settings, name, value)


def _wait_until_answering(provider: OidcProvider, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = (provider.folder / "server.log").read_text()
            raise RuntimeError(f"the OIDC provider exited with {process.returncode}:\n{log}")
        connection = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=30)
        try:
            connection.request("GET", "/o/.well-known/openid-configuration")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            connection.close()
        time.sleep(0.2)
    raise RuntimeError("the OIDC provider did not answer within 120 s")


@contextmanager
def running_provider(folder: Path, *redirect_uris: str) -> Iterator[OidcProvider]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "signing-key.pem").write_text(_signing_key())
    provider = OidcProvider(port=free_port(), folder=folder)
    uris = redirect_uris or (f"http://testserver{CALLBACK}",)
    directory = folder / "directory.json"
    directory.write_text(
        json.dumps({name: person(name, **entry) for name, entry in DIRECTORY.items()})
    )
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "django", "oidc_serve", str(provider.port)),
            *(CLIENT_ID, CLIENT_SECRET, *uris, "--directory", str(directory)),
        ],
        cwd=ROOT,
        env=provider.env(),
        stdout=subprocess.DEVNULL,
        stderr=(folder / "server.log").open("wb"),
    )
    try:
        _wait_until_answering(provider, process)
        yield provider
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
