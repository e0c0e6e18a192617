"""agents.telemetry: AgentRun trees exported as OTLP spans or LangSmith runs, when configured."""

import json
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agents import telemetry
from agents.models import AgentRun
from agents.tracing import RunTrace, save_trace_tree
from tests.factories import VanpoolFactory

pytestmark = pytest.mark.django_db


class Collector:
    """A local HTTP endpoint that records each POST and answers with ``status``."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.posts: list[tuple[str, dict, dict]] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                collector.posts.append((self.path, headers, json.loads(body)))
                self.send_response(collector.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A short poll: shutdown() waits for it (half a second by default).
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "Collector":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def audit_tree() -> RunTrace:
    """A case manager run with a rules specialist under it and a model call under that."""
    model = RunTrace(
        agent="shift",
        backend="openai",
        input={"user": "home ZIP 94587"},
        model="gpt-4.1-mini",
        prompt_version="v1",
        tokens_in=120,
        tokens_out=30,
        cost_usd=Decimal("0.000096"),
        latency_ms=850,
        model_calls=1,
    )
    rules = RunTrace(agent="shift", backend="rules", input={}, latency_ms=2, children=[model])
    return RunTrace(agent="case_manager", backend="openai", input={}, children=[rules])


@pytest.fixture
def saved(django_capture_on_commit_callbacks):
    def save(tree=None):
        vanpool = VanpoolFactory()
        with django_capture_on_commit_callbacks(execute=True):
            return save_trace_tree(tree or audit_tree(), vanpool_pk=vanpool.pk, case=None)

    return save


def attributes(span):
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def test_nothing_is_exported_or_queued_without_configuration(
    saved, django_capture_on_commit_callbacks
):
    assert not telemetry.enabled()
    vanpool = VanpoolFactory()
    with django_capture_on_commit_callbacks() as callbacks:
        save_trace_tree(audit_tree(), vanpool_pk=vanpool.pk, case=None)
    assert callbacks == []


def test_a_trace_tree_becomes_otlp_spans_with_gen_ai_conventions(saved, settings):
    with Collector() as collector:
        settings.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url
        settings.OTEL_EXPORTER_OTLP_HEADERS = "x-honeycomb-team=abc%20123,bad"
        root = saved()
    [(path, headers, body)] = collector.posts
    assert path == "/v1/traces"
    assert headers["x-honeycomb-team"] == "abc 123"
    resource = body["resourceSpans"][0]
    assert resource["resource"]["attributes"][0]["value"] == {"stringValue": "poolpatrol"}
    spans = resource["scopeSpans"][0]["spans"]
    assert [s["name"] for s in spans] == [
        "invoke_agent case_manager",
        "invoke_agent shift",
        "chat gpt-4.1-mini",
    ]
    assert len({s["traceId"] for s in spans}) == 1 and len(spans[0]["traceId"]) == 32
    assert "parentSpanId" not in spans[0]
    assert spans[1]["parentSpanId"] == spans[0]["spanId"]
    assert spans[2]["parentSpanId"] == spans[1]["spanId"]
    chat = attributes(spans[2])
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.system"] == "openai"
    assert chat["gen_ai.request.model"] == "gpt-4.1-mini"
    assert chat["gen_ai.usage.input_tokens"] == "120"
    assert chat["gen_ai.usage.output_tokens"] == "30"
    assert chat["poolpatrol.agent_run.id"] == str(root.children.get().children.get().pk)
    assert spans[2]["kind"] == telemetry.SPAN_KIND_CLIENT
    assert int(spans[2]["endTimeUnixNano"]) - int(spans[2]["startTimeUnixNano"]) == 850_000_000
    assert "poolpatrol.input" not in chat  # content is opt-in


def test_a_failed_run_is_an_error_span_and_content_is_sent_only_when_asked(saved, settings):
    tree = RunTrace(agent="classifier", backend="openai", model="gpt-4.1-mini", input={"x": 1})
    tree.error = "ModelTimeout: no answer within 20 s"
    with Collector() as collector:
        settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = f"{collector.url}/otlp/traces"
        settings.TELEMETRY_INCLUDE_CONTENT = "true"
        saved(tree)
    [(path, _, body)] = collector.posts
    assert path == "/otlp/traces"
    [span] = body["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert span["status"]["code"] == telemetry.STATUS_ERROR
    assert attributes(span)["error.type"] == "ModelTimeout"
    assert attributes(span)["poolpatrol.input"] == '{"x": 1}'


def test_the_same_tree_goes_to_langsmith_as_nested_runs(saved, settings):
    with Collector() as collector:
        settings.LANGSMITH_API_KEY = "lsv2-test"
        settings.LANGSMITH_ENDPOINT = collector.url
        saved()
    [(path, headers, body)] = collector.posts
    assert path == "/runs/batch"
    assert headers["x-api-key"] == "lsv2-test"
    root, rules, chat = body["post"]
    assert {run["trace_id"] for run in body["post"]} == {root["id"]}
    assert "parent_run_id" not in root
    assert rules["parent_run_id"] == root["id"] and chat["parent_run_id"] == rules["id"]
    assert chat["dotted_order"].startswith(rules["dotted_order"] + ".")
    assert chat["run_type"] == "llm" and root["run_type"] == "chain"
    assert chat["outputs"]["usage_metadata"]["total_tokens"] == 150
    assert chat["extra"]["metadata"]["ls_model_name"] == "gpt-4.1-mini"
    assert chat["inputs"] == {}


def test_an_unreachable_or_failing_collector_is_logged_never_raised(saved, settings, caplog):
    with Collector(status=503) as collector:
        settings.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url
        root = saved()
    assert len(collector.posts) == 1
    assert "OTLP export" in caplog.text and "503" in caplog.text
    settings.OTEL_EXPORTER_OTLP_ENDPOINT = "http://127.0.0.1:9"  # nothing listens there
    assert telemetry.export_trace(root.pk)["otlp"] == "failed"
    assert AgentRun.objects.count() == 3  # the record is untouched


def test_export_is_suppressed_for_synthetic_runs(saved, settings):
    with Collector() as collector:
        settings.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url
        with telemetry.suppressed():
            saved()
    assert collector.posts == []


def test_a_redelivered_export_sends_the_same_ids(saved, settings):
    with Collector() as collector:
        settings.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url
        root = saved()
        telemetry.export_trace(root.pk)
    first, second = (
        body["resourceSpans"][0]["scopeSpans"][0]["spans"] for _, _, body in collector.posts
    )
    assert [s["spanId"] for s in first] == [s["spanId"] for s in second]
