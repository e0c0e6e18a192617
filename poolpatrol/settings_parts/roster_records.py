"""Who sees which vanpools' records (vanpools.scope), and their history (vanpools.history)."""

from poolpatrol.env import env_choice

# "sites": a coordinator sees only the vanpools they coordinate (vanpools/scope.py) on
# every page, in the admin, in the API and in their digest; "all": every coordinator sees
# the whole program. Anything else stops the process at start-up.
COORDINATOR_SCOPE = env_choice("COORDINATOR_SCOPE", "all", ("all", "sites"))

# --- History of roster records (django-simple-history; vanpools/history.py).
# Read-only: a past version is evidence, never a button that writes it back (a seat's
# cancellation has its own workflow).
SIMPLE_HISTORY_REVERT_DISABLED = True
# The history pages need the historical model's own view permission (both staff groups
# have it); the home fields in it follow view_home_address (poolpatrol/privacy.py).
SIMPLE_HISTORY_ENFORCE_HISTORY_MODEL_PERMISSIONS = True
