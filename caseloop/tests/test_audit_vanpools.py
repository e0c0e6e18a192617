"""audit_vanpools, evaluate and the audit tasks, as an operator runs them."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django_q.models import Schedule

from agents.models import AgentRun
from caseloop import audits as case_manager
from caseloop.tasks import audit_all_vanpools_task, audit_vanpool_task
from cases.models import Case, Verification
from poolpatrol.queue import enqueue_audit
from tests.factories import EmployeeFactory, RiderFactory, ShiftFactory, VanpoolFactory

ROOT = Path(__file__).resolve().parents[2]
EVAL = ROOT / "evals" / "data"
WEEKDAYS = [
    {"day": d, "start": "07:00", "end": "16:00"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
]


def van(home_zip: str = "94587", **fields):
    vanpool = VanpoolFactory(schedule=WEEKDAYS, **fields)
    shift = ShiftFactory(schedule=WEEKDAYS)
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(home_zip=home_zip, shift=shift))
    return vanpool


def audit(*args: str) -> str:
    out = io.StringIO()
    call_command("audit_vanpools", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def summary(output: str) -> dict[str, str]:
    rows = [line.rsplit(None, 1) for line in output.splitlines() if line.strip()]
    return {label.strip(): value for label, value in rows}


@pytest.mark.django_db
def test_it_audits_named_vanpools_and_prints_a_summary():
    clean, far = van(), van(home_zip="90026")
    table = summary(audit(clean.vanpool_id, far.vanpool_id, "--date", "2026-11-23"))
    assert table["audited"] == "2"
    assert table["passed"] == "1"
    assert table["failed: location_mismatch"] == "1"
    assert table["cases opened"] == "1"
    assert table["model calls"] == "0"


@pytest.mark.django_db
def test_it_audits_a_site_or_everything():
    van(work_site="Fremont Campus")
    van(work_site="Andover DC")
    assert summary(audit("--site", "andover dc"))["audited"] == "1"
    assert summary(audit("--all"))["audited"] == "2"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "name vanpool IDs, or use --site SITE or --all"),
        (("VP-404",), "no such vanpool: VP-404; nothing was audited"),
        (("--all", "VP-1"), "--all audits every vanpool"),
        (("--site", "Mars"), "no vanpools at site 'Mars'"),
        (("--all", "--date", "23/11/2026"), "is not a date"),
        (("--all", "--async", "--date", "2026-11-23"), "cannot be combined"),
    ],
)
def test_it_refuses_bad_arguments_and_audits_nothing(args, message):
    van()
    with pytest.raises(CommandError, match=message):
        audit(*args)
    assert not Verification.objects.exists()


@pytest.mark.django_db
def test_it_exits_non_zero_when_an_audit_errors_but_audits_the_rest(monkeypatch):
    good, bad = van(), van()
    real = case_manager.audit_preloaded

    def flaky(facts, **kwargs):
        if facts.vanpool_id == bad.vanpool_id:
            raise RuntimeError("disk on fire")
        return real(facts, **kwargs)

    monkeypatch.setattr(case_manager, "audit_preloaded", flaky)
    with pytest.raises(CommandError, match="1 of 2 audits failed"):
        audit("--all")
    assert Verification.objects.filter(vanpool=good).count() == 2


@pytest.mark.django_db(transaction=True)
def test_it_queues_audits_that_run_on_the_task_queue():
    far = van(home_zip="90026")
    assert "queued 1 audits" in audit(far.vanpool_id, "--async")
    # Tests run django-q2 in sync mode: the task ran when the queue got it.
    assert Case.objects.get().vanpool == far


@pytest.mark.django_db
def test_it_enqueues_only_once_the_transaction_commits(django_capture_on_commit_callbacks):
    far = van(home_zip="90026")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        enqueue_audit(far.vanpool_id)
    assert not Case.objects.exists()
    assert len(callbacks) == 1


@pytest.mark.django_db
def test_it_changes_nothing_when_a_task_is_delivered_twice():
    far = van(home_zip="90026")
    first = audit_vanpool_task(far.vanpool_id)
    rows = (Case.objects.count(), Verification.objects.count(), AgentRun.objects.count())
    second = audit_vanpool_task(far.vanpool_id)
    assert (first["status"], second["status"]) == ("failed", "unchanged")
    assert (Case.objects.count(), Verification.objects.count(), AgentRun.objects.count()) == rows


@pytest.mark.django_db
def test_it_runs_the_periodic_full_audit():
    van(), van(home_zip="90026"), van(status="suspended")
    assert audit_all_vanpools_task() == {"passed": 1, "failed": 1}


@pytest.mark.django_db
def test_it_schedules_a_nightly_full_audit():
    schedule = Schedule.objects.get(func="caseloop.tasks.audit_all_vanpools_task")
    assert schedule.schedule_type == Schedule.DAILY
    assert schedule.repeats == -1


def run_manage(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env | {"LOG_LEVEL": "warning"},
        capture_output=True,
        text=True,
        timeout=300,
    )


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
        ('{"kind": "parking", "id": "x"}\n', "line 1: kind must be one of location, shift"),
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


def test_it_benchmarks_a_small_program_in_a_scratch_database(tmp_path):
    result = run_manage("bench_audit", "--vanpools", "30", "--riders-per-vanpool", "3")
    assert result.returncode == 0, result.stderr
    assert "audited: 30 in" in result.stdout
    assert "model calls: 0" in result.stdout


@pytest.mark.django_db
def test_it_refuses_the_openai_backend_without_a_key(settings):
    settings.OPENAI_API_KEY = ""
    with pytest.raises(CommandError, match="needs OPENAI_API_KEY"):
        call_command("evaluate", str(EVAL / "shift" / "core.jsonl"), "--backend", "openai")


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
                "shift": {"name": "HR text", "schedule_text": "weekdays, seven till four"},
            }
        ],
        "expected": {"verdict": "pass", "flagged": []},
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
    assert report["cases"][0]["got"] == {"verdict": "pass", "flagged": []}
