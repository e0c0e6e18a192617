"""What the model client was asked while one item ran, counted at its one choke point."""

import contextlib
import threading
from collections.abc import Iterator
from typing import Any
from unittest import mock

from agents import llm
from agents.model_errors import ModelError
from evals.harness.results import Usage


@contextlib.contextmanager
def metered() -> Iterator[Usage]:
    """Count every model call made inside, at the client's one choke point.

    Specialists may call from worker threads, so the tally takes a lock. The
    real ``structured`` still does the work; this only watches.
    """
    usage = Usage()
    lock = threading.Lock()
    original = llm.OpenAIClient.structured

    def record(source: Any, failed: bool) -> None:
        with lock:
            usage.model_calls += 1
            usage.model_errors += failed
            usage.tokens_in += source.tokens_in
            usage.tokens_out += source.tokens_out
            usage.cost_usd += source.cost_usd
            usage.latency_ms += source.latency_ms
            usage.call_latencies_ms.append(source.latency_ms)

    def structured(self: llm.OpenAIClient, *args: Any, **kwargs: Any) -> Any:
        try:
            call = original(self, *args, **kwargs)
        except ModelError as error:
            record(error, failed=True)
            raise
        record(call, failed=False)
        return call

    with mock.patch.object(llm.OpenAIClient, "structured", structured):
        yield usage
