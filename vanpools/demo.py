"""The demo program: Northwind Logistics' vanpools plus two staff logins to explore them.

fixtures/demo/program.json goes through the real roster importer, so the demo
exercises the same code HR's files do. Loading is idempotent: a second run
imports nothing new, creates no users and keeps their passwords unless asked
to reset them.
"""

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.db import transaction
from django.utils import timezone

from vanpools.importing import ImportResult, import_data
from vanpools.models import Vanpool

DEMO_PROGRAM = Path(settings.BASE_DIR) / "fixtures" / "demo" / "program.json"


class DemoRefused(Exception):
    """The demo must not be loaded here (production, or the database is not migrated)."""


@dataclass(frozen=True)
class DemoUser:
    username: str
    group: str
    email: str
    first_name: str
    last_name: str


DEMO_USERS: tuple[DemoUser, ...] = (
    DemoUser("auditor", "Auditors", "auditor@northwind-logistics.example", "Dana", "Whitfield"),
    DemoUser(
        "coordinator", "Coordinators", "coordinator@northwind-logistics.example", "Luis", "Ortega"
    ),
)


@dataclass(frozen=True)
class DemoLogin:
    username: str
    group: str
    created: bool
    password: str | None  # only when it was just set: passwords are not stored readable


@dataclass(frozen=True)
class DemoResult:
    imported: ImportResult
    logins: list[DemoLogin]
    vanpools_given_coordinator: int

    @property
    def changed_nothing(self) -> bool:
        counts = self.imported.counts.values()
        return (
            not any(count["created"] or count["updated"] for count in counts)
            and not any(login.created or login.password for login in self.logins)
            and not self.vanpools_given_coordinator
        )


def load_demo_program(
    *,
    password: str | None = None,
    reset_passwords: bool = False,
    allow_production: bool = False,
    path: Path = DEMO_PROGRAM,
) -> DemoResult:
    """Import the demo program and make the demo staff users.

    `password` is used for users created now (or reset); without it each gets
    a random one, returned once in the result.
    """
    if settings.PRODUCTION and not allow_production:
        raise DemoRefused("PRODUCTION is on: the demo would add fake riders and staff logins")
    data = json.loads(path.read_text(encoding="utf-8"))
    with transaction.atomic():
        imported = import_data(data, source=_shown_path(path))
        logins = [_ensure_user(spec, password, reset_passwords) for spec in DEMO_USERS]
        coordinator = get_user_model().objects.get(username="coordinator")
        vanpool_ids = [row["vanpool_id"] for row in data.get("vanpools", [])]
        assigned = _assign_coordinator(coordinator, vanpool_ids)
    return DemoResult(imported, logins, assigned)


def _shown_path(path: Path) -> str:
    return (
        str(path.relative_to(settings.BASE_DIR))
        if path.is_relative_to(settings.BASE_DIR)
        else str(path)
    )


def _ensure_user(spec: DemoUser, password: str | None, reset: bool) -> DemoLogin:
    try:
        group = Group.objects.get(name=spec.group)
    except Group.DoesNotExist:
        # Made by a migration with its permissions; an empty stand-in would hide that.
        raise DemoRefused(f"no {spec.group} group: run manage.py migrate first") from None
    user, created = get_user_model().objects.get_or_create(
        username=spec.username,
        defaults={
            "email": spec.email,
            "first_name": spec.first_name,
            "last_name": spec.last_name,
            "is_staff": True,
        },
    )
    new_password = _set_password(user, password) if created or reset else None
    if not (user.is_staff and user.is_active):
        user.is_staff = user.is_active = True
        user.save(update_fields=["is_staff", "is_active"])
    user.groups.add(group)
    return DemoLogin(spec.username, spec.group, created, new_password)


def _set_password(user: AbstractUser, password: str | None) -> str:
    chosen = password or secrets.token_urlsafe(12)
    user.set_password(chosen)
    user.save(update_fields=["password"])
    return chosen


def _assign_coordinator(coordinator: AbstractUser, vanpool_ids: list[str]) -> int:
    # Only vans without one: an auditor's own assignment must survive a reload.
    return Vanpool.objects.filter(vanpool_id__in=vanpool_ids, coordinator__isnull=True).update(
        coordinator=coordinator, updated_at=timezone.now()
    )
