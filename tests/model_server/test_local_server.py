"""The model path against a real local server: wiring, not quality (make model-check).

`scripts/model_server.sh start` runs llama.cpp's llama-server with the smallest
packaged model and `make model-check` points these tests at it through
MODEL_SERVER_URL. A 135M-parameter model reads badly; what is checked is that
every call is made, parsed against its schema, traced with its tokens and
latency under the served model's own name and no price, that timeouts hold,
and that a server stopped mid-run is a visible wait, never a crash or an act.
Not part of `make test`: without a server these tests fail, they do not skip.
"""

import os
import subprocess
import time
from pathlib import Path

import pytest

from agents import llm
from agents.model_errors import ModelTimeout
from agents.models import AgentRun
from agents.tracing import RunTrace
from caseloop.audits import audit_vanpool
from caseloop.case_qa.answer import answer_question
from dashboard.queries import case_records
from outreach.replies.classify import (
    MODEL_UNAVAILABLE,
    ModelReplyLabel,
    classify_reply,
    model_request,
)
from tests.factories import EmployeeFactory, RiderFactory, ShiftFactory, VanpoolFactory

pytestmark = [pytest.mark.model_server, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[2]
WEEKDAYS = [
    {"day": d, "start": "07:00", "end": "15:30"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
]
UPDATE = "I moved to Hayward in May and updated my address in Workday."


@pytest.fixture
def local(settings):
    url = os.environ.get("MODEL_SERVER_URL")
    if not url:
        pytest.fail("no MODEL_SERVER_URL: run these with `make model-check`")
    settings.LLM_BACKEND = "openai"
    settings.OPENAI_BASE_URL = url
    settings.OPENAI_API_KEY = "local-no-key"
    settings.LLM_MODELS, settings.LLM_DEFAULT_MODEL = {}, ""  # the served model, by its name
    settings.LLM_TIMEOUT_SECONDS = 120
    settings.LLM_MAX_RETRIES = 0
    settings.LLM_MAX_TOKENS = 256  # wiring, not essays: keeps the stage's time bounded
    settings.LLM_OUTPUT_BOUNDS = True  # the default for a server of one's own
    llm.reset_breakers()
    llm._shared_client.cache_clear()
    yield url
    llm.reset_breakers()
    llm._shared_client.cache_clear()


def served_name(url: str) -> str:
    client = llm.get_backend()
    assert isinstance(client, llm.OpenAIClient)
    return client.served_model()


def test_a_reply_is_read_with_structured_output_and_traced(local):
    client = llm.get_backend()
    assert isinstance(client, llm.OpenAIClient)
    # The product's own request: the v2 prompt with labelled replies like this one.
    request = model_request(UPDATE, "Re: your seat", UPDATE)
    assert "<examples>" in request.user
    prompt, user = request.prompt, request.user
    call = client.structured("classifier", prompt.version, prompt.text, user, ModelReplyLabel)
    assert call.parsed.bucket in ("acknowledgment", "question", "update", "escalation")
    assert call.model == served_name(local) and call.model != "gpt-4.1-mini"
    assert call.tokens_in > 0 and call.tokens_out > 0 and call.latency_ms > 0
    assert call.cost_usd == 0  # a local model has no price unless one is configured
    assert client.bounded  # llama-server took the schema with maxLength and maxItems

    parent = RunTrace(agent="classifier", backend="openai", input={})
    result = classify_reply(UPDATE, "Re: your seat", trace=parent)
    assert parent.children and parent.children[0].tokens_in > 0
    # Whatever it read, the small model could only add caution to the reader's reading.
    assert result.bucket in ("update", "escalation")


def test_hr_text_the_rules_cannot_read_is_read_by_the_model_as_a_proposal(local):
    vanpool = VanpoolFactory(schedule=WEEKDAYS)
    flex = ShiftFactory(
        schedule=[], schedule_text="Mon to Fri, early or late depending on the week"
    )
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip="94587", shift=flex))

    outcome = audit_vanpool(vanpool.vanpool_id)

    run = AgentRun.objects.get(backend="openai", agent="shift")
    assert run.tokens_in > 0 and run.latency_ms > 0 and run.model == served_name(local), (
        f"the model call failed: {run.error!r} after {run.latency_ms} ms"
    )
    assert outcome.model_calls == 1
    assert outcome.status == "unknown"  # the model's reading goes to a person


def test_a_case_question_gets_an_answer_from_the_model_or_a_checked_fallback(local):
    vanpool = VanpoolFactory(schedule=WEEKDAYS)
    day = ShiftFactory(schedule=WEEKDAYS)
    far = RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip="90026", shift=day))
    outcome = audit_vanpool(vanpool.vanpool_id)
    records = case_records(outcome.case_id, None)
    assert records is not None

    answer = answer_question(records, f"Why was {far.employee.employee_id} flagged?")

    run = AgentRun.objects.get(agent="case_qa")
    assert run.backend == "openai" and run.model == served_name(local)
    assert run.tokens_in > 0 or run.error  # answered, or failed on the record
    # Whatever the small model wrote is checked against the case's records first.
    assert answer.sentences


def test_a_timeout_is_honoured(local, settings):
    settings.LLM_TIMEOUT_SECONDS = 0.05
    llm.reset_breakers()
    client = llm.get_backend()
    assert isinstance(client, llm.OpenAIClient)
    long_reply = " ".join([UPDATE] * 200)
    request = model_request(long_reply, "Re: your seat", long_reply)
    prompt, user = request.prompt, request.user
    started = time.monotonic()
    with pytest.raises(ModelTimeout):
        client.structured("classifier", prompt.version, prompt.text, user, ModelReplyLabel)
    assert time.monotonic() - started < 5


def script(*args: str) -> None:
    subprocess.run(
        ["bash", "scripts/model_server.sh", *args], cwd=ROOT, check=True, capture_output=True
    )


REPLIES, STOP_AT, START_AT = 100, 40, 60


def test_a_server_stopped_mid_run_makes_replies_wait_and_nothing_crashes(local):
    results = []
    try:
        for number in range(REPLIES):
            if number == STOP_AT:
                script("stop")
            if number == START_AT:
                script("start")
                llm.reset_breakers()
            results.append(classify_reply(f"{UPDATE} ({number})"))
    finally:
        script("start")  # leave it as the stage found it
    assert len(results) == REPLIES  # no crash
    down = results[STOP_AT:START_AT]
    assert all(r.failure == MODEL_UNAVAILABLE and r.hitl for r in down)  # a visible wait
    up = results[:STOP_AT] + results[START_AT:]
    assert not any(r.failure == MODEL_UNAVAILABLE for r in up)
