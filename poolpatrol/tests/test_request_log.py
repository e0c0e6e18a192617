import json
import logging

import pytest

from poolpatrol.logcontext import ContextFilter, json_formatter, log_context

pytestmark = pytest.mark.django_db


def test_it_echoes_a_fresh_request_id_in_the_response(client):
    response = client.get("/health")
    request_id = response["X-Request-ID"]
    assert len(request_id) == 32
    assert client.get("/health")["X-Request-ID"] != request_id


def test_it_keeps_a_well_formed_incoming_request_id(client):
    response = client.get("/health", headers={"X-Request-ID": "lb-7f3a9c1e-0001"})
    assert response["X-Request-ID"] == "lb-7f3a9c1e-0001"


def test_it_replaces_an_incoming_id_that_is_not_an_id(client):
    response = client.get("/health", headers={"X-Request-ID": "evil\nline"})
    assert response["X-Request-ID"] != "evil\nline"
    assert len(response["X-Request-ID"]) == 32


def test_it_logs_one_line_per_request_with_its_id(client, caplog):
    caplog.set_level(logging.INFO, logger="poolpatrol.request")
    response = client.get("/health?probe=1")
    lines = [r for r in caplog.records if r.name == "poolpatrol.request"]
    assert len(lines) == 1
    record = lines[0]
    assert record.getMessage().startswith("GET /health?probe=1 200 ")
    assert record.status == 200
    assert record.method == "GET"
    assert record.request_id == response["X-Request-ID"]


def make_record(message: str) -> logging.LogRecord:
    record = logging.LogRecord("agents.task", logging.INFO, __file__, 1, message, None, None)
    ContextFilter().filter(record)
    return record


def test_it_stamps_task_logs_with_the_case_and_vanpool():
    with log_context(case_id="CASE-0A1B2C3D", vanpool_id="VP-101"):
        record = make_record("audit finished")
    assert record.case_id == "CASE-0A1B2C3D"
    assert record.context == "[case_id=CASE-0A1B2C3D] [vanpool_id=VP-101] "


def test_it_forgets_the_context_after_the_block():
    with log_context(case_id="CASE-0A1B2C3D"):
        pass
    assert make_record("later").context == ""


def test_it_writes_json_lines_with_the_context_as_fields():
    with log_context(request_id="abc123abc123", vanpool_id="VP-101"):
        record = make_record("audit finished")
    line = json.loads(json_formatter(fmt="%(levelname)s %(name)s %(message)s").format(record))
    assert line["message"] == "audit finished"
    assert line["vanpool_id"] == "VP-101"
    assert line["request_id"] == "abc123abc123"
    assert "context" not in line
