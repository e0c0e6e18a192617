"""Cases: what the audit found about one vanpool, and everything done about it.

A Case's status only ever changes through ``cases.lifecycle.transition``; the
trail of those changes is CaseEvent, which is append-only. Verifications are
the specialists' stored results, kept as evidence and never recomputed.
PendingAction is the review queue: every step a human must approve. CaseReview
is the supervisor's check of a case before a cancellation; CaseLesson what a
closed case taught.
"""

from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from cases.kinds import PAYLOADS, ReviewPayload, kind_choices, payload_class
from poolpatrol.ids import PublicIdModel
from vanpools.models import Rider, Vanpool


class Case(PublicIdModel):
    public_id_prefix = "CASE"
    public_id_field = "case_id"

    class Status(models.TextChoices):
        OPEN = "open"
        PENDING_REPLY = "pending_reply", "pending reply"
        HITL_REVIEW = "hitl_review", "human review"
        PRE_CANCEL = "pre_cancel", "pre-cancel"
        CLOSED = "closed"

    class Outcome(models.TextChoices):
        NONE = "", "—"
        RESOLVED = "resolved"
        CANCELLED = "cancelled"
        DISMISSED = "dismissed"

    class Reason(models.TextChoices):
        SHIFT = "shift_mismatch", "shift mismatch"
        LOCATION = "location_mismatch", "location mismatch"
        BOTH = "both", "shift and location"
        UNKNOWN = "unknown"

    case_id = models.CharField("case ID", max_length=13, unique=True, editable=False)
    vanpool = models.ForeignKey(Vanpool, on_delete=models.PROTECT, related_name="cases")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    outcome = models.CharField(max_length=12, choices=Outcome.choices, blank=True, default="")
    meta = models.JSONField(
        default=dict,
        blank=True,
        help_text="reason, details, failed_checks, opened_by, updated_by, and rider_flags: "
        "{employee_id: {check: verdict}} for the riders the audit flagged.",
    )
    reaudit_count = models.PositiveSmallIntegerField(default=0)
    reply_deadline = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["vanpool"],
                condition=~Q(status="closed"),
                name="case_one_open_per_vanpool",
                violation_error_message="This vanpool already has an open case.",
            ),
            models.CheckConstraint(
                condition=(Q(status="closed") & ~Q(outcome="") & Q(closed_at__isnull=False))
                | (~Q(status="closed") & Q(outcome="") & Q(closed_at__isnull=True)),
                name="case_outcome_only_when_closed",
            ),
        ]
        indexes = [models.Index(fields=["status", "reply_deadline"])]

    def __str__(self) -> str:
        return self.case_id or "new case"

    @property
    def reason(self) -> str:
        return self.meta.get("reason", "")

    @property
    def failed_checks(self) -> list[str]:
        return list(self.meta.get("failed_checks", []))

    @property
    def is_open(self) -> bool:
        return self.status != self.Status.CLOSED


class Verification(models.Model):
    """One specialist's verdict on one vanpool, with the evidence it cites."""

    class CheckType(models.TextChoices):
        LOCATION = "location"
        SHIFT = "shift"

    class Verdict(models.TextChoices):
        PASS = "pass"
        FAIL = "fail"
        UNKNOWN = "unknown"

    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.CASCADE, related_name="verifications"
    )
    vanpool = models.ForeignKey(Vanpool, on_delete=models.CASCADE, related_name="verifications")
    check_type = models.CharField(max_length=20, choices=CheckType.choices)
    verdict = models.CharField(max_length=8, choices=Verdict.choices)
    confidence = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(5)]
    )
    reasoning = models.TextField()
    evidence = models.JSONField(default=list, blank=True)
    rider_flags = models.JSONField(
        default=dict, blank=True, help_text="employee_id → verdict for each rider checked."
    )
    backend = models.CharField(max_length=20, default="rules")
    model = models.CharField(max_length=80, blank=True)
    audit_date = models.DateField(null=True, blank=True)
    # Hash of the facts the check judged: an identical re-run is recognised and
    # changes nothing (django-q2 may deliver an audit twice).
    input_hash = models.CharField(max_length=64, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["vanpool", "check_type", "-created_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(confidence__gte=1, confidence__lte=5),
                name="verification_confidence_1_to_5",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.check_type} {self.verdict} ({self.confidence}/5)"


class AppendOnlyQuerySet(models.QuerySet):
    """Bulk update/delete would bypass the model's save()/delete() guards."""

    def update(self, **kwargs: object) -> int:
        raise ValidationError(f"{self.model.__name__} rows are append-only.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ValidationError(f"{self.model.__name__} rows are append-only.")


class AppendOnlyModel(models.Model):
    """Rows written once: the audit trail must not be edited or removed."""

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ValidationError(f"{type(self).__name__} rows are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise ValidationError(f"{type(self).__name__} rows are append-only.")


class CaseEvent(AppendOnlyModel):
    """One line of a case's audit trail: who moved it, from where, to where, why."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="events")
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    actor_agent = models.CharField(max_length=60, blank=True)
    from_status = models.CharField(max_length=16, blank=True)
    to_status = models.CharField(max_length=16)
    note = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(actor_user__isnull=False) | ~Q(actor_agent=""),
                name="case_event_has_actor",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.from_status or '∅'} → {self.to_status} by {self.actor}"

    @property
    def actor(self) -> str:
        if self.actor_user is not None:
            return self.actor_user.get_username()
        return f"agent:{self.actor_agent}"


_P = TypeVar("_P", bound=ReviewPayload)


class WrongKind(TypeError):
    """An action read as a kind it is not."""


class PendingActionQuerySet(models.QuerySet["PendingAction"]):
    def of(self, *kinds: type[ReviewPayload]) -> "PendingActionQuerySet":
        """Actions of these kinds (their payload classes)."""
        return self.filter(kind__in=[payload.kind for payload in kinds])

    def not_of(self, *kinds: type[ReviewPayload]) -> "PendingActionQuerySet":
        return self.exclude(kind__in=[payload.kind for payload in kinds])

    def pending(self) -> "PendingActionQuerySet":
        return self.filter(status=PendingAction.Status.PENDING)


class PendingAction(models.Model):
    """A step that waits for a staff member's decision (the review queue).

    ``kind`` names one of the review kinds (``cases.kinds``); ``payload`` is
    what the person is asked, stored as JSON and read back typed by that
    kind's class (``ask``). An action is created by ``lifecycle.request_review``.
    """

    # The kinds, from the registry (cases.kinds.PAYLOADS): Kind.CANCEL_MEMBERSHIP…
    Kind = models.TextChoices(  # type: ignore[call-overload]
        "Kind", [(payload.kind.upper(), (payload.kind, payload.label)) for payload in PAYLOADS]
    )

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"
        EXPIRED = "expired"
        SUPERSEDED = "superseded"

    # A callable: a new kind in the registry needs no migration.
    kind = models.CharField(max_length=24, choices=kind_choices)
    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.PROTECT, related_name="pending_actions"
    )
    rider = models.ForeignKey(
        Rider, null=True, blank=True, on_delete=models.PROTECT, related_name="pending_actions"
    )
    # The email the action is about (label_reply, match_inbound, review_email).
    message = models.ForeignKey(
        "outreach.Message",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="pending_actions",
    )
    payload = models.JSONField(default=dict, blank=True)
    # What makes two asks the same (one sender on one case): a later ask with
    # the same key is counted on the waiting card (lifecycle.request_review).
    collapse_key = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    requested_by = models.CharField(
        max_length=80, help_text="The agent (agent:case_manager) or user that asked."
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)
    executed_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = PendingActionQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["status", "kind"]),
            models.Index(fields=["kind", "collapse_key", "status"], name="action_collapse_idx"),
        ]
        permissions = [("decide_pendingaction", "Can approve or reject pending actions")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status="pending", decided_at__isnull=True)
                | (~Q(status="pending") & Q(decided_at__isnull=False)),
                name="pending_action_decided_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.status})"

    @property
    def ask(self) -> ReviewPayload:
        """The payload read by its kind's class; UnknownKind for a kind no class has.

        Read once per payload: a template reads it many times, and a new
        payload (saved, or reloaded by ``refresh_from_db``) is read again.
        """
        read = self.__dict__.get("_ask")
        if read is None or read[0] is not self.payload or read[1] != self.kind:
            read = (self.payload, self.kind, payload_class(self.kind).read(self.payload))
            self.__dict__["_ask"] = read
        ask: ReviewPayload = read[2]
        return ask

    def ask_as(self, kind: type[_P]) -> _P:
        """The payload as ``kind``; WrongKind when the action is of another kind."""
        ask = self.ask
        if not isinstance(ask, kind):
            raise WrongKind(f"action {self.pk} is a {self.kind}, not a {kind.kind}")
        return ask

    def is_a(self, *kinds: type[ReviewPayload]) -> bool:
        return self.kind in {payload.kind for payload in kinds}

    def clean(self) -> None:
        """A payload added by hand (the admin) must fit its kind, as an ask would."""
        super().clean()
        if not self._state.adding or not self.kind:
            return  # asked already; or the field's own check says the kind is missing
        try:
            kind = payload_class(self.kind)
            kind.checked_for_asking(kind.read(self.payload))
            kind.model_validate(self.payload or {})  # keys its kind does not know
        except (LookupError, ValueError) as exc:
            raise ValidationError({"payload": str(exc)}) from None


class CaseReview(AppendOnlyModel):
    """One supervisor validation of a case's evidence package; every run is kept.

    The supervisor only reads the case. ``issues`` lists what it found
    ({type, severity, description}); ``feedback`` holds the per-check results,
    the reasoning assessment and the score arithmetic.
    """

    class Justification(models.TextChoices):
        WEAK = "weak"
        ADEQUATE = "adequate"
        STRONG = "strong"

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="reviews")
    # The pre_cancel entry this review was made for: one review per entry, so a
    # task delivered twice finds the first one. Null for a review asked for by hand.
    trigger_event = models.OneToOneField(
        CaseEvent, null=True, blank=True, on_delete=models.PROTECT, related_name="review"
    )
    score = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(0), MaxValueValidator(100)]
    )
    passed = models.BooleanField()
    issues = models.JSONField(default=list, blank=True)
    feedback = models.JSONField(default=dict, blank=True)
    justification = models.CharField(max_length=8, choices=Justification.choices)
    validated_at = models.DateTimeField(default=timezone.now)
    backend = models.CharField(max_length=20)
    model = models.CharField(max_length=80, blank=True)
    deterministic_only = models.BooleanField(
        default=False,
        help_text="No model's assessment went into this review (rules backend, or the "
        "model was unavailable): the deterministic checks and rules decided.",
    )

    class Meta:
        ordering = ["-validated_at", "-id"]
        indexes = [models.Index(fields=["case", "-validated_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(score__gte=0, score__lte=100), name="case_review_score_0_to_100"
            ),
        ]

    def __str__(self) -> str:
        return f"{'passed' if self.passed else 'failed'} {self.score}/100"

    @property
    def high_issues(self) -> list[dict]:
        return [issue for issue in self.issues if issue.get("severity") == "high"]


class CaseLesson(AppendOnlyModel):
    """What a closed case taught: written once when it closes (knowledge capture)."""

    case = models.OneToOneField(Case, on_delete=models.PROTECT, related_name="lesson")
    reason = models.CharField(max_length=20, choices=Case.Reason.choices)
    site = models.CharField(max_length=100, help_text="The vanpool's work site.")
    outcome = models.CharField(max_length=12, choices=Case.Outcome.choices)
    pattern = models.CharField(
        max_length=80, help_text="reason:behaviour, e.g. location_mismatch:no_reply."
    )
    key_signals = models.JSONField(default=dict, blank=True)
    sentence = models.TextField()
    backend = models.CharField(max_length=20, default="rules")
    model = models.CharField(max_length=80, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["reason", "site", "-created_at"]),
            models.Index(fields=["pattern"]),
        ]

    def __str__(self) -> str:
        return f"{self.pattern} → {self.outcome}"
