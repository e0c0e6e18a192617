"""Pool Patrol settings, read from the environment: this module and its groups.

With no environment at all this runs the embedded default: SQLite in var/,
the django-q2 ORM broker, a file email backend and the offline rules engine.
PRODUCTION=true turns on the deployment checks and refuses to start without
SECRET_KEY and ALLOWED_HOSTS. Each group of settings is a module of
poolpatrol/settings_parts/, imported here whole, in the order they are checked.
Every variable is listed in docs/operating.md#settings.
"""

import os
import tempfile
from pathlib import Path

import dj_database_url

from poolpatrol.env import env_choice, env_int, env_str
from poolpatrol.languages import CODES as LANGUAGE_CODES
from poolpatrol.languages import SHIPPED as SHIPPED_LANGUAGES
from poolpatrol.settings_parts.base import BASE_DIR, DEBUG, PRODUCTION, RUNNING_TESTS, VAR_DIR

# The groups, in the order their checks ran when this was one module (the first
# missing production setting is the one named).
# isort: off
from poolpatrol.settings_parts.base import *  # noqa: F403
from poolpatrol.settings_parts.signin import *  # noqa: F403
from poolpatrol.settings_parts.security import *  # noqa: F403
from poolpatrol.settings_parts.api import *  # noqa: F403
from poolpatrol.settings_parts.mail import *  # noqa: F403
from poolpatrol.settings_parts.task_queue import *  # noqa: F403
from poolpatrol.settings_parts.rules_and_models import *  # noqa: F403
from poolpatrol.settings_parts.log import *  # noqa: F403
from poolpatrol.settings_parts.review_desk import *  # noqa: F403
from poolpatrol.settings_parts.roster_records import *  # noqa: F403
# isort: on

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_q",
    "anymail",
    "django_htmx",
    "template_partials",
    "axes",
    "csp",
    # Staff sign-in: single sign-on and the second factor (poolpatrol/signin/).
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "allauth.mfa",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # The history of roster records (settings_parts/roster_records.py).
    "simple_history",
    "vanpools",
    "cases",
    "agents",
    "outreach",
    "caseloop",
    "dashboard",
    "evals",
]

MIDDLEWARE = [
    "poolpatrol.request_log.RequestLogMiddleware",
    "poolpatrol.request_limits.RequestSizeLimit",
    "poolpatrol.nul_guard.NulPathGuard",
    "django.middleware.security.SecurityMiddleware",
    # /health for load balancers, before the Host check (they probe by IP).
    "poolpatrol.health.HealthProbe",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # LOCAL_LOGIN and MFA_REQUIRED_FOR for sessions already signed in.
    "poolpatrol.signin.policy.SignInPolicy",
    # Who changed a roster record (the user) and through which door (docs/design.md#history).
    "simple_history.middleware.HistoryRequestMiddleware",
    "poolpatrol.change_source.ChangeSourceMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its response.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    # First, so a locked-out user is refused before the password is checked.
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, refusing every password when LOCAL_LOGIN=false.
    "poolpatrol.signin.backends.LocalPasswordBackend",
]

ROOT_URLCONF = "poolpatrol.urls"
WSGI_APPLICATION = "poolpatrol.wsgi.application"
ASGI_APPLICATION = "poolpatrol.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: SQLite file by default, DATABASE_URL (postgres://…) otherwise.
DATABASE_URL = env_str("DATABASE_URL")
SQLITE_OPTIONS = {
    # WAL + IMMEDIATE: several django-q2 workers write without
    # "database is locked" (docs/design.md, guards and the lock they share).
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}
if DATABASE_URL:
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60), conn_health_checks=True
        )
    }
    if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        # A SQLite file named by URL (sqlite:////path) gets the embedded default's options.
        DATABASES["default"]["OPTIONS"] = dict(SQLITE_OPTIONS)
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)  # a fresh clone has no var/ yet
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "db.sqlite3"),
            "OPTIONS": dict(SQLITE_OPTIONS),
            # Reused like a server's connection: django-q2's ORM broker closes
            # obsolete connections before each enqueue, and closing SQLite's
            # (a WAL checkpoint) and opening it again cost a request that
            # enqueues about 30 ms of its 50.
            "CONN_MAX_AGE": env_int("DB_CONN_MAX_AGE", 60),
            "CONN_HEALTH_CHECKS": True,
        }
    }
    if RUNNING_TESTS:
        # A file, not SQLite's shared in-memory database: tests that write
        # from several threads at once (racing webhook deliveries) need real
        # locks that wait (the timeout above) instead of failing at once. One
        # file per test process, so two runs in one tree never share it.
        DATABASES["default"]["TEST"] = {
            "NAME": str(Path(tempfile.gettempdir()) / f"poolpatrol-test-{os.getpid()}.sqlite3")
        }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if RUNNING_TESTS:
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Staff pages are in English (no locale middleware: nothing switches them).
# Rider mail is written in each rider's language (outreach.rider_language):
# the languages shipped with a catalog in locale/, and the program's default.
LANGUAGE_CODE = "en-us"
LANGUAGES = [(language.code, language.english_name) for language in SHIPPED_LANGUAGES]
LANGUAGES_BIDI = [language.code for language in SHIPPED_LANGUAGES if language.bidi]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Number separators as the riders' own countries write them (poolpatrol/formats/).
FORMAT_MODULE_PATH = ["poolpatrol.formats"]
PROGRAM_LANGUAGE = env_choice("PROGRAM_LANGUAGE", "en", LANGUAGE_CODES)
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# Outside production WhiteNoise serves straight from the apps' static folders,
# so the demo needs no collectstatic; production serves the collected,
# fingerprinted files only.
WHITENOISE_USE_FINDERS = not PRODUCTION
# Without autorefresh WhiteNoise indexes every static file (about 200: stat,
# headers) each time a middleware stack is built: once per process when
# serving, but once per test client in tests (~15 ms a test). Tests look a
# file up when it is asked for instead.
WHITENOISE_AUTOREFRESH = DEBUG or RUNNING_TESTS
if not PRODUCTION:
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "review-queue"
LOGOUT_REDIRECT_URL = "login"

# --- The dashboard.
# Minutes an auditor spends on one vanpool by hand, for "hours saved".
MANUAL_AUDIT_MINUTES = env_int("MANUAL_AUDIT_MINUTES", 45, minimum=1)
# A tile server for the vanpool map, e.g. https://tile.example.org/{z}/{x}/{y}.png;
# off by default, so the map makes no request outside this server.
MAP_TILE_URL = env_str("MAP_TILE_URL")
