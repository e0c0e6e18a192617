"""AgentRun: the record of every agent run, rules or model, for "why?" questions."""

from django.db import models

from cases.models import AppendOnlyModel, Case, Verification
from vanpools.models import Vanpool


class AgentRun(AppendOnlyModel):
    agent = models.CharField(max_length=60, db_index=True)
    backend = models.CharField(max_length=20)
    model = models.CharField(max_length=80, blank=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    input = models.JSONField(default=dict, blank=True)
    output = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField("cost (USD)", max_digits=10, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.PROTECT, related_name="agent_runs"
    )
    vanpool = models.ForeignKey(
        Vanpool, null=True, blank=True, on_delete=models.PROTECT, related_name="agent_runs"
    )
    verification = models.ForeignKey(
        Verification, null=True, blank=True, on_delete=models.PROTECT, related_name="agent_runs"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "agent run"

    def __str__(self) -> str:
        status = "error" if self.error else "ok"
        return f"{self.agent} · {self.backend} · {status}"
