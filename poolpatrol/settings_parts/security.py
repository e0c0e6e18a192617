"""The browser's Content Security Policy and the HTTPS settings production needs."""

from poolpatrol.env import env_bool, env_int, env_list
from poolpatrol.settings_parts.base import PRODUCTION
from poolpatrol.settings_parts.signin import OIDC

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
