"""The task queue (django-q2) and the cache it keeps its cluster stats in."""

from poolpatrol.env import env_bool, env_int, env_str
from poolpatrol.settings_parts.base import RUNNING_TESTS, TIME_ZONE

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
