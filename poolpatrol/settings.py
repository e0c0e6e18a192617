"""Pool Patrol settings: one module, read from the environment.

With no environment at all this runs the embedded default: SQLite in var/,
the django-q2 ORM broker, a file email backend and the offline rules engine.
PRODUCTION=true turns on the deployment checks and refuses to start without
SECRET_KEY and ALLOWED_HOSTS. Every variable is listed in docs/operating.md#settings.
"""

import datetime as dt
import os
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from poolpatrol.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_networks,
    env_prices,
    env_rate,
    env_str,
)
from poolpatrol.signin import config as signin

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

# pytest imports settings before any test runs; django-q2 only honours `sync`
# if it is in the settings when Django starts, so tests are detected here.
RUNNING_TESTS = "pytest" in sys.modules

PRODUCTION = env_bool("PRODUCTION", False)
DEBUG = env_bool("DEBUG", False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG must be off when PRODUCTION=true")

SECRET_KEY = env_str("SECRET_KEY")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
if PRODUCTION:
    if len(SECRET_KEY) < 50:
        raise ImproperlyConfigured("PRODUCTION=true needs SECRET_KEY (at least 50 characters)")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("PRODUCTION=true needs ALLOWED_HOSTS (comma-separated)")
else:
    SECRET_KEY = SECRET_KEY or "dev-only-insecure-key-pool-patrol-never-use-in-production"
    ALLOWED_HOSTS = ALLOWED_HOSTS or ["127.0.0.1", "localhost", "testserver"]
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

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
        DATABASES["default"]["CONN_MAX_AGE"] = 0
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)  # a fresh clone has no var/ yet
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "db.sqlite3"),
            "OPTIONS": dict(SQLITE_OPTIONS),
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

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "America/Los_Angeles")
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

# --- Failed logins (django-axes): after AXES_FAILURE_LIMIT failures for one
# username from one address, that pair is locked out for AXES_COOLOFF_MINUTES.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = dt.timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_ENABLED = env_bool("AXES_ENABLED", True)
# django-axes logs its policy ("AXES: BEGIN …") whenever Django starts: in every
# manage.py command (migrate, load_demo, qcluster…) and twice under runserver
# (the autoreloader's watcher, then the server it runs). Only a process that
# serves logins says it: runserver's server, or a WSGI/ASGI server's.
_COMMAND = sys.argv[1] if len(sys.argv) > 1 and Path(sys.argv[0]).name == "manage.py" else None
_SERVES_LOGINS = _COMMAND is None or (
    _COMMAND == "runserver" and ("--noreload" in sys.argv or os.environ.get("RUN_MAIN") == "true")
)
AXES_VERBOSE = AXES_ENABLED and _SERVES_LOGINS
# The client's address behind the reverse proxies in front (poolpatrol/client_address.py):
# X-Forwarded-For is read from the right only through the hops trusted here, by
# address (TRUSTED_PROXIES) or by count (TRUSTED_PROXY_COUNT); with neither it is
# ignored. Without this, behind a proxy every login comes from the proxy's address
# and five wrong passwords from anywhere lock the user out for everyone.
AXES_CLIENT_IP_CALLABLE = "poolpatrol.client_address.client_address"
TRUSTED_PROXIES = env_networks("TRUSTED_PROXIES")
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0)
if TRUSTED_PROXIES and TRUSTED_PROXY_COUNT:
    raise ImproperlyConfigured("set TRUSTED_PROXIES or TRUSTED_PROXY_COUNT, not both")

# --- Staff sign-in (django-allauth, poolpatrol/signin/; docs/operating.md#sign-in).
# Local passwords unless LOCAL_LOGIN=false; OIDC_ISSUER adds single sign-on with
# roles from the provider's groups; MFA_REQUIRED_FOR names the roles whose
# password sign-ins need a second factor (an authenticator app, recovery codes).
OIDC = signin.oidc_from_env(PRODUCTION)
LOCAL_LOGIN = signin.local_login_from_env(OIDC)
MFA_REQUIRED_FOR = signin.mfa_required_for_from_env()
ACCOUNT_ADAPTER = "poolpatrol.signin.adapters.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "poolpatrol.signin.adapters.SocialAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "email"]
ACCOUNT_EMAIL_VERIFICATION = "none"
# A provider's user is its own account (provider + subject), never joined by email.
ACCOUNT_UNIQUE_EMAIL = False
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
SOCIALACCOUNT_PROVIDERS = signin.social_providers(OIDC)  # with poolpatrol/signin/oidc.py
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes"]
MFA_FORMS = {"activate_totp": "poolpatrol.signin.second_factor.ActivateTOTPForm"}
MFA_TOTP_ISSUER = "Pool Patrol"

# --- Content Security Policy (django-csp): no inline script, no third-party
# origins; htmx and the dashboard's scripts are our own static files. Inline
# style attributes are allowed for the server-rendered SVG charts.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", *env_list("MAP_TILE_ORIGINS")],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        # The sign-in button's form is answered with a redirect to the provider.
        "form-action": ["'self'", *([OIDC.origin] if OIDC else [])],
        "base-uri": ["'self'"],
        "object-src": ["'none'"],
    }
}
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

# --- The dashboard.
# Minutes an auditor spends on one vanpool by hand, for "hours saved".
MANUAL_AUDIT_MINUTES = env_int("MANUAL_AUDIT_MINUTES", 45, minimum=1)
# A tile server for the vanpool map, e.g. https://tile.example.org/{z}/{x}/{y}.png;
# off by default, so the map makes no request outside this server.
MAP_TILE_URL = env_str("MAP_TILE_URL")

# --- The JSON API (Django REST framework).
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous caller gets 401 with WWW-Authenticate: Token.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.StaffModelPermissions"],
    # JSON in and out; people read the API through /api/docs/.
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_FILTER_BACKENDS": ["api.filters.FilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.Pagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 50, minimum=1),
    "DEFAULT_SCHEMA_CLASS": "api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    # Per user (so per token: one token per user) and per address; 429 + Retry-After.
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttles.UserThrottle",
        "api.throttles.AnonThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": env_rate("API_THROTTLE_USER", "1000/hour"),
        "anon": env_rate("API_THROTTLE_ANON", "60/hour"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Pool Patrol API",
    "DESCRIPTION": "Vanpools, employees, audit cases, email threads and the review queue.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["api.permissions.IsStaff"],
    "SCHEMA_PATH_PREFIX": "/api",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "VanpoolStatusEnum": "vanpools.models.Vanpool.Status",
        "EmployeeStatusEnum": "vanpools.models.Employee.Status",
        "RiderStatusEnum": "vanpools.models.Rider.Status",
        "CaseStatusEnum": "cases.models.Case.Status",
        "CaseOutcomeEnum": "cases.models.Case.Outcome",
        "CheckTypeEnum": "cases.models.Verification.CheckType",
        "PendingActionStatusEnum": "cases.models.PendingAction.Status",
        "MessageStatusEnum": "outreach.models.Message.Status",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Security: on in production so `manage.py check --deploy` passes.
if PRODUCTION:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # /health is probed by load balancers over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^health$"]
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# --- Email: a file backend by default (var/mail/), any Django/anymail backend by env.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.filebased.EmailBackend")
EMAIL_FILE_PATH = VAR_DIR / "mail"
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Pool Patrol <vanpool-audit@example.com>")
if RUNNING_TESTS:
    EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"

# anymail: any ESP by environment. EMAIL_BACKEND=anymail.backends.postmark.EmailBackend
# plus ANYMAIL_POSTMARK_SERVER_TOKEN=… (every ANYMAIL_* variable becomes a key of
# ANYMAIL). WEBHOOK_SECRET ("user:password", comma-separated to rotate) guards
# every inbound and tracking webhook with basic auth; outside DEBUG an unset
# secret makes the webhooks refuse every call instead of trusting anyone.
ANYMAIL: dict[str, str | list[str]] = {
    key.removeprefix("ANYMAIL_"): value
    for key, value in os.environ.items()
    if key.startswith("ANYMAIL_") and key != "ANYMAIL_WEBHOOK_SECRET"
}
WEBHOOK_SECRET = env_list("WEBHOOK_SECRET")
if WEBHOOK_SECRET:
    ANYMAIL["WEBHOOK_SECRET"] = WEBHOOK_SECRET
if PRODUCTION and not WEBHOOK_SECRET:
    raise ImproperlyConfigured("PRODUCTION=true needs WEBHOOK_SECRET for the email webhooks")
# The provider(s) whose webhooks answer on /anymail/<provider>/… (comma-separated while
# moving between two); unset, the one EMAIL_BACKEND sends through, if an anymail one. Every
# other provider's URLs answer 404. A configured provider whose key or extra is missing
# stops the server from starting (outreach/providers.py, docs/operating.md).
EMAIL_PROVIDER = [] if RUNNING_TESTS else [name.lower() for name in env_list("EMAIL_PROVIDER")]

# --- Outreach: what riders receive and how long they have to answer.
OUTREACH_FROM_EMAIL = env_str("OUTREACH_FROM_EMAIL") or DEFAULT_FROM_EMAIL
# Replies come back to reply+<thread token>@INBOUND_DOMAIN (the ESP's inbound route).
INBOUND_DOMAIN = env_str("INBOUND_DOMAIN", "replies.poolpatrol.example")
INBOUND_LOCAL_PREFIX = env_str("INBOUND_LOCAL_PREFIX", "reply")
EMPLOYEE_PORTAL_URL = env_str("EMPLOYEE_PORTAL_URL", "https://portal.example.com/my-profile")
PROGRAM_NAME = env_str("PROGRAM_NAME", "Commute Vanpool Program")
PROGRAM_CONTACT_EMAIL = env_str("PROGRAM_CONTACT_EMAIL", "vanpool-program@example.com")
# Copy the vanpool's coordinator on every message to a rider.
OUTREACH_COPY_COORDINATOR = env_bool("OUTREACH_COPY_COORDINATOR", False)
REPLY_WAIT_DAYS = env_int("REPLY_WAIT_DAYS", 7, minimum=1)
# A reminder goes this many days before the reply deadline (0: no reminder).
REMINDER_DAYS_BEFORE = env_int("REMINDER_DAYS_BEFORE", 2, minimum=0)
MAX_REAUDITS = env_int("MAX_REAUDITS", 3, minimum=0)
# A bulk audit preloads, decides and writes this many vanpools at a time (one
# transaction per chunk; each vanpool's case in a savepoint of its own).
AUDIT_CHUNK_SIZE = env_int("AUDIT_CHUNK_SIZE", 200, minimum=1)
# A cancellation nobody approved or rejected within this many days expires and
# the case is re-audited on fresh records (0: proposals never expire).
PENDING_ACTION_EXPIRE_DAYS = env_int("PENDING_ACTION_EXPIRE_DAYS", 14, minimum=0)
EMAIL_SEND_MAX_ATTEMPTS = env_int("EMAIL_SEND_MAX_ATTEMPTS", 5, minimum=1)
EMAIL_RETRY_BASE_SECONDS = env_int("EMAIL_RETRY_BASE_SECONDS", 60, minimum=1)
# Replies longer than this are cut before classification (the full body is kept).
INBOUND_CLASSIFY_MAX_CHARS = env_int("INBOUND_CLASSIFY_MAX_CHARS", 8000, minimum=200)
# A sender's emails beyond this many in an hour are kept unread and counted on
# one card for a person (a mail loop, or a flood), not each read and answered.
INBOUND_SENDER_HOURLY_LIMIT = env_int("INBOUND_SENDER_HOURLY_LIMIT", 20, minimum=1)
# Request bodies (poolpatrol/request_limits.py): the email webhooks take what
# providers deliver (35 MB of mail from Postmark is ~48 MB of JSON); every other
# path keeps Django's 2.5 MB. Django's own limit is raised to the larger one.
INBOUND_MAX_BYTES = env_int("INBOUND_MAX_BYTES", 64 * 1024 * 1024, minimum=1024 * 1024)
REQUEST_MAX_BYTES = env_int("REQUEST_MAX_BYTES", 2_621_440, minimum=64 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = max(INBOUND_MAX_BYTES, REQUEST_MAX_BYTES)
# What an inbound row keeps: the raw message and each body are cut here (flag
# "truncated"); the hash is of the whole message, so a redelivery still matches.
INBOUND_RAW_MAX_BYTES = env_int("INBOUND_RAW_MAX_BYTES", 1024 * 1024, minimum=64 * 1024)
INBOUND_BODY_MAX_CHARS = env_int("INBOUND_BODY_MAX_CHARS", 200_000, minimum=10_000)

# --- Task queue: django-q2. ORM broker by default, Redis with REDIS_URL.
# timeout < retry, or a long task is handed to a second worker while the first
# still runs; max_attempts stops poison tasks being re-delivered forever.
Q_TIMEOUT = env_int("Q_TIMEOUT", 300, minimum=1)
Q_CLUSTER = {
    "name": "poolpatrol",
    "workers": env_int("Q_WORKERS", 2, minimum=1),
    "timeout": Q_TIMEOUT,
    "retry": env_int("Q_RETRY", Q_TIMEOUT + 60, minimum=Q_TIMEOUT + 1),
    "max_attempts": env_int("Q_MAX_ATTEMPTS", 3, minimum=1),
    "ack_failures": True,
    "catch_up": False,
    "time_zone": TIME_ZONE,
    "save_limit": 1000,
    "label": "Task queue",
    # Each cluster runs the schedules unless told not to: with several worker
    # processes, one scheduler (Q_SCHEDULER=true) and the rest false.
    "scheduler": env_bool("Q_SCHEDULER", True),
    "sync": RUNNING_TESTS or env_bool("Q_SYNC", False),
}
# Outbound mail on its own queue (SEND_QUEUE=send), drained by its own worker
# (Q_CLUSTER_NAME=send manage.py qcluster): sends never wait behind a backlog of
# replies or audits. Unset, everything shares one queue and one worker pool.
SEND_QUEUE = env_str("SEND_QUEUE")
Q_CLUSTER["ALT_CLUSTERS"] = {SEND_QUEUE: {}} if SEND_QUEUE else {}
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
    # Workers and web processes on many hosts share one cache: the API's
    # throttle counts and anything else cached are then per user, not per process.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "poolpatrol",
        }
    }
    if RUNNING_TESTS:
        # pytest-xdist runs several test processes against one Redis: a shared
        # cache would mix their throttle counts and each test's cache.clear()
        # would empty the others'. Each test process keeps its own; sharing
        # across hosts is tested with real processes (poolpatrol/tests/test_queue.py).
        CACHES["default"] = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
else:
    Q_CLUSTER["orm"] = "default"
    # django-q2 keeps each cluster's stats (what /health counts as "clusters")
    # in a Django cache. The default cache is per process, so the web process
    # never saw a worker's; this one lives in the database the ORM broker
    # already shares. Its table is made by `manage.py migrate` (outreach/apps.py).
    # (With Redis the broker keeps the stats in Redis itself.)
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "django_q": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "django_q_cache",
        },
    }
    Q_CLUSTER["cache"] = "django_q"

# --- Audit rules and model backends.
LLM_BACKEND = env_choice("LLM_BACKEND", "rules", ("rules", "openai"))
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
if LLM_BACKEND == "openai" and not OPENAI_API_KEY:
    raise ImproperlyConfigured("LLM_BACKEND=openai needs OPENAI_API_KEY")
# The model client (agents/llm.py): per-call timeout, retries on 429/5xx, and a
# circuit breaker that fails fast for a cooldown after consecutive failed calls.
# A server of one's own (OPENAI_BASE_URL) is often a CPU: a 5-rider audit prompt
# takes it 15-60 s, so its default is longer than OpenAI's.
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 180 if OPENAI_BASE_URL else 20, minimum=0.01)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 3, minimum=0)
# Output tokens a call may write; an answer cut at the limit is asked again
# once with LLM_REASK_TOKEN_FACTOR times as many.
LLM_MAX_TOKENS = env_int("LLM_MAX_TOKENS", 1024, minimum=16)
LLM_REASK_TOKEN_FACTOR = env_int("LLM_REASK_TOKEN_FACTOR", 4, minimum=1)
# Bounded answers: a small local model under a grammar can repeat itself until
# the token limit. With bounds on, every free-text field and every list in the
# schema sent carries a maximum (maxLength, maxItems) that the server's grammar
# enforces, so the answer ends. OpenAI's strict mode rejects maxLength, so
# bounds are on by default only for a server of one's own (OPENAI_BASE_URL),
# and a server that refuses them is asked again without them.
LLM_OUTPUT_BOUNDS = env_bool("LLM_OUTPUT_BOUNDS", bool(OPENAI_BASE_URL))
LLM_OUTPUT_MAX_CHARS = env_int("LLM_OUTPUT_MAX_CHARS", 240, minimum=1)
LLM_OUTPUT_MAX_ITEMS = env_int("LLM_OUTPUT_MAX_ITEMS", 16, minimum=1)
# Sampling: 0 and a fixed seed, so the same reply gets the same reading.
LLM_TEMPERATURE = env_float("LLM_TEMPERATURE", 0, minimum=0)
LLM_SEED = env_int("LLM_SEED", 7, minimum=0)
# json_schema (OpenAI, llama-server) or json_object with the schema (llama-cpp-python's
# server); auto starts with json_schema and switches if the server refuses it.
LLM_RESPONSE_FORMAT = env_choice(
    "LLM_RESPONSE_FORMAT", "auto", ("auto", "json_schema", "json_object")
)
LLM_BREAKER_THRESHOLD = env_int("LLM_BREAKER_THRESHOLD", 5, minimum=1)
LLM_BREAKER_COOLDOWN_SECONDS = env_float("LLM_BREAKER_COOLDOWN_SECONDS", 60, minimum=0)
# A model per agent (LLM_MODEL_<AGENT>): judgement and writing on the larger
# model, narrow checks and classification on the mini one. Agents not listed
# use LLM_MODEL_DEFAULT.
# OpenAI's names are defaults for OpenAI's endpoint only: another server (OPENAI_BASE_URL)
# serves its own model, whose name the client reads from /v1/models unless one is given.
LLM_DEFAULT_MODEL = env_str("LLM_MODEL_DEFAULT") or ("" if OPENAI_BASE_URL else "gpt-4.1-mini")
LLM_MODELS = {
    agent: env_str(f"LLM_MODEL_{agent.upper()}")
    or (LLM_DEFAULT_MODEL if OPENAI_BASE_URL else default)
    for agent, default in {
        "case_manager": "gpt-4.1",
        "outreach": "gpt-4.1",
        "supervisor": "gpt-4.1",
        "location": "gpt-4.1-mini",
        "shift": "gpt-4.1-mini",
        "classifier": "gpt-4.1-mini",
        "knowledge": "gpt-4.1-mini",
    }.items()
}


# USD per 1M tokens. LLM_PRICES_JSON adds or replaces models, e.g.
# {"my-model": {"input": 0.5, "output": 1.5}}; an unpriced model is recorded at 0.
LLM_PRICES = {
    "gpt-4.1": {"input": Decimal("2.00"), "output": Decimal("8.00")},
    "gpt-4.1-mini": {"input": Decimal("0.40"), "output": Decimal("1.60")},
} | env_prices("LLM_PRICES_JSON")
DEFAULT_MAX_COMMUTE_MILES = env_int("DEFAULT_MAX_COMMUTE_MILES", 50, minimum=1)
COMMUTE_CIRCUITY_FACTOR = env_float("COMMUTE_CIRCUITY_FACTOR", 1.2, minimum=1.0)
# Dotted path to a class with .name and .commute_miles(home, pickup); the
# default is offline (great-circle × circuity), a routing service can replace it.
DISTANCE_PROVIDER = env_str("DISTANCE_PROVIDER", "vanpools.geo.OfflineDistanceProvider")
# Shift check: how far (minutes) a rider's start/end may sit from the van's
# arrival/departure, and how many days from the audit date are compared.
SHIFT_TOLERANCE_MINUTES = env_int("SHIFT_TOLERANCE_MINUTES", 30, minimum=0)
AUDIT_WINDOW_DAYS = env_int("AUDIT_WINDOW_DAYS", 7, minimum=1)
# A rider's reply classified below this confidence (0-1) goes to a human to label.
REPLY_CONFIDENCE_THRESHOLD = env_float("REPLY_CONFIDENCE_THRESHOLD", 0.7, minimum=0)
# The reader's escalation probability at or above which a reply goes to a person.
# Unset: the threshold the reader was trained with, chosen for recall on held-out
# replies (docs/evaluation.md shows what each value costs in automation).
REPLY_ESCALATION_THRESHOLD = (
    env_float("REPLY_ESCALATION_THRESHOLD", 0.0, minimum=0)
    if env_str("REPLY_ESCALATION_THRESHOLD").strip()
    else None
)
# Below that, the escalation probability at or above which a reply still goes to
# a person, as a card with the reader's best ordinary guess: it may be an
# escalation. Unset: the reader's own, chosen so that no held-out escalation is
# acted on without a person (docs/evaluation.md).
REPLY_REVIEW_THRESHOLD = (
    env_float("REPLY_REVIEW_THRESHOLD", 0.0, minimum=0)
    if env_str("REPLY_REVIEW_THRESHOLD").strip()
    else None
)
# With a model configured, the prompt it reads replies with (agents/prompts/
# classify_reply.<version>.md) and how many labelled replies that resemble the
# one in hand it is shown (v2 only; docs/evaluation.md measures each).
REPLY_MODEL_PROMPT = env_choice("REPLY_MODEL_PROMPT", "v2", ("v1", "v2"))
REPLY_MODEL_EXAMPLES = env_int("REPLY_MODEL_EXAMPLES", 4, minimum=0)
# With a model configured, the shift prompt: v1 answers verdicts only (a proposal
# for a person); v2 also returns the week it read from HR's text, which the rules
# check and may pass on (audit/resolve.py). The packaged local models rarely
# answer v2's schema usably (docs/evaluation.md), so v1 is the default.
SHIFT_MODEL_PROMPT = env_choice("SHIFT_MODEL_PROMPT", "v1", ("v1", "v2"))

# --- Logging: plain text in development, JSON lines in production. The
# context filter stamps every record with the request id and, inside tasks and
# agents, the case and vanpool being worked on.
LOG_LEVEL = env_choice("LOG_LEVEL", "info", ("debug", "info", "warning", "error")).upper()
LOG_FORMAT = env_choice("LOG_FORMAT", "json" if PRODUCTION else "text", ("json", "text"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "poolpatrol.logcontext.ContextFilter"}},
    "formatters": {
        "text": {
            "format": "%(asctime)s %(levelname)s %(name)s %(context)s%(message)s",
        },
        "json": {
            "()": "poolpatrol.logcontext.json_formatter",
            "format": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["context"],
        },
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Django's default config gives "django" its own console handler (under
        # DEBUG) and it propagates to root too: every line printed twice. Listed
        # here, its handlers are replaced by none, so each line comes through root once.
        "django": {"handlers": [], "level": "INFO"},
        # Our request log replaces Django's own per-request lines; warnings
        # still reach root (Django's default stops them at its own handler).
        "django.server": {"handlers": [], "level": "WARNING", "propagate": True},
        "django.request": {"level": "ERROR"},
    },
}
