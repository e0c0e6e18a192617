"""Signing in: failed logins, the client's address behind proxies, single sign-on, MFA."""

import datetime as dt
import os
import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from poolpatrol.env import env_bool, env_int, env_networks
from poolpatrol.settings_parts.base import PRODUCTION
from poolpatrol.signin import config as signin

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
