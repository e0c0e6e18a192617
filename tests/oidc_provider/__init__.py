"""A real OpenID Connect provider for the sign-in tests: django-oauth-toolkit in its own process.

Not a mock: the Django project here is django-oauth-toolkit's OIDC provider
(discovery, authorization code with PKCE, signed RS256 ID tokens, userinfo,
JWKS) with its own settings, SQLite database and login page, started on
loopback by tests/oidc_support.py. Its users and groups stand for a company's
directory; the `oidc_user` and `oidc_client` commands manage them as the
provider's administrator would.
"""
