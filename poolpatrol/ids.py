"""Public identifiers: a prefix and 8 upper-case hex digits (CASE-1A2B3C4D).

32 random bits make a clash rare but not impossible at scale, so the row is
saved inside a savepoint and a clash on the identifier draws a new one. The
unique index, not a read-before-write, is what guarantees uniqueness.
"""

import re
import secrets
from typing import Any

from django.db import IntegrityError, models, transaction

MAX_ATTEMPTS = 8


def new_public_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4).upper()}"


def public_id_pattern(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(prefix)}-[0-9A-F]{{8}}$")


class PublicIdModel(models.Model):
    """Abstract base: assigns `public_id_field` on first save, retrying clashes."""

    public_id_prefix: str = ""
    public_id_field: str = ""

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if getattr(self, self.public_id_field):
            super().save(*args, **kwargs)
            return
        for attempt in range(MAX_ATTEMPTS):
            setattr(self, self.public_id_field, new_public_id(self.public_id_prefix))
            try:
                with transaction.atomic():
                    super().save(*args, **kwargs)
                return
            except IntegrityError:
                if attempt == MAX_ATTEMPTS - 1 or not self._public_id_taken():
                    setattr(self, self.public_id_field, "")
                    raise
                # Whatever the failed INSERT set must not leak into the retry.
                self.pk = None
                self._state.adding = True

    def _public_id_taken(self) -> bool:
        value = getattr(self, self.public_id_field)
        return type(self)._default_manager.filter(**{self.public_id_field: value}).exists()
