"""A signed-in user's roles, from the provider's groups claim, at every sign-in.

The provider is the source of truth for the roles it maps: a user's role groups
are set to exactly what the claim grants, so someone removed from the provider's
group loses the role at their next sign-in. Groups that are not roles (made by
hand in the admin) are left alone, and superuser status is never set or cleared.
"""

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import AbstractUser, Group
from django.db import transaction

from poolpatrol.signin.config import ROLES

logger = logging.getLogger(__name__)


def claimed_groups(claims: Mapping[str, Any], claim: str) -> list[str]:
    """The provider's group names in ``claims[claim]``: a list, or one name as a string."""
    value = claims.get(claim)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    logger.warning("The %r claim is neither a name nor a list of names; no roles granted", claim)
    return []


def roles_for(groups: Iterable[str], role_map: Mapping[str, Iterable[str]]) -> set[str]:
    return {role for group in groups for role in role_map.get(group, ())}


@transaction.atomic
def apply_roles(user: AbstractUser, roles: set[str]) -> None:
    """Give ``user`` exactly ``roles`` among the role groups; staff only with a role."""
    role_groups = Group.objects.filter(name__in=ROLES)
    user.groups.remove(*[group for group in role_groups if group.name not in roles])
    user.groups.add(*[group for group in role_groups if group.name in roles])
    staff = bool(roles) or user.is_superuser
    if user.is_staff != staff:
        user.is_staff = staff
        user.save(update_fields=["is_staff"])
