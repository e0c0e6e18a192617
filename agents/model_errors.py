"""What a model call returns: the validated answer and its costs, or a ModelError saying why not.

Both carry the same trace fields (model, prompt version, tokens, cost,
latency), so a caller that falls back to the rules still records what the
model cost.
"""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


class ModelError(Exception):
    """A model call that produced no usable result.

    The trace fields say what the call cost before it failed; `content` keeps
    whatever the model returned (refusal text, truncated or invalid JSON) so an
    auditor can see it. `status_code` is set when the endpoint answered an HTTP
    error.
    """

    def __init__(self, message: str, *, status_code: int | None = None, content: str = "") -> None:
        super().__init__(message)
        self.status_code = status_code
        self.content = content
        self.model = ""
        self.prompt_version = ""
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost_usd = Decimal(0)
        self.latency_ms = 0
        self.attempts = 0

    def trace_fields(self) -> dict[str, Any]:
        return _trace_fields(self) | {"error": f"{type(self).__name__}: {self}"}


class ModelUnavailable(ModelError):
    """Circuit open, connection failed, or 5xx after every retry."""


class ModelTimeout(ModelError):
    """No answer within LLM_TIMEOUT_SECONDS."""


class ModelRateLimited(ModelError):
    """Still 429 after every retry."""


class ModelRefused(ModelError):
    """The model declined (message.refusal) or the provider's content filter stopped it."""


class ModelTruncated(ModelError):
    """The output hit the token limit (finish_reason == "length"): never parsed."""


class ModelBadOutput(ModelError):
    """The content is not JSON, or not JSON that matches the schema."""


@dataclass(frozen=True)
class ModelCall(Generic[T]):
    parsed: T
    model: str
    tokens_in: int
    tokens_out: int
    cost_usd: Decimal
    latency_ms: int
    attempts: int
    prompt_version: str

    def trace_fields(self) -> dict[str, Any]:
        """The AgentRun columns this call fills (the caller writes the row)."""
        return _trace_fields(self)


def _trace_fields(source: ModelCall[Any] | ModelError) -> dict[str, Any]:
    return {
        "model": source.model,
        "prompt_version": source.prompt_version,
        "tokens_in": source.tokens_in,
        "tokens_out": source.tokens_out,
        "cost_usd": source.cost_usd,
        "latency_ms": source.latency_ms,
    }
