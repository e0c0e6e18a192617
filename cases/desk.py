"""The review desk's clock and owners: when a card is due, and who holds it.

- **Due**: a card is due its kind's SLA after it was asked for
  (``ReviewPayload.sla_hours``, overridden per kind by REVIEW_SLA_HOURS);
  past that it is overdue. ``overdue`` is one condition the database
  evaluates, so counting overdue cards is one query however many wait.
- **Claims**: a reviewer says "I'm on it" (``claim``); the claim holds for
  REVIEW_CLAIM_MINUTES, then lapses. A claim is one conditional UPDATE (the
  row is free, lapsed, or already this reviewer's): of two reviewers
  claiming at once, the database lets exactly one write, and the other is
  told who holds it. Deciding a card another person holds is refused unless
  the decider says they mean it (``caseloop.decisions``, after the case lock).
  Under COORDINATOR_SCOPE=sites a card about a vanpool the reviewer does not
  coordinate is not theirs to claim (``vanpools.scope``).
"""

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Q
from django.utils import timezone

from cases.kinds import PAYLOADS, payload_class
from cases.models import PendingAction
from vanpools.scope import refuse_outside_scope


class HeldByAnother(Exception):
    """Another reviewer holds the card; nothing changed."""

    def __init__(self, holder: str, until: dt.datetime) -> None:
        lapses = timezone.localtime(until)
        super().__init__(f"{holder} is on this card (their claim lapses at {lapses:%H:%M})")
        self.holder = holder
        self.until = until


class NotPending(Exception):
    """The card was decided (or superseded, or expired): there is nothing to claim."""


def check_sla_settings() -> None:
    """REVIEW_SLA_HOURS may only name kinds that exist (checked at start-up)."""
    known = {payload.kind for payload in PAYLOADS}
    unknown = sorted(set(settings.REVIEW_SLA_HOURS) - known)
    if unknown:
        raise ImproperlyConfigured(
            f"REVIEW_SLA_HOURS names no review kind: {', '.join(unknown)} "
            f"(known: {', '.join(sorted(known))})"
        )


def sla(kind: str) -> dt.timedelta:
    """How long a person has to decide a card of ``kind``."""
    hours = settings.REVIEW_SLA_HOURS.get(kind, payload_class(kind).sla_hours)
    return dt.timedelta(hours=hours)


def due_at(action: PendingAction) -> dt.datetime:
    return action.created_at + sla(action.kind)


def overdue(now: dt.datetime) -> Q:
    """Pending cards past their kind's SLA at ``now``: one condition per kind, ORed."""
    condition = Q(pk__in=[])
    for payload in PAYLOADS:
        condition |= Q(kind=payload.kind, created_at__lte=now - sla(payload.kind))
    return Q(status=PendingAction.Status.PENDING) & condition


def claim_lapse() -> dt.timedelta:
    return dt.timedelta(minutes=settings.REVIEW_CLAIM_MINUTES)


@dataclass(frozen=True)
class Holder:
    """Who holds a card now, and until when."""

    user_id: int
    name: str
    until: dt.datetime


def holder(action: PendingAction, now: dt.datetime | None = None) -> Holder | None:
    """Who holds ``action`` at ``now``; None when nobody does or the claim lapsed.

    Reads ``claimed_by`` as loaded: join it (``select_related``) to read a page's holders at once.
    """
    if action.claimed_by_id is None or action.claimed_at is None:
        return None
    until = action.claimed_at + claim_lapse()
    if until <= (now or timezone.now()):
        return None
    assert action.claimed_by is not None
    return Holder(action.claimed_by_id, action.claimed_by.get_username(), until)


def claim(action_pk: int, by: User, now: dt.datetime | None = None) -> dt.datetime:
    """Hold a pending card for ``by``; returns when the claim lapses.

    Free, lapsed, or already theirs (a renewal): one UPDATE takes it. Otherwise
    HeldByAnother names who holds it; NotPending when it was decided;
    PermissionDenied when it is outside ``by``'s scope (nothing changes).
    """
    refuse_outside_scope(
        PendingAction.objects.filter(pk=action_pk),
        by,
        "this card is not about a vanpool you coordinate",
    )
    now = now or timezone.now()
    free = (
        Q(claimed_by__isnull=True)
        | Q(claimed_at__isnull=True)
        | Q(claimed_at__lte=now - claim_lapse())
        | Q(claimed_by=by)
    )
    taken = PendingAction.objects.filter(
        free, pk=action_pk, status=PendingAction.Status.PENDING
    ).update(claimed_by=by, claimed_at=now)
    if taken == 1:
        return now + claim_lapse()
    current = PendingAction.objects.select_related("claimed_by").filter(pk=action_pk).first()
    if current is None or current.status != PendingAction.Status.PENDING:
        raise NotPending(f"this card is {current.status if current else 'gone'}")
    held = holder(current, now)
    if held is None:  # released between the update and the read: try once more
        return claim(action_pk, by, now)
    raise HeldByAnother(held.name, held.until)


def release(action_pk: int, by: User) -> bool:
    """Let go of a card ``by`` holds; False when they did not hold it."""
    return bool(
        PendingAction.objects.filter(pk=action_pk, claimed_by=by).update(
            claimed_by=None, claimed_at=None
        )
    )


def refuse_if_held_by_another(action_pk: int, by: User, *, over_claim: bool) -> None:
    """The guard a decision runs after the case lock: another's live claim asks first."""
    if over_claim:
        return
    current = PendingAction.objects.select_related("claimed_by").get(pk=action_pk)
    held = holder(current)
    if held is not None and held.user_id != by.pk:
        raise HeldByAnother(held.name, held.until)
