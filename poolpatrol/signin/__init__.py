"""Staff sign-in: local passwords, single sign-on with OpenID Connect, a second factor.

Built on django-allauth (docs/operating.md#sign-in says why it, and every setting).
"""
