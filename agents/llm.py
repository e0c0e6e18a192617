"""The thin model client: one structured call to any OpenAI-compatible endpoint.

`OpenAIClient.structured()` sends a system and a user message, asks for JSON
that matches a pydantic schema (structured outputs, strict) and returns the
validated model with what the trace needs: model, tokens, cost, latency,
attempts and prompt version. Every way it can fail is a `ModelError` that
carries the same trace fields, so callers fall back to the rules result and
still record what the model cost (design: "Model backends").

Decision JSON is never repaired: content that does not validate is
`ModelBadOutput`, full stop.
"""

import dataclasses
import datetime as dt
import functools
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import openai
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from openai.lib import type_to_response_format_param
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

RULES: Literal["rules"] = "rules"
OPENAI_DEFAULT_ENDPOINT = "https://api.openai.com/v1"
PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"

# Backoff when the server gives no Retry-After: 0.5 s, 1 s, 2 s… up to 8 s,
# each with jitter so workers that failed together do not retry together.
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 8.0
# A Retry-After is honoured up to this long; an audit does not wait minutes.
RETRY_AFTER_CAP_SECONDS = 30.0
_PER_MILLION = Decimal(1_000_000)
_MICRO_USD = Decimal("0.000001")  # AgentRun.cost_usd keeps six decimal places


# --- Errors --------------------------------------------------------------------------


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


# --- Result ------------------------------------------------------------------------


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


# --- Models and prices (read at call time, so override_settings works) ------------------


def model_for(agent: str) -> str:
    """The configured model for an agent; agents without their own use LLM_MODEL_DEFAULT."""
    return settings.LLM_MODELS.get(agent, settings.LLM_DEFAULT_MODEL)


def cost_usd(model: str, tokens_in: int, tokens_out: int) -> Decimal:
    """Price from LLM_PRICES (USD per 1M tokens); an unpriced model costs 0, not a guess."""
    price = settings.LLM_PRICES.get(model)
    if price is None:
        return Decimal(0)
    total = (tokens_in * price["input"] + tokens_out * price["output"]) / _PER_MILLION
    return total.quantize(_MICRO_USD)


# --- Circuit breaker ----------------------------------------------------------------------


class CircuitBreaker:
    """Fail fast while an endpoint is down, instead of every audit waiting out retries.

    Closed: calls go through; `threshold` consecutive failures open it. Open:
    calls are refused until `cooldown_seconds` have passed. Half-open: exactly
    one trial call goes through; its success closes the breaker, its failure
    opens it for another cooldown.
    """

    def __init__(
        self,
        threshold: int,
        cooldown_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self.cooldown_seconds = cooldown_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def state(self) -> Literal["closed", "open", "half_open"]:
        with self._lock:
            if self._opened_at is None:
                return "closed"
            if self._trial_in_flight or not self._cooled_down():
                return "open"
            return "half_open"

    def allow(self) -> bool:
        """May a call go out now? In half-open this hands out the single trial."""
        with self._lock:
            if self._opened_at is None:
                return True
            if self._trial_in_flight or not self._cooled_down():
                return False
            self._trial_in_flight = True
            return True

    def record_success(self) -> None:
        with self._lock:
            if self._opened_at is not None:
                log.info("model circuit closed after a successful trial call")
            self._failures = 0
            self._opened_at = None
            self._trial_in_flight = False

    def record_failure(self) -> None:
        with self._lock:
            self._failures += 1
            failed_trial = self._trial_in_flight
            self._trial_in_flight = False
            if failed_trial or (self._opened_at is None and self._failures >= self.threshold):
                self._opened_at = self._clock()
                log.warning(
                    "model circuit open for %ss after %s consecutive failures",
                    self.cooldown_seconds,
                    self._failures,
                )

    def _cooled_down(self) -> bool:
        assert self._opened_at is not None
        return self._clock() - self._opened_at >= self.cooldown_seconds


_breakers: dict[str, CircuitBreaker] = {}
_breakers_lock = threading.Lock()


def breaker_for(endpoint: str) -> CircuitBreaker:
    """The process-wide breaker for one endpoint: every client and thread shares it."""
    with _breakers_lock:
        if endpoint not in _breakers:
            _breakers[endpoint] = CircuitBreaker(
                settings.LLM_BREAKER_THRESHOLD, settings.LLM_BREAKER_COOLDOWN_SECONDS
            )
        return _breakers[endpoint]


def reset_breakers() -> None:
    """Forget every endpoint's state (tests, or an operator after fixing the endpoint).

    The shared client holds its breaker, so it is dropped too: the next call
    builds a client with a closed one.
    """
    with _breakers_lock:
        _breakers.clear()
    _shared_client.cache_clear()


# --- Retries ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Failure:
    error: ModelError
    retryable: bool
    retry_after: float | None = None


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Retry-After in seconds (or OpenAI's retry-after-ms); None when absent or not a number."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if not raw:
            continue
        try:
            seconds = float(raw) / scale
        except ValueError:
            continue  # an HTTP-date: fall back to our own backoff
        if 0 <= seconds < float("inf"):
            return seconds
    return None


def retry_delay(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait before the next attempt (attempt counts from 1)."""
    if retry_after is not None:
        return min(retry_after, RETRY_AFTER_CAP_SECONDS)
    ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** (attempt - 1))
    return ceiling / 2 + random.uniform(0, ceiling / 2)


def classify_failure(exc: openai.APIError) -> _Failure:
    """Map an SDK error to ours, and say whether another attempt could help."""
    if isinstance(exc, openai.APITimeoutError):
        # Not retried: the request may still be running (and billing) server-side,
        # and a second full wait doubles the audit's latency for a result the
        # rules engine already gave us.
        return _Failure(ModelTimeout("the model did not answer in time"), retryable=False)
    if isinstance(exc, openai.APIConnectionError):
        return _Failure(ModelUnavailable(f"cannot reach the model endpoint: {exc}"), True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = f"HTTP {status} from the model endpoint: {exc.message}"
        retry_after = retry_after_seconds(exc.response.headers)
        if status == 429:
            return _Failure(ModelRateLimited(message, status_code=status), True, retry_after)
        if status >= 500:
            return _Failure(ModelUnavailable(message, status_code=status), True, retry_after)
        if _over_context(exc.message):
            message = (
                f"the prompt is longer than the model server's context window (HTTP {status}: "
                f"{exc.message}); start the server with a larger one, e.g. llama-server "
                "--ctx-size 8192"
            )
        # Any other 4xx is our request or our credentials: the same request fails again.
        return _Failure(ModelError(message, status_code=status), retryable=False)
    return _Failure(ModelError(f"unusable response from the model endpoint: {exc}"), False)


# --- The client ------------------------------------------------------------------------


def _over_context(message: str) -> bool:
    """llama.cpp and others refuse a prompt over the context window with a 400 like this."""
    said = message.lower()
    return "context" in said and any(
        word in said for word in ("exceed", "too long", "longer than", "maximum context")
    )


@functools.cache
def response_format_for(schema: type[BaseModel]) -> Any:
    """The strict json_schema response_format for a pydantic model, built once per schema.

    The SDK's converter makes every property required and forbids extra keys,
    which strict structured outputs demand.
    """
    return type_to_response_format_param(schema)


# Keywords that already bound a string: an enum, a constant, a pattern or a format.
_SHAPED_STRING = ("enum", "const", "pattern", "format")


def bounded_schema(schema: Any, *, max_chars: int, max_items: int) -> Any:
    """A copy of a JSON schema whose free strings and lists have an upper bound.

    A grammar-constrained local model can keep writing one reason or repeating
    one list entry until the token limit cuts it, which leaves nothing usable.
    ``maxLength`` and ``maxItems`` become part of the server's grammar, so the
    answer has to end. Existing tighter bounds are kept.
    """
    if isinstance(schema, list):
        return [bounded_schema(item, max_chars=max_chars, max_items=max_items) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {
        key: bounded_schema(value, max_chars=max_chars, max_items=max_items)
        for key, value in schema.items()
    }
    if bounded.get("type") == "string" and not any(key in bounded for key in _SHAPED_STRING):
        bounded["maxLength"] = min(bounded.get("maxLength", max_chars), max_chars)
    if bounded.get("type") == "array":
        bounded["maxItems"] = min(bounded.get("maxItems", max_items), max_items)
    return bounded


@functools.cache
def bounded_response_format_for(schema: type[BaseModel], max_chars: int, max_items: int) -> Any:
    strict = response_format_for(schema)
    return {
        **strict,
        "json_schema": {
            **strict["json_schema"],
            "schema": bounded_schema(
                strict["json_schema"]["schema"], max_chars=max_chars, max_items=max_items
            ),
        },
    }


class OpenAIClient:
    backend = "openai"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 20.0,
        max_retries: int = 3,
        breaker: CircuitBreaker | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        # The SDK's own retries are off: ours honour Retry-After, count
        # attempts for the trace and feed the circuit breaker.
        self._sdk = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )
        self.endpoint = base_url or OPENAI_DEFAULT_ENDPOINT
        self.max_retries = max_retries
        self.breaker = breaker or breaker_for(self.endpoint)
        self._sleep = sleep
        # "json_schema" (OpenAI, llama.cpp's llama-server) until the server refuses it;
        # then "json_object" with the schema (llama-cpp-python's server), for this client.
        self.response_style = settings.LLM_RESPONSE_FORMAT
        if self.response_style == "auto":
            self.response_style = "json_schema"
        self._may_fall_back = settings.LLM_RESPONSE_FORMAT == "auto"
        # Bounds on free text and lists (LLM_OUTPUT_BOUNDS) until the server refuses them.
        self.bounded = settings.LLM_OUTPUT_BOUNDS
        self._served_model: str | None = None

    @classmethod
    def from_settings(
        cls, *, breaker: CircuitBreaker | None = None, sleep: Callable[[float], None] = time.sleep
    ) -> "OpenAIClient":
        if not settings.OPENAI_API_KEY:
            raise ImproperlyConfigured("LLM_BACKEND=openai needs OPENAI_API_KEY")
        return cls(
            api_key=settings.OPENAI_API_KEY,
            base_url=settings.OPENAI_BASE_URL or None,
            timeout=settings.LLM_TIMEOUT_SECONDS,
            max_retries=settings.LLM_MAX_RETRIES,
            breaker=breaker,
            sleep=sleep,
        )

    def structured(
        self,
        agent: str,
        prompt_version: str,
        system: str,
        user: str,
        schema: type[T],
        *,
        max_tokens: int | None = None,
    ) -> ModelCall[T]:
        """One chat completion whose content must validate against `schema`.

        ``max_tokens`` caps the output (LLM_MAX_TOKENS unless given).
        Raises a ModelError subclass on any failure, stamped with the trace fields.
        """
        started = time.perf_counter()
        try:
            model = model_for(agent) or self.served_model()
        except ModelError as error:
            error.prompt_version, error.latency_ms = prompt_version, _elapsed_ms(started)
            raise

        def stamp(
            error: ModelError, served_by: str = model, tokens: tuple[int, int] = (0, 0)
        ) -> ModelError:
            error.model, error.prompt_version = served_by, prompt_version
            error.tokens_in, error.tokens_out = tokens
            error.cost_usd = cost_usd(model, *tokens)
            error.latency_ms = _elapsed_ms(started)
            return error

        if not self.breaker.allow():
            raise stamp(ModelUnavailable("circuit open: the model endpoint failed repeatedly"))
        try:
            completion, attempts = self._complete(
                model, system, user, schema, max_tokens or settings.LLM_MAX_TOKENS
            )
        except ModelError as error:
            self.breaker.record_failure()
            stamp(error)
            raise
        except BaseException:
            self.breaker.record_failure()  # never leave a half-open trial hanging
            raise
        # The endpoint answered with a completion, so it is up, whatever the
        # content turns out to be.
        self.breaker.record_success()

        served_by = completion.model or model
        tokens = _token_counts(completion)
        try:
            parsed = _parse_completion(completion, schema)
        except ModelError as error:
            error.attempts = attempts
            stamp(error, served_by, tokens)
            raise
        return ModelCall(
            parsed=parsed,
            model=served_by,
            tokens_in=tokens[0],
            tokens_out=tokens[1],
            cost_usd=cost_usd(model, *tokens),
            latency_ms=_elapsed_ms(started),
            attempts=attempts,
            prompt_version=prompt_version,
        )

    def _complete(
        self, model: str, system: str, user: str, schema: type[BaseModel], max_tokens: int
    ) -> tuple[ChatCompletion, int]:
        """The completion and how many attempts it took, retrying what is worth retrying."""
        messages: Any = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        attempt = 0
        cause: Exception | None
        while True:
            attempt += 1
            try:
                completion = self._sdk.chat.completions.create(
                    model=model,
                    messages=messages,
                    response_format=self._response_format(schema),
                    max_tokens=max_tokens,
                    # Reproducible readings: the same reply, the same label.
                    temperature=settings.LLM_TEMPERATURE,
                    seed=settings.LLM_SEED,
                )
            except openai.APIStatusError as exc:
                if self._refuses_bounds(exc) or self._refuses_json_schema(exc):
                    continue  # asked again at once in the format the server takes
                cause, failure = exc, classify_failure(exc)
            except openai.APIError as exc:
                cause, failure = exc, classify_failure(exc)
            except ValueError as exc:  # a 200 whose body is not JSON escapes the SDK as-is
                cause, failure = exc, _Failure(_not_a_completion(), retryable=False)
            else:
                if _is_completion(completion):
                    return completion, attempt
                cause, failure = None, _Failure(_not_a_completion(), retryable=False)
            failure.error.attempts = attempt
            if not failure.retryable or attempt > self.max_retries:
                raise failure.error from cause
            delay = retry_delay(attempt, failure.retry_after)
            log.warning(
                "model call attempt %s failed (%s); retrying in %.2fs", attempt, cause, delay
            )
            self._sleep(delay)

    def _response_format(self, schema: type[BaseModel]) -> Any:
        strict = (
            bounded_response_format_for(
                schema, settings.LLM_OUTPUT_MAX_CHARS, settings.LLM_OUTPUT_MAX_ITEMS
            )
            if self.bounded
            else response_format_for(schema)
        )
        if self.response_style == "json_schema":
            return strict
        return {"type": "json_object", "schema": strict["json_schema"]["schema"]}

    def _refuses_json_schema(self, exc: openai.APIStatusError) -> bool:
        """A server that wants the older json_object format: switch to it, once, and say so."""
        if not (self._may_fall_back and self.response_style == "json_schema"):
            return False
        said = f"{exc.message} {exc.body}".lower()
        if exc.status_code not in (400, 422, 500) or not any(
            word in said for word in ("json_schema", "json_object", "response_format")
        ):
            return False
        log.warning(
            "%s refuses the json_schema response format (HTTP %s); using json_object",
            self.endpoint,
            exc.status_code,
        )
        self.response_style = "json_object"
        return True

    def _refuses_bounds(self, exc: openai.APIStatusError) -> bool:
        """A server whose strict mode rejects maxLength/maxItems: drop the bounds, once."""
        if not self.bounded or exc.status_code not in (400, 422):
            return False
        said = f"{exc.message} {exc.body}".lower()
        if not any(word in said for word in ("maxlength", "maxitems")):
            return False
        log.warning(
            "%s refuses bounds on the answer's length (HTTP %s); asking without them",
            self.endpoint,
            exc.status_code,
        )
        self.bounded = False
        return True

    def served_model(self) -> str:
        """The server's own model name (``/v1/models``), when none is configured.

        A local server serves one model under its own name; OpenAI's names and
        prices must not be put on it.
        """
        if self._served_model is None:
            try:
                models = self._sdk.models.list()
                self._served_model = next(iter(models)).id
            except (openai.APIError, StopIteration) as exc:
                raise ModelUnavailable(
                    f"no model configured (LLM_MODEL_DEFAULT) and {self.endpoint}/models "
                    f"names none: {exc}"
                ) from None
        return self._served_model


def _parse_completion(completion: ChatCompletion, schema: type[T]) -> T:
    """The schema instance, after refusal and truncation are ruled out; never repaired."""
    choice = completion.choices[0]
    message = choice.message
    if message.refusal:
        raise ModelRefused("the model refused", content=message.refusal)
    if choice.finish_reason == "content_filter":
        raise ModelRefused(
            "the provider's content filter stopped the output", content=message.content or ""
        )
    if choice.finish_reason == "length":
        raise ModelTruncated("the output hit the token limit", content=message.content or "")
    if not message.content:
        raise ModelBadOutput("the completion has no content")
    try:
        # strict: JSON is taken as written, no coercion of "3" into 3.
        return schema.model_validate_json(message.content, strict=True)
    except ValidationError as exc:
        raise ModelBadOutput(
            f"content does not match {schema.__name__}: {_summarise(exc)}", content=message.content
        ) from exc


def _is_completion(completion: object) -> bool:
    """Does the envelope hold a first choice with a message? (The SDK does not check.)"""
    return (
        isinstance(completion, ChatCompletion)
        and bool(completion.choices)
        and completion.choices[0].message is not None
    )


def _not_a_completion() -> ModelError:
    # A misrouted base URL or a proxy's error page: the endpoint is not serving
    # completions, so this counts against the circuit breaker.
    return ModelUnavailable("the endpoint's answer is not a chat completion")


def _summarise(exc: ValidationError) -> str:
    """The first few problems by location, without echoing the (untrusted) input."""
    problems = [
        f"{'.'.join(str(part) for part in error['loc']) or '<root>'}: {error['msg']}"
        for error in exc.errors(include_input=False, include_url=False)[:3]
    ]
    more = exc.error_count() - len(problems)
    return "; ".join(problems) + (f" (+{more} more)" if more > 0 else "")


def _token_counts(completion: ChatCompletion) -> tuple[int, int]:
    usage = completion.usage  # some compatible servers omit it
    return (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)


def _elapsed_ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


# --- Backend selection ----------------------------------------------------------------


def get_backend() -> Literal["rules"] | OpenAIClient:
    """RULES (the default, no key needed) or the shared client for the configured endpoint."""
    if settings.LLM_BACKEND != "openai":
        return RULES
    if not settings.OPENAI_API_KEY:
        raise ImproperlyConfigured("LLM_BACKEND=openai needs OPENAI_API_KEY")
    return _shared_client(
        settings.OPENAI_API_KEY,
        settings.OPENAI_BASE_URL or None,
        settings.LLM_TIMEOUT_SECONDS,
        settings.LLM_MAX_RETRIES,
    )


@functools.lru_cache(maxsize=4)
def _shared_client(
    api_key: str, base_url: str | None, timeout: float, max_retries: int
) -> OpenAIClient:
    # One client per configuration, so threads reuse its connection pool.
    return OpenAIClient(
        api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
    )


# --- Prompts ---------------------------------------------------------------------------

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_VERSION = re.compile(r"v[0-9]+\Z")


@dataclass(frozen=True)
class Prompt:
    text: str
    version: str  # "location.v1": what AgentRun.prompt_version records


@functools.cache
def load_prompt(name: str, version: str) -> Prompt:
    """agents/prompts/<name>.<version>.md; a changed prompt is a new file, never an edit."""
    if not _NAME.match(name) or not _VERSION.match(version):
        raise ValueError(f"bad prompt name or version: {name!r} {version!r}")
    path = PROMPTS_DIR / f"{name}.{version}.md"
    if not path.is_file():
        raise LookupError(f"no prompt {name}.{version} in {PROMPTS_DIR}")
    return Prompt(text=path.read_text(encoding="utf-8").strip(), version=f"{name}.{version}")


def data_block(tag: str, payload: object) -> str:
    """Record data as one JSON document between <tag> markers (principle 5).

    Every "<" is written as \\u003c, which is the same JSON, so text copied from
    an email cannot close the block early and pose as instructions.
    """
    if not _NAME.match(tag):
        raise ValueError(f"bad block tag: {tag!r}")
    body = json.dumps(payload, default=_jsonable, ensure_ascii=False, indent=2, sort_keys=True)
    body = body.replace("<", "\\u003c")
    return f"<{tag}>\n{body}\n</{tag}>"


def _jsonable(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)  # Decimal and friends
