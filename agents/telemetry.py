"""Optional export of agent runs to an observability backend; AgentRun stays the record.

Two exporters, each off unless configured, either or both:

- **OpenTelemetry** (``OTEL_EXPORTER_OTLP_ENDPOINT`` or
  ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``): each AgentRun tree becomes one trace,
  one span per run, with the GenAI semantic conventions (``gen_ai.operation.name``,
  ``gen_ai.system`` / ``gen_ai.provider.name``, ``gen_ai.request.model``,
  ``gen_ai.usage.input_tokens`` / ``output_tokens``, ``gen_ai.agent.name``), sent
  as OTLP/HTTP JSON to any collector (Jaeger, Tempo, Honeycomb, Grafana, …).
- **LangSmith** (``LANGSMITH_API_KEY``): the same tree as runs through its REST
  batch endpoint (``POST /runs/batch``).

Why hand-written, not the SDKs: the OpenTelemetry SDK and langsmith are not
dependencies, and one JSON POST per tree is all either needs — an SDK's
batching processor would add a background thread per worker process for no
gain here. Span and run IDs are derived from the AgentRun's id, so a task that
django-q2 delivers twice sends the same IDs again rather than a second tree.

Export happens after the audit's transaction commits, in a django-q2 task;
a failed export is logged and never raised: observability must not break an
audit. Inputs and outputs (home ZIPs, reply text) are left out unless
``TELEMETRY_INCLUDE_CONTENT=true``. Settings are read from Django settings
when defined there, else from the environment.
"""

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from django.conf import settings

from agents.models import AgentRun
from poolpatrol.queue import enqueue_trace_export

logger = logging.getLogger(__name__)

LANGSMITH_DEFAULT_ENDPOINT = "https://api.smith.langchain.com"
CONTENT_LIMIT = 8000  # characters of input/output kept when content is included
CONTENT_KEYS = ("poolpatrol.input", "poolpatrol.output")
SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT = 1, 3
STATUS_UNSET, STATUS_ERROR = 0, 2

_suppressed: ContextVar[bool] = ContextVar("telemetry_suppressed", default=False)


def setting(name: str, default: str = "") -> str:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name, default)
    return str(value).strip()


def otlp_traces_url() -> str:
    full = setting("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if full:
        return full
    base = setting("OTEL_EXPORTER_OTLP_ENDPOINT")
    return f"{base.rstrip('/')}/v1/traces" if base else ""


def enabled() -> bool:
    return bool(otlp_traces_url() or setting("LANGSMITH_API_KEY"))


def include_content() -> bool:
    return setting("TELEMETRY_INCLUDE_CONTENT", "false").lower() in ("1", "true", "yes", "on")


def timeout_seconds() -> float:
    try:  # OTEL_EXPORTER_OTLP_TIMEOUT is in milliseconds, as the OTel spec has it
        return max(0.1, float(setting("OTEL_EXPORTER_OTLP_TIMEOUT", "10000")) / 1000)
    except ValueError:
        return 10.0


@contextlib.contextmanager
def suppressed() -> Iterator[None]:
    """Export nothing inside (evaluations and benchmarks run on synthetic data)."""
    token = _suppressed.set(True)
    try:
        yield
    finally:
        _suppressed.reset(token)


def export_on_commit(root_pk: int) -> None:
    """Queue the export of one trace tree once the transaction that wrote it commits."""
    if _suppressed.get() or not enabled():
        return

    enqueue_trace_export(root_pk)


def export_trace_task(root_pk: int) -> dict[str, str]:
    return export_trace(root_pk)


def export_trace(root_pk: int) -> dict[str, str]:
    """Send one AgentRun tree to every configured backend; {backend: sent|failed|off}."""
    runs = load_tree(root_pk)
    if not runs:
        return {}
    results = {"otlp": "off", "langsmith": "off"}
    url = otlp_traces_url()
    if url:
        headers = otlp_headers()
        results["otlp"] = _post(url, otlp_payload(runs), headers, "OTLP")
    if setting("LANGSMITH_API_KEY"):
        endpoint = setting("LANGSMITH_ENDPOINT", LANGSMITH_DEFAULT_ENDPOINT).rstrip("/")
        headers = {"x-api-key": setting("LANGSMITH_API_KEY")}
        results["langsmith"] = _post(
            f"{endpoint}/runs/batch", langsmith_payload(runs), headers, "LangSmith"
        )
    return results


def load_tree(root_pk: int) -> list[AgentRun]:
    """The root run and its descendants, parents before children (one query per level)."""
    runs = list(AgentRun.objects.filter(pk=root_pk).select_related("case", "vanpool"))
    level = [run.pk for run in runs]
    while level:
        children = list(
            AgentRun.objects.filter(parent_id__in=level)
            .select_related("case", "vanpool")
            .order_by("id")
        )
        runs += children
        level = [run.pk for run in children]
    return runs


def _post(url: str, payload: dict, headers: dict[str, str], what: str) -> str:
    body = json.dumps(payload, default=str).encode()
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_seconds()) as response:
            response.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        # Logged, never raised: a collector outage must not fail anything else.
        logger.warning("%s export to %s failed: %s", what, _without_secrets(url), exc)
        return "failed"
    return "sent"


def _without_secrets(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.hostname or "", parts.path, "", ""))


# --- OpenTelemetry (OTLP/HTTP JSON) --------------------------------------------------------


def otlp_headers() -> dict[str, str]:
    """OTEL_EXPORTER_OTLP_HEADERS: "key=value,key2=value2", values URL-encoded (OTel spec)."""
    headers = {}
    for pair in setting("OTEL_EXPORTER_OTLP_HEADERS").split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            headers[key.strip()] = urllib.parse.unquote(value.strip())
    return headers


def _digest(*parts: object) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


def trace_id(root: AgentRun) -> str:
    return _digest("poolpatrol-trace", root.pk, root.created_at.isoformat())[:32]


def span_id(run: AgentRun) -> str:
    return _digest("poolpatrol-span", run.pk, run.created_at.isoformat())[:16]


def is_model_call(run: AgentRun) -> bool:
    return run.backend not in ("", "rules") and bool(run.model)


def times(run: AgentRun) -> tuple[dt.datetime, dt.datetime]:
    # The row is written when the run has finished: it ended at created_at.
    end = run.created_at
    return end - dt.timedelta(milliseconds=run.latency_ms), end


def _nanos(moment: dt.datetime) -> str:
    return str(round(moment.timestamp() * 1_000_000) * 1000)


def gen_ai_attributes(run: AgentRun) -> dict[str, Any]:
    model_call = is_model_call(run)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat" if model_call else "invoke_agent",
        "gen_ai.agent.name": run.agent,
        "poolpatrol.agent_run.id": run.pk,
        "poolpatrol.backend": run.backend,
    }
    if model_call:
        attributes |= {
            "gen_ai.system": run.backend,
            "gen_ai.provider.name": run.backend,
            "gen_ai.request.model": run.model,
            "gen_ai.response.model": run.model,
            "gen_ai.usage.input_tokens": run.tokens_in,
            "gen_ai.usage.output_tokens": run.tokens_out,
            "poolpatrol.cost_usd": float(run.cost_usd),
        }
    if run.prompt_version:
        attributes["poolpatrol.prompt_version"] = run.prompt_version
    if run.case is not None:
        attributes["poolpatrol.case_id"] = run.case.case_id
    if run.vanpool is not None:
        attributes["poolpatrol.vanpool_id"] = run.vanpool.vanpool_id
    if run.error:
        attributes["error.type"] = run.error.split(":", 1)[0][:100]
    if include_content():
        attributes["poolpatrol.input"] = _content(run.input)
        attributes["poolpatrol.output"] = _content(run.output)
    return attributes


def _content(value: object) -> str:
    return json.dumps(value, default=str)[:CONTENT_LIMIT]


def _otlp_value(value: object) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # int64 is a string in OTLP's JSON encoding
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def otlp_span(run: AgentRun, trace: str, parents: dict[int, str]) -> dict[str, Any]:
    start, end = times(run)
    name = f"chat {run.model}" if is_model_call(run) else f"invoke_agent {run.agent}"
    span: dict[str, Any] = {
        "traceId": trace,
        "spanId": span_id(run),
        "name": name,
        "kind": SPAN_KIND_CLIENT if is_model_call(run) else SPAN_KIND_INTERNAL,
        "startTimeUnixNano": _nanos(start),
        "endTimeUnixNano": _nanos(end),
        "attributes": [
            {"key": key, "value": _otlp_value(value)}
            for key, value in gen_ai_attributes(run).items()
        ],
        "status": {"code": STATUS_ERROR, "message": run.error[:500]}
        if run.error
        else {"code": STATUS_UNSET},
    }
    if run.parent_id in parents:
        span["parentSpanId"] = parents[run.parent_id]
    return span


def otlp_payload(runs: list[AgentRun]) -> dict[str, Any]:
    trace = trace_id(runs[0])
    parents = {run.pk: span_id(run) for run in runs}
    service = setting("OTEL_SERVICE_NAME", "poolpatrol") or "poolpatrol"
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": service}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "poolpatrol.agents"},
                        "spans": [otlp_span(run, trace, parents) for run in runs],
                    }
                ],
            }
        ]
    }


# --- LangSmith (REST runs batch) -----------------------------------------------------------


def run_uuid(run: AgentRun) -> str:
    return str(uuid.UUID(hex=_digest("poolpatrol-langsmith", run.pk, run.created_at)[:32]))


def langsmith_payload(runs: list[AgentRun]) -> dict[str, Any]:
    root_id = run_uuid(runs[0])
    ids = {run.pk: run_uuid(run) for run in runs}
    dotted: dict[int, str] = {}
    posted = []
    project = setting("LANGSMITH_PROJECT", "poolpatrol") or "poolpatrol"
    for run in runs:  # parents come first, so a parent's dotted order is known
        start, end = times(run)
        own = f"{start.astimezone(dt.UTC):%Y%m%dT%H%M%S%fZ}{ids[run.pk]}"
        dotted[run.pk] = f"{dotted[run.parent_id]}.{own}" if run.parent_id in dotted else own
        attributes = gen_ai_attributes(run)
        outputs: dict[str, Any] = {}
        if is_model_call(run):
            outputs["usage_metadata"] = {
                "input_tokens": run.tokens_in,
                "output_tokens": run.tokens_out,
                "total_tokens": run.tokens_in + run.tokens_out,
            }
        if include_content():
            outputs["output"] = run.output
        item = {
            "id": ids[run.pk],
            "trace_id": root_id,
            "dotted_order": dotted[run.pk],
            "name": run.agent,
            "run_type": "llm" if is_model_call(run) else "chain",
            "start_time": start.isoformat(),
            "end_time": end.isoformat(),
            "inputs": {"input": run.input} if include_content() else {},
            "outputs": outputs,
            "session_name": project,
            "extra": {
                "metadata": {
                    **{k: v for k, v in attributes.items() if k not in CONTENT_KEYS},
                    "ls_provider": run.backend,
                    "ls_model_name": run.model,
                }
            },
        }
        if run.error:
            item["error"] = run.error[:2000]
        if run.parent_id in ids and run.pk != runs[0].pk:
            item["parent_run_id"] = ids[run.parent_id]
        posted.append(item)
    return {"post": posted}
