"""AgentRun traces: every agent run, rules or model, written as one tree per audit."""

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, TypeVar

from agents.llm import OpenAIClient
from agents.model_errors import ModelCall, ModelError
from agents.models import AgentRun
from agents.prompting import Prompt
from agents.telemetry import export_on_commit
from cases.models import Case, Verification
from poolpatrol.bulk_insert import insert_returning, saved_key

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
    def total_model_errors(self) -> int:
        """Model calls that failed (the rules' result, or a person, took their place)."""
        own = int(self.backend != "rules" and bool(self.error))
        return own + sum(child.total_model_errors for child in self.children)

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


def save_trace_tree(root: RunTrace, *, vanpool_pk: int | None, case: Case | None) -> AgentRun:
    """Write the root run and its children, each pointing at its parent."""
    return save_trace_trees([(root, vanpool_pk, case)])[0]


def save_trace_trees(trees: Sequence[tuple[RunTrace, int | None, Case | None]]) -> list[AgentRun]:
    """Write many trace trees with one INSERT per tree level; returns the root runs.

    A bulk audit writes a root and a child per check for every vanpool: level
    by level, a chunk of 200 vanpools is two inserts, not 600.
    """
    level: list[tuple[RunTrace, AgentRun | None, int | None, Case | None]] = [
        (trace, None, vanpool_pk, case) for trace, vanpool_pk, case in trees
    ]
    roots: list[AgentRun] = []
    while level:
        runs = [
            _unsaved_run(trace, parent, vanpool_pk, case)
            for trace, parent, vanpool_pk, case in level
        ]
        insert_returning(runs)
        roots = roots or runs
        level = [
            (child, run, vanpool_pk, case)
            for (trace, _, vanpool_pk, case), run in zip(level, runs, strict=True)
            for child in trace.children
        ]
    for root in roots:
        # The whole tree, once, after commit; nothing at all unless configured.
        export_on_commit(root.pk)
    return roots


def _unsaved_run(
    trace: RunTrace, parent: AgentRun | None, vanpool_pk: int | None, case: Case | None
) -> AgentRun:
    return AgentRun(
        agent=trace.agent,
        backend=trace.backend,
        model=trace.model,
        prompt_version=trace.prompt_version,
        input=trace.input,
        output=trace.output,
        error=trace.error,
        tokens_in=trace.tokens_in,
        tokens_out=trace.tokens_out,
        cost_usd=trace.cost_usd,
        latency_ms=trace.latency_ms,
        # Keys, not objects: each was inserted before this level (a related
        # object's descriptor and save-time checks were a tenth of the writes).
        parent_id=saved_key(parent),
        case_id=saved_key(case),
        vanpool_id=vanpool_pk,
        verification_id=saved_key(trace.verification),
    )


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
