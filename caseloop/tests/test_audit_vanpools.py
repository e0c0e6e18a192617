"""audit_vanpools and the audit tasks, as an operator runs them."""

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django_q.models import Schedule

from agents.models import AgentRun
from audit.decide import ALL_CHECKS
from caseloop import audits as case_manager
from caseloop.fanout import run_audit_chunk, start_audit_run
from caseloop.models import AuditChunk
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
    real = case_manager._decide

    def flaky(facts, *args):
        if facts.vanpool_id == bad.vanpool_id:
            raise RuntimeError("disk on fire")
        return real(facts, *args)

    monkeypatch.setattr(case_manager, "_decide", flaky)
    with pytest.raises(CommandError, match="1 of 2 audits failed"):
        audit("--all")
    assert Verification.objects.filter(vanpool=good).count() == len(ALL_CHECKS)


@pytest.mark.django_db(transaction=True)
def test_it_queues_the_audit_in_chunks_that_run_on_the_task_queue(settings):
    settings.AUDIT_CHUNK_SIZE = 2
    far, near, other = van(home_zip="90026"), van(), van()
    out = audit("--all", "--async", "--wait")
    assert "3 vanpools in 2 chunks queued" in out
    # Tests run django-q2 in sync mode: each chunk ran when the queue got it.
    assert out.splitlines()[-1].endswith("2 of 2 chunks done, 0 failed, 0 running, 0 waiting")
    assert Case.objects.get().vanpool == far
    assert Verification.objects.filter(vanpool__in=[near, other]).count() == 2 * len(ALL_CHECKS)


@pytest.mark.django_db
def test_progress_of_a_run_nobody_queued_is_a_clear_error():
    with pytest.raises(CommandError, match="no audit run has been queued yet"):
        audit("--progress")
    with pytest.raises(CommandError, match="no audit run 'x7'"):
        audit("--progress", "x7")


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
def test_the_nightly_full_audit_fans_out_every_active_vanpool_in_chunks(run):
    van(), van(home_zip="90026"), van(status="suspended")
    queued = run(audit_all_vanpools_task)
    chunk = AuditChunk.objects.get(run_id=queued["run"])
    assert queued["vanpools"] == 2
    assert (chunk.status, chunk.outcomes) == ("done", {"passed": 1, "failed": 1})


@pytest.mark.django_db
def test_a_chunk_delivered_twice_is_audited_once(run):
    far = van(home_zip="90026")
    audit_run = start_audit_run([far.vanpool_id], requested_by="test")
    chunk = AuditChunk.objects.get(run=audit_run)
    first = run(run_audit_chunk, chunk.pk)
    rows = (Case.objects.count(), Verification.objects.count(), AgentRun.objects.count())
    assert run(run_audit_chunk, chunk.pk) == "skipped"
    assert "failed" in first
    assert (Case.objects.count(), Verification.objects.count(), AgentRun.objects.count()) == rows


@pytest.mark.django_db
def test_a_chunk_redelivered_after_its_worker_died_finishes_without_doubling(run):
    far, near = van(home_zip="90026"), van()
    audit_run = start_audit_run([far.vanpool_id, near.vanpool_id], requested_by="test")
    chunk = AuditChunk.objects.get(run=audit_run)
    audit_vanpool_task(far.vanpool_id)  # the dead worker got this far
    AuditChunk.objects.filter(pk=chunk.pk).update(status="running", attempts=1)

    run(run_audit_chunk, chunk.pk)

    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == ("done", 2)
    assert chunk.outcomes == {"unchanged": 1, "passed": 1}
    assert Case.objects.count() == 1


@pytest.mark.django_db
def test_it_schedules_a_nightly_full_audit():
    schedule = Schedule.objects.get(func="caseloop.tasks.audit_all_vanpools_task")
    assert schedule.schedule_type == Schedule.DAILY
    assert schedule.repeats == -1


@pytest.mark.django_db(transaction=True)
def test_a_failed_chunk_is_listed_and_queued_again_by_retry_failed(monkeypatch, settings):
    settings.AUDIT_CHUNK_SIZE = 1
    good, bad = van(), van(home_zip="90026")
    real = case_manager._decide

    def flaky(facts, *args):
        if facts.vanpool_id == bad.vanpool_id:
            raise RuntimeError("disk on fire")
        return real(facts, *args)

    monkeypatch.setattr(case_manager, "_decide", flaky)
    with pytest.raises(CommandError, match=r"1 of 2 chunks failed; .*--retry-failed"):
        audit("--all", "--async", "--wait")
    monkeypatch.undo()

    out = audit("--retry-failed", "latest", "--wait")

    assert "1 failed chunks queued" in out
    assert out.splitlines()[-1].endswith("2 of 2 chunks done, 0 failed, 0 running, 0 waiting")
    assert Case.objects.get().vanpool == bad
    # Not audited twice: one verification per check.
    assert Verification.objects.filter(vanpool=good).count() == len(ALL_CHECKS)
