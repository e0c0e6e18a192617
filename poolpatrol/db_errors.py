"""Which database errors mean "not now" rather than "not this".

A caller that turns every exception into "handled" (a webhook's quarantine,
a task's failure row) must let these through: the database was locked past
its busy timeout, refused the connection, dropped it, or aborted the
transaction (deadlock, serialisation failure). The same request succeeds
once the database is back, so the caller answers an error its client retries
(503 to an email provider) instead of keeping a copy it cannot write anyway.

DataError and IntegrityError are about the content (a NUL byte, a duplicate):
retrying the same content fails the same way, so they are not in this list.
"""

from django.db import InterfaceError, InternalError, OperationalError

# OperationalError: locked past the timeout, connection refused or lost, deadlock,
# lock_timeout; InterfaceError: a closed connection; InternalError: an aborted transaction.
UNAVAILABLE: tuple[type[Exception], ...] = (OperationalError, InterfaceError, InternalError)


def database_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot answer right now (retry the same request)."""
    return isinstance(exc, UNAVAILABLE)
