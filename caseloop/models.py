"""A full audit fanned out over the workers: the run, and the chunks it is split into."""

from django.conf import settings
from django.db import models
from django.db.models import Count, Q


class AuditRun(models.Model):
    """One audit of many vanpools, split into chunks that any worker may take."""

    audit_date = models.DateField()
    requested_by = models.CharField(max_length=80, help_text="schedule, command, or a user")
    vanpools = models.PositiveIntegerField()
    chunk_size = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"audit run {self.pk} ({self.audit_date})"


class AuditChunk(models.Model):
    class Status(models.TextChoices):
        WAITING = "waiting"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    run = models.ForeignKey(AuditRun, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField()
    vanpool_ids = models.JSONField(default=list)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.WAITING)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Outcome counts once done: {"passed": 180, "failed": 12, …}.
    outcomes = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="audit_chunk_unique_number")
        ]
        indexes = [models.Index(fields=["run", "status"])]

    def __str__(self) -> str:
        return f"chunk {self.number} of run {self.run_id}"


def progress(run: AuditRun) -> dict[str, int]:
    """How many of the run's chunks are waiting, running, done and failed (one query)."""
    status = AuditChunk.Status
    counts = AuditChunk.objects.filter(run=run).aggregate(
        total=Count("pk"),
        **{value: Count("pk", filter=Q(status=value)) for value in status.values},
    )
    return {key: int(value or 0) for key, value in counts.items()}


class DigestSent(models.Model):
    """One coordinator's daily digest, sent: the row makes a second run that day send nothing."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_digests"
    )
    day = models.DateField()
    waiting = models.PositiveIntegerField()
    overdue = models.PositiveIntegerField()
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-day", "user"]
        constraints = [
            models.UniqueConstraint(fields=["user", "day"], name="one_review_digest_a_day")
        ]

    def __str__(self) -> str:
        return f"review digest for {self.user_id} on {self.day}"
