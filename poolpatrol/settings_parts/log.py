"""Logging: plain text in development, JSON lines in production."""

from poolpatrol.env import env_choice
from poolpatrol.settings_parts.base import PRODUCTION

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
