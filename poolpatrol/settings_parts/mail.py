"""Email in and out, and outreach: what riders receive and how long they have to answer."""

import os

from django.core.exceptions import ImproperlyConfigured

from poolpatrol.env import env_bool, env_int, env_list, env_str
from poolpatrol.settings_parts.base import PRODUCTION, RUNNING_TESTS, VAR_DIR

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
# Where riders reach the answer page: the links in their emails start with this.
PUBLIC_BASE_URL = env_str("PUBLIC_BASE_URL", "http://127.0.0.1:8000")
# An answer link works this many days at most, and never after its case closes.
ANSWER_LINK_DAYS = env_int("ANSWER_LINK_DAYS", 60, minimum=1)
# Answers through one link within an hour beyond this are refused (the page says so).
ANSWER_PAGE_HOURLY_LIMIT = env_int("ANSWER_PAGE_HOURLY_LIMIT", 10, minimum=1)
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
