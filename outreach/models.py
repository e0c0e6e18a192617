"""Email threads with riders and every message in them, in and out."""

import secrets

from django.db import models
from django.db.models import Q

from cases.models import Case
from outreach.mail_bodies import html_to_text
from poolpatrol.ids import PublicIdModel
from vanpools.models import Employee


def new_reply_token() -> str:
    # 160 random bits, lower-case base32-ish hex: safe in an address local part.
    return secrets.token_hex(20)


class EmailThread(PublicIdModel):
    public_id_prefix = "THREAD"
    public_id_field = "thread_id"

    thread_id = models.CharField("thread ID", max_length=15, unique=True, editable=False)
    case = models.OneToOneField(Case, on_delete=models.PROTECT, related_name="thread")
    subject = models.CharField(max_length=255)
    reply_token = models.CharField(
        max_length=64, unique=True, default=new_reply_token, editable=False
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "email thread"

    def __str__(self) -> str:
        return self.thread_id or "new thread"


class RiderReplyToken(models.Model):
    """One rider's own reply address on one thread (``reply+<token>@``).

    Riders on a case used to share the thread's token, so anyone holding it (a
    co-rider, or whoever a rider forwarded the email to) could write as another
    rider by changing From. A token of their own names the rider it was given
    to; a reply to it from any other address goes to a person. The thread's
    token still matches mail sent before these existed.
    """

    thread = models.ForeignKey(EmailThread, on_delete=models.CASCADE, related_name="rider_tokens")
    employee = models.ForeignKey(Employee, on_delete=models.PROTECT, related_name="reply_tokens")
    token = models.CharField(max_length=64, unique=True, default=new_reply_token, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "rider reply token"
        constraints = [
            models.UniqueConstraint(
                fields=["thread", "employee"], name="rider_reply_token_one_per_rider"
            )
        ]

    def __str__(self) -> str:
        return f"{self.thread} / {self.employee_id}"


class Message(PublicIdModel):
    public_id_prefix = "MSG"
    public_id_field = "message_id"

    class Direction(models.TextChoices):
        INBOUND = "inbound"
        OUTBOUND = "outbound"

    class Status(models.TextChoices):
        # Outbound: queued → sending (claimed by one worker) → sent | failed.
        QUEUED = "queued"
        SENDING = "sending"
        SENT = "sent"
        FAILED = "failed"
        # Inbound: received → processed (classified and acted on), or set aside.
        # A reply the configured model could not read yet waits in model_wait.
        RECEIVED = "received"
        MODEL_WAIT = "model_wait", "waiting for the model"
        PROCESSED = "processed"
        SET_ASIDE = "set_aside", "set aside (auto-reply / bounce)"
        QUARANTINED = "quarantined"

    class Kind(models.TextChoices):
        NONE = "", "—"
        REPLY = "reply"
        AUTO_REPLY = "auto_reply", "auto-reply"
        BOUNCE = "bounce"

    class Bucket(models.TextChoices):
        NONE = "", "—"
        ACKNOWLEDGMENT = "acknowledgment"
        QUESTION = "question"
        UPDATE = "update"
        ESCALATION = "escalation"

    message_id = models.CharField("message ID", max_length=12, unique=True, editable=False)
    # Null for an inbound message no thread could be matched to (yet).
    thread = models.ForeignKey(
        EmailThread, null=True, blank=True, on_delete=models.PROTECT, related_name="messages"
    )
    direction = models.CharField(max_length=8, choices=Direction.choices)
    # The rider this message went to or came from (null: unknown sender).
    employee = models.ForeignKey(
        Employee, null=True, blank=True, on_delete=models.PROTECT, related_name="messages"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices, blank=True, default="")
    template = models.CharField(max_length=40, blank=True, help_text="Outbound template name.")
    # Outbound: one row per (case, rider, purpose); a retried task finds it.
    idempotency_key = models.CharField(max_length=160, null=True, blank=True, unique=True)
    from_email = models.CharField("from", max_length=320)
    to = models.JSONField(default=list, help_text="Recipient addresses.")
    cc = models.JSONField(default=list, blank=True)
    reply_to = models.CharField(max_length=320, blank=True)
    subject = models.CharField(max_length=998, blank=True)
    text_body = models.TextField(blank=True)
    html_body = models.TextField(blank=True)
    in_reply_to = models.CharField(max_length=998, blank=True)
    references = models.TextField(blank=True)
    headers = models.JSONField(default=dict, blank=True, help_text="Headers kept for the record.")
    raw = models.TextField(blank=True, help_text="The raw inbound message, as received.")
    raw_sha256 = models.CharField(max_length=64, blank=True)
    flags = models.JSONField(
        default=list, blank=True, help_text="e.g. truncated, unknown_sender, unmatched."
    )
    classification = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    received_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices)
    provider_message_id = models.CharField(max_length=255, blank=True)
    rfc_message_id = models.CharField("Message-ID", max_length=255, blank=True)
    bucket = models.CharField(max_length=16, choices=Bucket.choices, blank=True, default="")
    bucket_confidence = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["direction", "status"]),
            # The unique constraints below are partial (blank ids allowed), and
            # SQLite uses a partial index only when the query repeats its
            # condition: without these, each lookup of an id in one direction
            # scanned every message of that direction (a webhook slowed from
            # 100 to 23 deliveries a second as the table grew to 2,600 rows).
            models.Index(fields=["direction", "provider_message_id"], name="message_provider_idx"),
            models.Index(fields=["direction", "rfc_message_id"], name="message_rfc_id_idx"),
            models.Index(fields=["direction", "raw_sha256"], name="message_raw_hash_idx"),
        ]
        constraints = [
            # A redelivered webhook must find its message, not store it again.
            models.UniqueConstraint(
                fields=["provider_message_id"],
                condition=~Q(provider_message_id=""),
                name="message_unique_provider_id",
            ),
            models.UniqueConstraint(
                fields=["rfc_message_id"],
                condition=~Q(rfc_message_id=""),
                name="message_unique_rfc_id",
            ),
            models.UniqueConstraint(
                fields=["raw_sha256"],
                condition=~Q(raw_sha256=""),
                name="message_unique_raw_hash",
            ),
            models.CheckConstraint(
                condition=Q(bucket_confidence__isnull=True)
                | Q(bucket_confidence__gte=0, bucket_confidence__lte=1),
                name="message_bucket_confidence_0_to_1",
            ),
        ]

    def __str__(self) -> str:
        return self.message_id or "new message"

    def readable_text(self) -> str:
        """What a person reads of this email: its text, else its HTML as text. Never markup."""
        if self.text_body.strip():
            return self.text_body
        if self.html_body.strip():
            return html_to_text(self.html_body)
        return ""
