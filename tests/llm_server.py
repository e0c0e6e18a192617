"""A local, scripted OpenAI-compatible endpoint so tests drive the real SDK offline.

Each POST to /v1/chat/completions takes the next scripted reply off a queue
(status, headers, body, optional delay) and records what was asked, so a test
can check both what the client sent and how it handled what came back.
"""

import json
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMPLETIONS_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Scripted:
    status: int = 200
    body: dict[str, Any] | str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering, to provoke client timeouts


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def completion(
    content: str | None,
    *,
    model: str = "gpt-4.1-mini",
    finish_reason: str = "stop",
    refusal: str | None = None,
    prompt_tokens: int = 120,
    completion_tokens: int = 30,
) -> dict[str, Any]:
    """A chat.completion body shaped like the real API's."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_764_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def api_error(message: str, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class FakeLLMServer:
    def __init__(self) -> None:
        self.script: queue.Queue[Scripted] = queue.Queue()
        self.requests: list[Recorded] = []
        # What GET /v1/models lists, as a local server lists the one model it serves.
        self.models: list[str] = ["local-model.gguf"]
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        # Handler threads may still be sleeping out a delay the client gave up
        # on; they must not hold up shutdown.
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        # A short poll interval keeps shutdown (once per test) quick.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "FakeLLMServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def reply(self, *responses: Scripted) -> None:
        for response in responses:
            self.script.put(response)

    def reply_json(self, body: dict[str, Any], **kwargs: Any) -> None:
        self.reply(Scripted(body=body, **kwargs))

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def _record(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)

    def _next(self) -> Scripted:
        try:
            return self.script.get_nowait()
        except queue.Empty:
            # An unscripted call is a test bug; a 599 makes it loud, not a hang.
            return Scripted(status=599, body=api_error("no scripted response left"))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes; without TCP_NODELAY
            # each response stalls on a delayed ACK (~40 ms).
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                server._record(Recorded(path=self.path, headers={}, body={}))
                if self.path.endswith("/models"):
                    listed = [
                        {"id": name, "object": "model", "owned_by": "local"}
                        for name in server.models
                    ]
                    self._send(Scripted(body={"object": "list", "data": listed}))
                    return
                self._send(Scripted(status=404, body=api_error("not found", "not_found")))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                server._record(
                    Recorded(
                        path=self.path,
                        headers={key.lower(): value for key, value in self.headers.items()},
                        body=json.loads(raw or b"{}"),
                    )
                )
                if self.path != COMPLETIONS_PATH:
                    self._send(Scripted(status=404, body=api_error("not found", "not_found")))
                    return
                self._send(server._next())

            def _send(self, scripted: Scripted) -> None:
                if scripted.delay:
                    time.sleep(scripted.delay)
                body = scripted.body
                payload = (body if isinstance(body, str) else json.dumps(body)).encode()
                try:
                    self.send_response(scripted.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in scripted.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up first: that was the point

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        return Handler


@contextmanager
def model_endpoint(settings: Any, *, backend: str = "openai") -> Iterator[FakeLLMServer]:
    """A started fake endpoint the project's client is pointed at, for one test.

    ``settings`` is pytest-django's fixture (restored after the test);
    ``backend="rules"`` points the client at the endpoint but leaves the rules
    on until the test switches ``LLM_BACKEND`` itself. No retries, a 2 s
    timeout and fresh breakers, so each test scripts exactly what it gets.
    """
    from agents import llm

    fake = FakeLLMServer().start()
    settings.LLM_BACKEND = backend
    settings.OPENAI_BASE_URL = fake.base_url
    settings.OPENAI_API_KEY = "sk-test-dummy"
    settings.LLM_TIMEOUT_SECONDS = 2.0
    settings.LLM_MAX_RETRIES = 0
    llm.reset_breakers()  # and the shared client that holds one
    try:
        yield fake
    finally:
        fake.stop()
        llm.reset_breakers()
