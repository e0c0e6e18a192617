"""What every group reads: where files go, whether tests run, production or not, the time zone."""

import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from poolpatrol.env import env_bool, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
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
# Django's, and the task queue's schedules (task_queue.py).
TIME_ZONE = env_str("TIME_ZONE", "America/Los_Angeles")
