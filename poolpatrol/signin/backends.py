"""Passwords checked against the local database, unless LOCAL_LOGIN=false.

The sign-in pages refuse a password when local login is off; this backend is
the rule underneath them, so no other path (allauth's re-authentication, a
form added later) can sign anyone in with a password. It still loads the
signed-in user and answers permission checks, as ModelBackend does.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.http import HttpRequest


class LocalPasswordBackend(ModelBackend):
    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if not settings.LOCAL_LOGIN:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
