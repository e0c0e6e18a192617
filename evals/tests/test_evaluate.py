"""evaluate, as an operator runs it: files in, a report out, a non-zero exit below target."""

import json
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from evals.harness import EvalFileError, read_cases
from tests.qcluster_support import ROOT, run_manage

EVAL = ROOT / "evals" / "data"


@pytest.mark.evaluation
def test_it_evaluates_the_shipped_sets_at_target():
    shift, location = EVAL / "shift" / "core.jsonl", EVAL / "location" / "core.jsonl"
    result = run_manage("evaluate", str(shift), str(location), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["metrics"]["verdict_accuracy"] >= 0.98
    assert report["metrics"]["wrong_pass_on_conflict"] == 0
    assert report["metrics"]["cases"] >= 100
    first = report["cases"][0]
    assert set(first) == {"id", "kind", "expected", "got", "correct"}


@pytest.mark.evaluation
def test_it_exits_non_zero_below_target(tmp_path):
    wrong = {
        "kind": "location",
        "id": "mislabelled",
        "vanpool": {"pickup_zip": "94538"},
        "riders": [{"employee_id": "E1", "home_zip": "90026"}],
        "expected": {"verdict": "pass", "flagged": []},
    }
    path = tmp_path / "wrong.jsonl"
    path.write_text(json.dumps(wrong) + "\n")
    result = run_manage("evaluate", str(path))
    assert result.returncode != 0
    assert "wrong  mislabelled: expected pass [], got fail ['E1']" in result.stdout
    assert "below target: verdict_accuracy" in result.stderr


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n", "line 1: Expecting value"),
        ('{"kind": "payroll", "id": "x"}\n', "line 1: kind must be one of location, shift"),
        (
            '{"kind": "location", "id": "x", "riders": [], "expected": {"verdict": "maybe"}}\n',
            "line 1: expected.verdict must be pass, fail or unknown",
        ),
        ("\n", "no cases"),
        (
            '{"kind": "location", "id": "x", "vanpool": {"pickup_zip": "94538"}, "riders": '
            '[{"employee_id": "E1", "home": {"lat": "37.5", "lng": "north"}}], '
            '"expected": {"verdict": "pass"}}\n',
            "line 1: E1: home: 'north' is not a coordinate",
        ),
        (
            '{"kind": "location", "id": "x", "vanpool": {"pickup": {"lat": 37.5}}, "riders": '
            '[{"employee_id": "E1", "home_zip": "94538"}], "expected": {"verdict": "pass"}}\n',
            "line 1: vanpool.pickup must be an object with lat and lng",
        ),
    ],
)
def test_it_says_which_line_of_an_evaluation_file_is_wrong(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        call_command("evaluate", str(path))


@pytest.mark.evaluation
def test_it_reads_coordinates_written_as_text_in_an_evaluation_file(tmp_path):
    case = {
        "kind": "location",
        "id": "text-coordinates",
        "vanpool": {"pickup": {"lat": "47.6423", "lng": "-122.1368"}},
        "riders": [
            {"employee_id": "E1", "home": {"lat": "47.6740° N", "lng": "122.1215° W"}},
            {"employee_id": "E2", "home_zip": "98052"},
        ],
        "expected": {"verdict": "pass", "flagged": []},
    }
    path = tmp_path / "text.jsonl"
    path.write_text(json.dumps(case) + "\n")
    result = run_manage("evaluate", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["cases"][0]["correct"] is True


@pytest.mark.django_db
def test_it_refuses_the_openai_backend_without_a_key(settings):
    settings.OPENAI_API_KEY = ""
    with pytest.raises(CommandError, match="needs OPENAI_API_KEY"):
        call_command("evaluate", str(EVAL / "shift" / "core.jsonl"), "--backend", "openai")


@pytest.mark.evaluation
def test_it_evaluates_on_the_openai_backend_against_a_compatible_server(tmp_path):
    from tests.llm_server import FakeLLMServer, Scripted, completion

    case = {
        "kind": "shift",
        "id": "free-text",
        "audit_date": "2026-11-23",
        "vanpool": {
            "schedule": [
                {"day": d, "start": "07:00", "end": "16:00"}
                for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
            ]
        },
        "riders": [
            {
                "employee_id": "E1",
                # Free text no reader can settle: the model's "pass" is only a proposal.
                "shift": {"name": "Flex", "schedule_text": "varies week to week, see supervisor"},
            }
        ],
        "expected": {"verdict": "unknown", "flagged": ["E1"]},
    }
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(case) + "\n")
    answer = {
        "check": "shift",
        "verdict": "pass",
        "confidence": 4,
        "reasoning": "Weekdays 7-16.",
        "riders": [{"employee_id": "EVAL0-E1", "verdict": "pass", "reason": "7 till 4"}],
    }
    server = FakeLLMServer().start()
    try:
        server.reply(Scripted(body=completion(json.dumps(answer))))
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        result = subprocess.run(
            [sys.executable, "manage.py", "evaluate", str(path), "--backend", "openai", "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env=env
            | {
                "OPENAI_API_KEY": "sk-test",
                "OPENAI_BASE_URL": server.base_url,
                "LOG_LEVEL": "warning",
            },
        )
    finally:
        server.stop()
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["metrics"]["model_calls_per_case"] == 1.0
    # The model's reading of free text the rules cannot read is a proposal for a
    # person, never an automatic verdict.
    assert report["cases"][0]["got"]["verdict"] == "unknown"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            {"kind": "parking", "riders": [{"employee_id": "E1"}]},
            "audit_date: None is not a date (YYYY-MM-DD)",
        ),
        (
            {"kind": "ridership", "audit_date": "2026-11-23", "riders": [{"employee_id": "E1"}],
             "expected": {"verdict": "pass", "riders": {}}},
            "expected.riders must give every rider's verdict",
        ),
        (
            {"kind": "ridership", "audit_date": "2026-11-23", "riders": [{"employee_id": "E1"}],
             "expected": {"verdict": "pass", "riders": {"E1": "fail"}}},
            "expected.verdict does not follow from expected.riders",
        ),
        (
            {"kind": "ridership", "audit_date": "2026-11-23", "riders": [],
             "rules": {"min_share": 0.8, "min_days_per_week": 3},
             "expected": {"verdict": "pass", "riders": {}}},
            "rules: give min_share or min_days_per_week, not both",
        ),
        (
            {"kind": "ridership", "audit_date": "2026-11-23", "riders": [],
             "trips": {"rows": [], "covers": "2026-11-22..2026-11-01"},
             "expected": {"verdict": "pass", "riders": {}}},
            "trips.covers: ends before it starts",
        ),
        (
            {"kind": "ridership", "audit_date": "2026-11-23", "riders": [],
             "trips": {"rows": [{"date": "2026-11-20", "driver": "E1", "passengers": []}]},
             "expected": {"verdict": "pass", "riders": {}}},
            "trips.rows[1]: unknown field 'driver' (the fields are date, direction, driver_id, "
            "miles, passenger_count, passengers, trip_id, vanpool_id)",
        ),
        (
            {"kind": "ridership", "audit_date": "2026-11-23", "riders": [],
             "badge_swipes": {"rows": [{"employee_id": "E1", "date": "2026-11-20"}]},
             "expected": {"verdict": "pass", "riders": {}}},
            "badge_swipes.rows[1]: give swiped_at, or date and time",
        ),
        (
            {"kind": "vanpool_rules", "month": "October", "expected": {"verdict": "pass"}},
            "month must be YYYY-MM",
        ),
        (
            {"kind": "vanpool_rules", "month": "2026-10",
             "expected": {"verdict": "pass", "rules": {"seats": "pass"}}},
            "expected.rules must give seats, occupancy, commute",
        ),
        (
            {"kind": "parking", "audit_date": "2026-11-23", "riders": [], "permits": {},
             "expected": {"verdict": "pass", "riders": {}}},
            "permits must be a list (or null: no permit data)",
        ),
    ],
)  # fmt: skip
def test_a_specialist_case_in_the_wrong_shape_names_its_field(tmp_path, case, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "x"} | case) + "\n", encoding="utf-8")
    with pytest.raises(EvalFileError) as error:
        read_cases(path)
    assert str(error.value) == f"line 1: {message}"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("swipe", "verdict"),
    [
        ({"swiped_at": "2026-11-20T07:10:00"}, "pass"),
        ({"date": "2026-11-20", "time": "07:10"}, "pass"),
        ({"date": "2026-11-20", "time": "07:45"}, "fail"),  # 45 minutes from the van: no ride
    ],
)
def test_a_swipe_is_read_as_the_import_reads_it_whole_or_as_date_and_time(swipe, verdict):
    from evals.harness.specialists import run_specialist_case

    case = {
        "id": "swipe-shapes",
        "kind": "ridership",
        "audit_date": "2026-11-23",
        "rules": {"min_workdays": 1},  # the one day judged, not passed as too few
        "vanpool": {"vanpool_id": "VP-1", "work_site": "Plant 4", "schedule": [
            {"day": "Fri", "start": "07:00", "end": "15:30"}]},
        "riders": [{"employee_id": "E1", "shift": {"schedule": [
            {"day": "Fri", "start": "07:00", "end": "15:30"}]}}],
        "badge_swipes": {"rows": [{"employee_id": "E1", "direction": "in"} | swipe],
                         "covers": "2026-11-20..2026-11-20"},
        "expected": {"verdict": verdict, "riders": {"E1": verdict}},
    }  # fmt: skip

    judged = run_specialist_case(case, 1)

    assert judged.got == {"verdict": verdict, "riders": {"E1": verdict}}
