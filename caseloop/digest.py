"""The review desk's mail: a daily digest to each coordinator, and escalations to auditors.

**Digest** (``send_daily_digests``, a django-q2 schedule every morning): each
active coordinator with an email address gets one email a day listing the
cards that wait on their sites, oldest first, with what is overdue counted
and marked. Which vanpools a coordinator coordinates, and which vanpool a
card is about, are ``vanpools.scope``'s rule. Under COORDINATOR_SCOPE=sites
a scoped coordinator's digest lists exactly the cards their queue shows (the
vanpools they coordinate; none: nothing). Otherwise it lists the cards at
the work sites of those vanpools, and a coordinator who coordinates none
gets the whole queue. A ``DigestSent`` row per
coordinator and day, written in the transaction that sends, makes a second
run the same day (django-q2 delivers at least once) send nothing; a send that
fails rolls its row back, so the next run tries again.

**Escalation** (``escalate_expiring_cancellations``, hourly): a cancellation
nobody decided expires after PENDING_ACTION_EXPIRE_DAYS
(``cases.lifecycle.expire_cancellation_proposals``). ESCALATE_HOURS_BEFORE_EXPIRY
before that, the auditors get one email naming it; ``escalated_at``, claimed
in the transaction that sends, makes it once.

Building the digests reads the queue once and the coordinators once, so 500
coordinators over 10,000 cards cost a handful of queries (``bench_digest``).
"""

import datetime as dt
import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import EmailMessage, get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from caseloop.models import DigestSent
from cases.desk import due_at
from cases.kinds import CancelMembership, payload_class
from cases.models import PendingAction
from vanpools.scope import Coordinated, coordinated_vanpools, is_scoped, vanpool_of

logger = logging.getLogger(__name__)

COORDINATORS = "Coordinators"
AUDITORS = "Auditors"
# A digest lists this many cards by name; the rest are counted.
LISTED_AT_MOST = 50
NO_SITE = ""


@dataclass(frozen=True)
class WaitingCard:
    pk: int
    kind: str
    created_at: dt.datetime
    due: dt.datetime
    case_id: str
    vanpool_pk: int | None
    vanpool_id: str
    site: str

    def overdue(self, now: dt.datetime) -> bool:
        return self.due <= now

    def line(self, now: dt.datetime) -> str:
        where = " · ".join(part for part in (self.case_id, self.vanpool_id) if part) or "no case"
        waited = _hours(now - self.created_at)
        clock = (
            f"OVERDUE by {_hours(now - self.due)}"
            if self.overdue(now)
            else f"due in {_hours(self.due - now)}"
        )
        return f"- {payload_class(self.kind).label} — {where} — waiting {waited}, {clock}"


@dataclass
class Digest:
    user: User
    cards: list[WaitingCard] = field(default_factory=list)

    def overdue(self, now: dt.datetime) -> list[WaitingCard]:
        return [card for card in self.cards if card.overdue(now)]


def _hours(delta: dt.timedelta) -> str:
    hours = max(0, int(delta.total_seconds() // 3600))
    return f"{hours // 24} d {hours % 24} h" if hours >= 24 else f"{hours} h"


def waiting_cards(now: dt.datetime) -> list[WaitingCard]:
    """Every pending card, oldest first, with its vanpool, site and due time: one query."""
    rows = (
        PendingAction.objects.pending()
        .order_by("created_at", "id")
        .annotate(
            van=vanpool_of(PendingAction),
            van_id=vanpool_of(PendingAction, "vanpool_id"),
            site=vanpool_of(PendingAction, "work_site"),
        )
        .values_list("pk", "kind", "created_at", "case__case_id", "van", "van_id", "site")
    )
    cards = []
    for pk, kind, created_at, case_id, van, van_id, site in rows.iterator(chunk_size=2000):
        action = PendingAction(kind=kind, created_at=created_at)
        cards.append(
            WaitingCard(
                pk,
                kind,
                created_at,
                due_at(action),
                case_id or "",
                van,
                van_id or "",
                site or NO_SITE,
            )
        )
    return cards


def staff_in(group: str) -> list[User]:
    return list(
        User.objects.filter(groups__name=group, is_active=True)
        .exclude(email="")
        .order_by("pk")
        .distinct()
    )


class Queue:
    """The waiting cards, read once, and found by vanpool and by site."""

    def __init__(self, cards: list[WaitingCard]) -> None:
        self.cards = cards
        self.by_vanpool: dict[int | None, list[WaitingCard]] = defaultdict(list)
        self.by_site: dict[str, list[WaitingCard]] = defaultdict(list)
        for card in cards:
            self.by_vanpool[card.vanpool_pk].append(card)
            self.by_site[card.site].append(card)

    def for_coordinator(self, user: User, vanpools: set[Coordinated]) -> list[WaitingCard]:
        """What ``user``'s digest lists, oldest first (the rule in the module's docstring)."""
        if is_scoped(user):
            mine = [card for van in vanpools for card in self.by_vanpool.get(van.pk, [])]
        elif vanpools:
            sites = {van.work_site for van in vanpools}
            mine = [card for site in sites for card in self.by_site.get(site, [])]
        else:
            return self.cards
        return sorted(mine, key=lambda card: (card.created_at, card.pk))


def build_digests(now: dt.datetime) -> list[Digest]:
    """One digest per coordinator with an address: the queue and the vanpools read once each."""
    coordinators = staff_in(COORDINATORS)
    coordinated = coordinated_vanpools(user.pk for user in coordinators)
    queue = Queue(waiting_cards(now))
    return [
        Digest(user, queue.for_coordinator(user, coordinated.get(user.pk, set())))
        for user in coordinators
    ]


def digest_email(digest: Digest, now: dt.datetime) -> EmailMessage:
    overdue = digest.overdue(now)
    day = timezone.localdate(now)
    subject = f"Review queue {day:%d %b}: {len(digest.cards)} waiting, {len(overdue)} overdue"
    queue_url = settings.DASHBOARD_URL.rstrip("/") + reverse("review-queue")
    lines = [f"Hello {digest.user.get_full_name() or digest.user.get_username()},", ""]
    if not digest.cards:
        lines.append("Nothing waits for a decision on your sites today.")
    else:
        lines.append(
            f"{len(digest.cards)} card(s) wait for a decision on your sites, "
            f"{len(overdue)} of them overdue. Oldest first:"
        )
        lines.append("")
        lines += [card.line(now) for card in digest.cards[:LISTED_AT_MOST]]
        if len(digest.cards) > LISTED_AT_MOST:
            lines.append(f"… and {len(digest.cards) - LISTED_AT_MOST} more.")
        if overdue:
            lines += ["", "Overdue:"]
            lines += [card.line(now) for card in overdue[:LISTED_AT_MOST]]
            if len(overdue) > LISTED_AT_MOST:
                lines.append(f"… and {len(overdue) - LISTED_AT_MOST} more overdue.")
    lines += ["", f"The review queue: {queue_url}"]
    return EmailMessage(subject, "\n".join(lines), to=[digest.user.email])


def send_daily_digests(now: dt.datetime | None = None) -> dict[str, int]:
    """Today's digest to every coordinator who has not had it: at most one each a day."""
    now = now or timezone.now()
    day = timezone.localdate(now)
    sent = skipped = 0
    already = set(DigestSent.objects.filter(day=day).values_list("user_id", flat=True))
    connection = get_connection()
    for digest in build_digests(now):
        if digest.user.pk in already:
            skipped += 1
            continue
        if _send_once(digest, day, now, connection):
            sent += 1
        else:
            skipped += 1
    logger.info("review digests for %s: %s sent, %s already sent", day, sent, skipped)
    return {"sent": sent, "already_sent": skipped}


def _send_once(
    digest: Digest, day: dt.date, now: dt.datetime, connection: BaseEmailBackend
) -> bool:
    """Record and send in one transaction: a failed send leaves no row; a second run finds it."""
    try:
        with transaction.atomic():
            DigestSent.objects.create(
                user=digest.user,
                day=day,
                waiting=len(digest.cards),
                overdue=len(digest.overdue(now)),
            )
            message = digest_email(digest, now)
            message.connection = connection
            message.send()
    except IntegrityError:
        return False  # another run sent it first
    return True


# --- Escalation --------------------------------------------------------------------------


def escalation_cutoff(now: dt.datetime) -> dt.datetime | None:
    """Cancellations created before this are within the escalation window; None: off."""
    days = settings.PENDING_ACTION_EXPIRE_DAYS
    hours = settings.ESCALATE_HOURS_BEFORE_EXPIRY
    if not days or not hours:
        return None
    return now - (dt.timedelta(days=days) - dt.timedelta(hours=hours))


def escalate_expiring_cancellations(now: dt.datetime | None = None) -> dict[str, int]:
    """Tell the auditors, once per card, about cancellations close to expiring undecided."""
    now = now or timezone.now()
    cutoff = escalation_cutoff(now)
    auditors = staff_in(AUDITORS)
    if cutoff is None or not auditors:
        if cutoff is not None:
            logger.warning("cancellations near expiry, but no active auditor has an email address")
        return {"escalated": 0}
    with transaction.atomic():
        cards = list(
            PendingAction.objects.of(CancelMembership)
            .pending()
            .filter(created_at__lte=cutoff, escalated_at__isnull=True)
            # Lock the cards only: PostgreSQL refuses FOR UPDATE on the nullable side of the
            # outer join to a case's vanpool.
            .select_for_update(of=("self",))
            .select_related("case__vanpool")
            .order_by("created_at", "id")
        )
        if not cards:
            return {"escalated": 0}
        PendingAction.objects.filter(pk__in=[card.pk for card in cards]).update(escalated_at=now)
        escalation_email(cards, auditors, now).send()
    logger.info(
        "escalated %s cancellation(s) near expiry to %s auditor(s)", len(cards), len(auditors)
    )
    return {"escalated": len(cards)}


def escalation_email(
    cards: Iterable[PendingAction], auditors: list[User], now: dt.datetime
) -> EmailMessage:
    cards = list(cards)
    expiry = dt.timedelta(days=settings.PENDING_ACTION_EXPIRE_DAYS)
    lines = [
        f"{len(cards)} cancellation(s) will expire undecided soon. An expired cancellation "
        "sends the case back for a fresh audit; decide it first if the evidence stands.",
        "",
    ]
    for card in cards:
        case = card.case
        where = f"{case.case_id} · {case.vanpool.vanpool_id}" if case is not None else "no case"
        left = card.created_at + expiry - now
        lines.append(
            f"- {where} — {card.ask.about() or 'rider'} — expires in {_hours(left)}: "
            + settings.DASHBOARD_URL.rstrip("/")
            + reverse("action-card", args=[card.pk])
        )
    subject = f"{len(cards)} cancellation(s) about to expire undecided"
    return EmailMessage(subject, "\n".join(lines), to=[user.email for user in auditors])
