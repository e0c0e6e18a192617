"""Refuse to serve with a configuration Django's system checks call an error.

``manage.py`` commands (the django-q2 workers too) run the system checks
before they start; gunicorn and ASGI servers import the application and run
none. Both entry points call this, so a server refuses to start on what
``manage.py check`` reports as an error (a configured email provider without
its key or its package, say) instead of answering every request for it 500.
"""

from django.core import checks
from django.core.management.base import SystemCheckError


def refuse_serious_check_messages() -> None:
    """Raise SystemCheckError listing every error-level system check message."""
    serious = [message for message in checks.run_checks() if message.is_serious()]
    if serious:
        listed = "\n".join(str(message) for message in serious)
        raise SystemCheckError(f"System check identified errors; not starting:\n{listed}")
