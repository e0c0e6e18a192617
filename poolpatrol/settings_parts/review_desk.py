"""The review desk: due times, claims, four-eyes, escalation (cases.desk, caseloop.digest)."""

from poolpatrol.env import env_choice, env_int, env_int_map, env_str

# Hours to decide a card before it is overdue, per kind, over each kind's own
# default (cases/kinds/<kind>.py): REVIEW_SLA_HOURS=cancel_membership=48,review_email=8.
# A kind that does not exist is refused at start-up (cases.apps).
REVIEW_SLA_HOURS = env_int_map("REVIEW_SLA_HOURS", minimum=1)
# An "I'm on it" claim on a card lapses after this many minutes.
REVIEW_CLAIM_MINUTES = env_int("REVIEW_CLAIM_MINUTES", 60, minimum=1)
# 2: a cancellation needs a second approval, from another person (four-eyes).
CANCELLATION_APPROVALS = int(env_choice("CANCELLATION_APPROVALS", "1", ("1", "2")))
# The auditors are told once when a cancellation is this close to expiring
# (PENDING_ACTION_EXPIRE_DAYS); 0: never.
ESCALATE_HOURS_BEFORE_EXPIRY = env_int("ESCALATE_HOURS_BEFORE_EXPIRY", 48, minimum=0)
# Where staff reach the dashboard: the links in digests and escalations.
DASHBOARD_URL = env_str("DASHBOARD_URL", "http://localhost:8000")
