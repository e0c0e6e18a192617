"""The thin model client: one structured call to any OpenAI-compatible endpoint.

`OpenAIClient.structured()` sends a system and a user message, asks for JSON
that matches a pydantic schema (structured outputs, strict) and returns the
validated model with what the trace needs: model, tokens, cost, latency,
attempts and prompt version. Every way it can fail is a `ModelError` that
carries the same trace fields, so callers fall back to the rules result and
still record what the model cost (design: "Model backends").

What it returns and raises is in ``agents.model_errors``; its retries and
circuit breaker in ``agents.resilience``; the response format in
``agents.response_format``; prompts in ``agents.prompting``.

Decision JSON is never repaired: content that does not validate is
`ModelBadOutput`, full stop.
"""

import functools
import logging
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Literal

import openai
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError

from agents.model_errors import (
    ModelBadOutput,
    ModelCall,
    ModelError,
    ModelRefused,
    ModelTruncated,
    ModelUnavailable,
    T,
)
from agents.resilience import (
    CircuitBreaker,
    Failure,
    breaker_for,
    classify_failure,
    forget_breakers,
    retry_delay,
)
from agents.response_format import bounded_response_format_for, response_format_for

log = logging.getLogger(__name__)

RULES: Literal["rules"] = "rules"
OPENAI_DEFAULT_ENDPOINT = "https://api.openai.com/v1"
_PER_MILLION = Decimal(1_000_000)
_MICRO_USD = Decimal("0.000001")  # AgentRun.cost_usd keeps six decimal places


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
                cause, failure = exc, Failure(_not_a_completion(), retryable=False)
            else:
                if _is_completion(completion):
                    return completion, attempt
                cause, failure = None, Failure(_not_a_completion(), retryable=False)
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


def reset_breakers() -> None:
    """Forget every endpoint's state (tests, or an operator after fixing the endpoint).

    The shared client holds its breaker, so it is dropped too: the next call
    builds a client with a closed one.
    """
    forget_breakers()
    _shared_client.cache_clear()
