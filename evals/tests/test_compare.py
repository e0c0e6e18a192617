"""`evaluate --compare`: the same sets on several backends, side by side, against a local stub."""

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.llm_server import completion

ROOT = Path(__file__).resolve().parents[2]
WEEKDAYS = [
    {"day": d, "start": "07:00", "end": "16:00"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
]

SHIFT_CASE = {
    "kind": "shift",
    "id": "free-text",
    "vanpool": {"schedule": WEEKDAYS},
    "riders": [
        {"employee_id": "E1", "shift": {"name": "HR", "schedule_text": "weekdays, seven till four"}}
    ],
    "expected": {"verdict": "pass", "flagged": []},
}
REPLY_CASE = {
    "kind": "reply",
    "id": "moved",
    "text": "I moved last month and updated my address in the portal.",
    "expected": {"bucket": "update", "hitl": False},
}
LIFECYCLE_CASE = {
    "kind": "lifecycle",
    "id": "question",
    "program": {
        "vanpool": {"id": "VP-950", "pickup_zip": "94587", "schedule": "Mon-Fri 07:00-16:00"},
        "shifts": {"DAY": "Mon-Fri 07:00-16:00"},
        "riders": [{"employee_id": "EMP-95", "home_zip": "90026", "shift": "DAY"}],
    },
    "events": [
        {"at": "+0d", "do": "audit"},
        {"at": "+1d", "do": "reply", "from": "EMP-95", "text": "How do you measure the distance?"},
    ],
    "expected": {"status": "pending_reply", "human_decisions": 0, "buckets": ["question"]},
}


class StubModels:
    """An OpenAI-compatible endpoint answering per requested model and schema.

    model-a answers well; model-b invents a distance in its reasoning and
    misreads the reply, so the table must tell them apart.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                schema = body["response_format"]["json_schema"]["name"]
                stub.calls.append((body["model"], schema))
                answer = stub.answer(body["model"], schema, body)
                payload = json.dumps(answer).encode()
                self.send_response(503 if "error" in answer else 200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def answer(self, model: str, schema: str, body: dict) -> dict:
        if model == "model-down":
            return {"error": {"message": "overloaded", "type": "server_error"}}
        good = model == "model-a"
        tokens = {"prompt_tokens": 100 if good else 300, "completion_tokens": 20}
        if schema in ("ModelJudgement", "ModelShiftJudgement"):
            reasoning = "Weekdays 07:00-16:00." if good else "Lives 99.5 miles away; fine."
            content = {
                "check": "shift",
                "verdict": "pass",
                "confidence": 4,
                "reasoning": reasoning,
                "riders": [{"employee_id": "EVAL0-E1", "verdict": "pass", "reason": "7 till 4"}],
            }
        elif schema == "ModelReplyLabel":
            asked = "?" in body["messages"][-1]["content"]
            bucket = ("question" if asked else "update") if good else "acknowledgment"
            content = {"bucket": bucket, "confidence": 0.9}
        elif schema == "ClarityScore":
            content = {"clarity": 4, "reason": "Clear."}
        else:
            return {"error": {"message": f"unexpected schema {schema}", "type": "server_error"}}
        return completion(json.dumps(content), model=model, **tokens)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    server = StubModels()
    yield server
    server.stop()


def evaluate(stub, *args, **env_extra):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "manage.py", "evaluate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env
        | {
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": stub.base_url,
            "LOG_LEVEL": "warning",
            "LLM_MAX_RETRIES": "0",
        }
        | env_extra,
    )


@pytest.fixture
def sets(tmp_path):
    audit = tmp_path / "audit.jsonl"
    audit.write_text(json.dumps(SHIFT_CASE) + "\n" + json.dumps(REPLY_CASE) + "\n")
    lifecycle = tmp_path / "lifecycle.jsonl"
    lifecycle.write_text(json.dumps(LIFECYCLE_CASE) + "\n")
    return [str(audit), str(lifecycle)]


@pytest.mark.evaluation
def test_it_compares_backends_side_by_side(stub, sets):
    result = evaluate(stub, "--compare", "rules", "openai:model-a", "openai:model-b", *sets)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["metric", "rules", "openai:model-a", "openai:model-b"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:] if line.strip()}
    # model-b's wrong label cannot replace the reader's bucket: the disagreement
    # sends the reply to a person, which the reply's label did not expect.
    assert rows["bucket_accuracy"][:3] == ["100.0%", "100.0%", "100.0%"]
    assert rows["hitl_rate"][:3] == ["0.0%", "0.0%", "100.0%"]
    assert rows["reply_accuracy"][:3] == ["100.0%", "100.0%", "0.0%"]
    assert rows["lifecycle_accuracy"][:3] == ["100.0%", "100.0%", "0.0%"]
    # Per case: the rules make none; each model is asked for the free-text shift,
    # the reply and the lifecycle reply.
    assert rows["model_calls_per_case"][:3] == ["0.00", "1.00", "1.00"]
    # Single calls' latency: none on the rules, a figure on each model.
    assert rows["model_call_p50_ms"][0] == "-" and rows["model_call_p50_ms"][1].isdigit()
    assert rows["tokens_per_case"][:3] == ["0.00", "120.00", "320.00"]
    assert rows["faithfulness_rate"][:2] == ["100.0%", "100.0%"]
    assert float(rows["faithfulness_rate"][2].rstrip("%")) < 100
    assert "unfaithful  openai:model-b  free-text (shift reasoning): 99.5" in result.stdout
    assert {model for model, _ in stub.calls} == {"model-a", "model-b"}


@pytest.mark.evaluation
def test_a_comparison_whose_model_side_fell_back_fails_and_says_so(stub, sets):
    result = evaluate(stub, "--compare", "rules", "openai:model-down", *sets)
    assert result.returncode != 0
    assert "the comparison is not of the models: openai:model-down: 3 failed model calls" in (
        result.stderr
    )
    rows = {
        line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()[1:] if line.strip()
    }
    assert rows["model_errors"][:2] == ["0", "3"]


@pytest.mark.evaluation
def test_it_prints_one_json_document_per_backend_and_a_judge_scores_clarity(stub, sets):
    result = evaluate(
        stub, "--compare", "rules", "openai:model-a", *sets, "--json", EVAL_JUDGE_MODEL="judge-1"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert list(document["backends"]) == ["rules", "openai:model-a"]
    model_a = document["backends"]["openai:model-a"]
    assert model_a["metrics"]["clarity_mean"] == 4.0
    assert model_a["cases"][0]["usage"]["tokens_in"] == 100
    assert ("judge-1", "ClarityScore") in stub.calls
    # The judge's own calls are not counted against the backend it judges.
    assert model_a["metrics"]["model_calls_per_case"] == 1.0


@pytest.mark.django_db
def test_it_refuses_an_unknown_backend_or_no_files(tmp_path, settings):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(REPLY_CASE) + "\n")
    with pytest.raises(CommandError, match="a backend is rules, openai or openai:MODEL"):
        call_command("evaluate", "--compare", "rules", "openai:", str(path))
    with pytest.raises(CommandError, match="at least one evaluation file"):
        call_command("evaluate", "--compare", "rules")
    settings.OPENAI_API_KEY = ""
    with pytest.raises(CommandError, match="openai backends need OPENAI_API_KEY"):
        call_command("evaluate", "--compare", "rules", "openai:x", str(path))
