"""Riding out a failing model endpoint: a circuit breaker per endpoint, and which failures to retry.

The client's own retries (``agents.llm.OpenAIClient``) ask these: whether an
SDK error is worth another attempt, how long to wait (Retry-After, else
backoff with jitter), and whether the endpoint's breaker lets a call out.
"""

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import openai
from django.conf import settings

from agents.model_errors import (
    ModelError,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
)

log = logging.getLogger(__name__)

# Backoff when the server gives no Retry-After: 0.5 s, 1 s, 2 s… up to 8 s,
# each with jitter so workers that failed together do not retry together.
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 8.0
# A Retry-After is honoured up to this long; an audit does not wait minutes.
RETRY_AFTER_CAP_SECONDS = 30.0


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


def forget_breakers() -> None:
    """Drop every endpoint's breaker; the next call builds a closed one."""
    with _breakers_lock:
        _breakers.clear()


@dataclass(frozen=True)
class Failure:
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
    ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2.0 ** (attempt - 1))
    return ceiling / 2 + random.uniform(0, ceiling / 2)


def classify_failure(exc: openai.APIError) -> Failure:
    """Map an SDK error to ours, and say whether another attempt could help."""
    if isinstance(exc, openai.APITimeoutError):
        # Not retried: the request may still be running (and billing) server-side,
        # and a second full wait doubles the audit's latency for a result the
        # rules engine already gave us.
        return Failure(ModelTimeout("the model did not answer in time"), retryable=False)
    if isinstance(exc, openai.APIConnectionError):
        return Failure(ModelUnavailable(f"cannot reach the model endpoint: {exc}"), True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = f"HTTP {status} from the model endpoint: {exc.message}"
        retry_after = retry_after_seconds(exc.response.headers)
        if status == 429:
            return Failure(ModelRateLimited(message, status_code=status), True, retry_after)
        if status >= 500:
            return Failure(ModelUnavailable(message, status_code=status), True, retry_after)
        if over_context(exc.message):
            message = (
                f"the prompt is longer than the model server's context window (HTTP {status}: "
                f"{exc.message}); start the server with a larger one, e.g. llama-server "
                "--ctx-size 8192"
            )
        # Any other 4xx is our request or our credentials: the same request fails again.
        return Failure(ModelError(message, status_code=status), retryable=False)
    return Failure(ModelError(f"unusable response from the model endpoint: {exc}"), False)


def over_context(message: str) -> bool:
    """llama.cpp and others refuse a prompt over the context window with a 400 like this."""
    said = message.lower()
    return "context" in said and any(
        word in said for word in ("exceed", "too long", "longer than", "maximum context")
    )
