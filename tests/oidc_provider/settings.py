"""Settings of the test OpenID Connect provider (see __init__.py).

Everything that varies comes from the environment tests/oidc_support.py sets:
OIDC_PROVIDER_DIR (its database and signing key) and OIDC_PROVIDER_ISSUER.
"""

import os
from pathlib import Path

DATA = Path(os.environ["OIDC_PROVIDER_DIR"])

SECRET_KEY = "oidc-test-provider-" + "k" * 40
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
    "tests.oidc_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "tests.oidc_provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": DATA / "provider.sqlite3"}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# A fresh database per run: its tables are made straight from the models
# (migrate --run-syncdb), seconds faster than replaying every migration.
MIGRATION_MODULES = {app.rsplit(".", 1)[-1]: None for app in INSTALLED_APPS}
USE_TZ = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGIN_URL = "/login/"
# Both servers live on 127.0.0.1, and cookies are per host, not per port: the
# provider's cookies must not overwrite the app's session or CSRF cookies.
SESSION_COOKIE_NAME = "provider_sessionid"
CSRF_COOKIE_NAME = "provider_csrftoken"
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_ISS_ENDPOINT": os.environ["OIDC_PROVIDER_ISSUER"],
    "OIDC_RSA_PRIVATE_KEY": (DATA / "signing-key.pem").read_text(),
    "PKCE_REQUIRED": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
    "OAUTH2_VALIDATOR_CLASS": "tests.oidc_provider.claims.DirectoryClaims",
    "SCOPES": {
        "openid": "OpenID Connect",
        "profile": "Name and username",
        "email": "Email address",
        "groups": "Directory groups",
    },
}
