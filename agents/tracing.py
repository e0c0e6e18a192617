"""AgentRun traces: every agent run, rules or model, written as one tree per audit."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, TypeVar

from agents.llm import ModelCall, ModelError, OpenAIClient, Prompt
from agents.models import AgentRun
from agents.telemetry import export_on_commit
from cases.models import Case, Verification

if TYPE_CHECKING:
    from pydantic import BaseModel

ParsedT = TypeVar("ParsedT", bound="BaseModel")


@dataclass
class RunTrace:
    """What one agent did, kept in memory until the audit writes its tree."""

    agent: str
    backend: str
    input: dict
    model: str = ""
    prompt_version: str = ""
    output: dict | None = None
    error: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_ms: int = 0
    model_calls: int = 0
    children: list["RunTrace"] = field(default_factory=list)
    verification: Verification | None = None

    @property
    def total_model_calls(self) -> int:
        return self.model_calls + sum(child.total_model_calls for child in self.children)

    @property
    def total_tokens(self) -> int:
        own = self.tokens_in + self.tokens_out
        return own + sum(child.total_tokens for child in self.children)

    @property
    def total_cost(self) -> Decimal:
        return self.cost_usd + sum((child.total_cost for child in self.children), Decimal(0))


@contextmanager
def timed(trace: RunTrace) -> Iterator[RunTrace]:
    started = time.perf_counter()
    try:
        yield trace
    finally:
        trace.latency_ms += round((time.perf_counter() - started) * 1000)


def save_trace_tree(
    root: RunTrace, *, vanpool_pk: int | None, case: Case | None, parent: AgentRun | None = None
) -> AgentRun:
    """Write the root run and its children, each pointing at its parent."""
    run = AgentRun.objects.create(
        agent=root.agent,
        backend=root.backend,
        model=root.model,
        prompt_version=root.prompt_version,
        input=root.input,
        output=root.output,
        error=root.error,
        tokens_in=root.tokens_in,
        tokens_out=root.tokens_out,
        cost_usd=root.cost_usd,
        latency_ms=root.latency_ms,
        parent=parent,
        case=case,
        vanpool_id=vanpool_pk,
        verification=root.verification,
    )
    for child in root.children:
        save_trace_tree(child, vanpool_pk=vanpool_pk, case=case, parent=run)
    if parent is None:
        # The whole tree, once, after commit; nothing at all unless configured.
        export_on_commit(run.pk)
    return run


def traced_structured(
    client: "OpenAIClient",
    agent: str,
    prompt: "Prompt",
    user: str,
    schema: "type[ParsedT]",
    parent: RunTrace,
) -> ModelCall[ParsedT] | None:
    """One structured model call as a child trace of ``parent``.

    None when the client fails: the error stays on the child trace, marked as
    a fallback to the rules, and the caller goes on without the model.
    """
    outcome = traced_call(client, agent, prompt, user, schema, parent)
    return None if isinstance(outcome, ModelError) else outcome


def traced_call(
    client: "OpenAIClient",
    agent: str,
    prompt: "Prompt",
    user: str,
    schema: "type[ParsedT]",
    parent: RunTrace,
    *,
    max_tokens: int | None = None,
) -> "ModelCall[ParsedT] | ModelError":
    """``traced_structured`` for a caller that decides by the kind of failure.

    The error is returned, not raised; the child trace's output says
    ``{"fallback": "rules"}`` until the caller records what it did instead.
    """
    trace = RunTrace(
        agent=agent,
        backend="openai",
        input={"system_prompt": prompt.version, "user": user},
        model_calls=1,
    )
    parent.children.append(trace)
    try:
        call = client.structured(
            agent, prompt.version, prompt.text, user, schema, max_tokens=max_tokens
        )
    except ModelError as error:
        for name, value in error.trace_fields().items():
            setattr(trace, name, value)
        trace.output = {"fallback": "rules"}
        return error
    for name, value in call.trace_fields().items():
        setattr(trace, name, value)
    trace.output = call.parsed.model_dump(mode="json")
    return call
