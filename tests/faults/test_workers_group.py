"""Faults 30, 33–35: racing reviewers, workers that die mid-task, and a cluster that was down.

- 30: ten coordinators approve one cancellation at the same moment, from real
  threads on real connections: one wins, nine get 409, one seat, one email.
- 33: an approval whose process dies after the seat was changed rolls back
  whole; approving again afterwards succeeds, once.
- 34: an audit that dies after it started writing leaves no partial case; the
  redelivered task produces what a clean run produces, and a third changes nothing.
- 35: the sweep run two days late handles each overdue case once, sends no
  reminder whose moment passed, and changes nothing when run again; django-q2
  times a task out before it would hand it to a second worker.
"""

import datetime as dt
import subprocess
import sys
import threading

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core import mail
from django.db import connection
from rest_framework.test import APIClient

from agents.models import AgentRun
from caseloop import audits, decisions
from caseloop.kinds import cancel_membership
from caseloop.tasks import audit_vanpool_task, process_timeouts_task
from cases.models import Case, CaseEvent, CaseReview, PendingAction, Verification
from outreach.models import Message
from tests.factories import EmployeeFactory, RiderFactory, UserFactory, VanpoolFactory
from tests.faults.scenes import FAR_ZIP, NEAR_ZIP, Scene, failing_case, outbound_to, pre_cancel
from tests.qcluster_support import ROOT, process_env
from vanpools.models import Rider, Vanpool

pytestmark = pytest.mark.django_db

RACERS = 10


class WorkerKilled(BaseException):
    """The process died here: not an error the code could catch and carry on from."""


def seat_cancelled_events(scene: Scene) -> int:
    note = f"seat of {scene.far.employee_id} on {scene.vanpool.vanpool_id} cancelled"
    return CaseEvent.objects.filter(case=scene.case, note=note).count()


# --- 30: ten coordinators, one cancellation ------------------------------------------------


def coordinators(count: int) -> list[User]:
    """Staff in the Coordinators group, as the migrations make it.

    A transactional test starts from what the previous one's flush left: the
    group may be gone (post_migrate brings back the permissions, not the group).
    """
    group, created = Group.objects.get_or_create(name="Coordinators")
    if created:
        views = Permission.objects.filter(
            content_type__app_label__in=("vanpools", "cases", "outreach", "agents"),
            codename__startswith="view_",
        )
        decide = Permission.objects.filter(
            content_type__app_label="cases", codename="decide_pendingaction"
        )
        group.permissions.set([*views, *decide])
    return [
        UserFactory(username=f"coordinator{n}", is_staff=True, groups=["Coordinators"])
        for n in range(count)
    ]


@pytest.mark.django_db(transaction=True)
def test_fault_30_ten_coordinators_approving_at_once_cancel_one_seat_once(run, _frozen_time):
    # transaction=True: every write commits and its on-commit tasks run for real
    # (django-q2 is sync in tests), as in production.
    scene = failing_case(run)
    action = pre_cancel(scene, run, _frozen_time)
    assert CaseReview.objects.get(case=scene.case).passed  # no override needed
    users = coordinators(RACERS)
    sent_before = len(mail.outbox)
    barrier = threading.Barrier(RACERS)
    answers: dict[str, tuple[int, dict]] = {}
    errors: list[BaseException] = []

    def approve(user: User) -> None:
        try:
            client = APIClient()
            client.force_authenticate(user)
            barrier.wait(timeout=10)
            response = client.post(f"/api/pending-actions/{action.pk}/approve", {}, format="json")
            answers[user.username] = (response.status_code, response.json())
        except BaseException as exc:  # reported below: a thread's failure must fail the test
            errors.append(exc)
        finally:
            connection.close()

    racers = [threading.Thread(target=approve, args=(user,)) for user in users]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(timeout=60)

    assert errors == []
    codes = sorted(code for code, _ in answers.values())
    assert codes == [200] + [409] * (RACERS - 1)
    (winner,) = [name for name, (code, _) in answers.items() if code == 200]
    refusals = [body["error"]["message"] for code, body in answers.values() if code == 409]
    assert refusals == ["this action is already approved"] * (RACERS - 1)
    action.refresh_from_db()
    assert (action.status, action.decided_by.username) == ("approved", winner)
    cancelled = Rider.objects.filter(status=Rider.Status.CANCELLED)
    assert [(seat.pk, seat.cancelled_by.username) for seat in cancelled] == [
        (action.rider_id, winner)
    ]
    email = Message.objects.get(template="cancelled")
    assert (email.employee, email.status) == (scene.far, Message.Status.SENT)
    assert len(mail.outbox) == sent_before + 1
    assert seat_cancelled_events(scene) == 1
    closes = CaseEvent.objects.filter(case=scene.case, to_status=Case.Status.CLOSED)
    assert closes.count() == 1


# --- 33: the approval's process dies after the seat was changed -----------------------------


def test_fault_33_an_approval_that_dies_part_way_leaves_nothing_half_done(
    run, _frozen_time, coordinator, monkeypatch, django_capture_on_commit_callbacks
):
    scene = failing_case(run)
    action = pre_cancel(scene, run, _frozen_time)
    seat = Rider.objects.get(pk=action.rider_id)
    seen_at_death: list[str] = []

    def die(*args: object, **kwargs: object) -> None:
        seen_at_death.append(Rider.objects.get(pk=seat.pk).status)
        raise WorkerKilled("SIGKILL while queueing the email")

    monkeypatch.setattr(cancel_membership, "queue_template", die)
    with django_capture_on_commit_callbacks() as queued, pytest.raises(WorkerKilled):
        decisions.approve(action, by=coordinator)

    assert seen_at_death == [Rider.Status.CANCELLED]  # it died after changing the seat
    assert queued == []  # no send, no lesson: nothing was handed to the workers
    action.refresh_from_db()
    assert (action.status, action.decided_by, action.executed_at) == ("pending", None, None)
    seat.refresh_from_db()
    assert (seat.status, seat.cancelled_at, seat.cancelled_by) == ("active", None, None)
    assert outbound_to(scene.far, "cancelled") == 0
    assert seat_cancelled_events(scene) == 0
    scene.case.refresh_from_db()
    assert scene.case.status == Case.Status.PRE_CANCEL

    monkeypatch.undo()
    decided = run(decisions.approve, action, by=coordinator)

    assert decided.status == "approved"
    seat.refresh_from_db()
    assert seat.status == Rider.Status.CANCELLED
    assert outbound_to(scene.far, "cancelled") == 1
    assert seat_cancelled_events(scene) == 1
    with pytest.raises(decisions.AlreadyDecided):
        run(decisions.approve, action, by=coordinator)
    assert outbound_to(scene.far, "cancelled") == 1
    assert seat_cancelled_events(scene) == 1


# --- 34: the audit's process dies after it started writing ---------------------------------


def two_rider_van() -> Vanpool:
    vanpool = VanpoolFactory()
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Nadia", home_zip=NEAR_ZIP))
    RiderFactory(vanpool=vanpool, employee=EmployeeFactory(first_name="Farid", home_zip=FAR_ZIP))
    return vanpool


def audit_state(vanpool: Vanpool) -> dict[str, object]:
    """What an audit leaves for one vanpool, in terms that do not depend on its IDs."""
    cases = Case.objects.filter(vanpool=vanpool)
    return {
        "cases": [(c.status, c.meta["reason"], c.reaudit_count) for c in cases],
        "verifications": sorted(
            Verification.objects.filter(vanpool=vanpool).values_list(
                "check_type", "verdict", "case__status"
            )
        ),
        "trail": list(
            CaseEvent.objects.filter(case__vanpool=vanpool)
            .order_by("id")
            .values_list("from_status", "to_status", "actor_agent")
        ),
        "emails": sorted(
            Message.objects.filter(thread__case__vanpool=vanpool).values_list(
                "employee__first_name", "direction", "template", "status"
            )
        ),
        "agent_runs": sorted(
            AgentRun.objects.filter(vanpool=vanpool).values_list("agent", "case__status")
        ),
        "actions": PendingAction.objects.filter(case__vanpool=vanpool).count(),
    }


NEVER_AUDITED = {
    "cases": [],
    "verifications": [],
    "trail": [],
    "emails": [],
    "agent_runs": [],
    "actions": 0,
}


def test_fault_34_an_audit_that_dies_part_way_leaves_no_partial_case_and_reruns_cleanly(
    run, monkeypatch, django_capture_on_commit_callbacks
):
    crashed, clean = two_rider_van(), two_rider_van()
    seen_at_death: list[tuple[int, int]] = []

    def die_before_the_traces(trees):
        # The case and its verification rows are written; the trace rows are next.
        written = Verification.objects.filter(vanpool=crashed)
        seen_at_death.append((Case.objects.filter(vanpool=crashed).count(), written.count()))
        raise WorkerKilled("SIGKILL between the verification rows and the traces")

    monkeypatch.setattr(audits, "save_trace_trees", die_before_the_traces)
    with django_capture_on_commit_callbacks() as queued, pytest.raises(WorkerKilled):
        audit_vanpool_task(crashed.vanpool_id)

    assert seen_at_death == [(1, len(audits.ALL_CHECKS))]
    assert queued == []  # no outreach was handed to the workers
    assert audit_state(crashed) == NEVER_AUDITED

    monkeypatch.undo()
    retried = run(audit_vanpool_task, crashed.vanpool_id)
    run(audit_vanpool_task, clean.vanpool_id)

    assert retried["status"] == "failed"
    assert audit_state(crashed) == audit_state(clean)
    case = Case.objects.get(vanpool=crashed)
    assert case.status == Case.Status.PENDING_REPLY
    assert Verification.objects.filter(vanpool=crashed, case=case).count() == len(audits.ALL_CHECKS)
    first_letters = Message.objects.filter(idempotency_key__startswith=f"{case.case_id}:initial:")
    assert list(first_letters.values_list("employee__first_name", flat=True)) == ["Farid"]

    rows = [m.objects.count() for m in (Case, CaseEvent, Verification, AgentRun, Message)]
    third = run(audit_vanpool_task, crashed.vanpool_id)

    assert third["status"] == "unchanged"
    assert audit_state(crashed) == audit_state(clean)
    assert [m.objects.count() for m in (Case, CaseEvent, Verification, AgentRun, Message)] == rows


# --- 35: the cluster was down for two days --------------------------------------------------


def sweep_state() -> dict[str, object]:
    """Everything the sweep may write."""
    return {
        "cases": sorted(
            Case.objects.values_list("case_id", "status", "reaudit_count", "reply_deadline")
        ),
        "messages": sorted(Message.objects.values_list("idempotency_key", "status")),
        "actions": sorted(PendingAction.objects.values_list("pk", "kind", "status")),
        "events": CaseEvent.objects.count(),
        "reviews": CaseReview.objects.count(),
        "verifications": Verification.objects.count(),
        "agent_runs": AgentRun.objects.count(),
    }


def reminders(scene: Scene) -> int:
    return outbound_to(scene.far, "reminder")


def test_fault_35_after_two_days_without_workers_the_sweep_handles_each_overdue_case_once(
    run, _frozen_time, settings
):
    settings.REPLY_WAIT_DAYS, settings.REMINDER_DAYS_BEFORE = 7, 2  # the defaults, pinned
    early = failing_case(run)  # deadline at 7d, its reminder due from 5d
    _frozen_time.shift(dt.timedelta(hours=12))
    late = failing_case(run)  # deadline at 7d12h, its reminder due from 5d12h
    _frozen_time.shift(dt.timedelta(days=1))
    waiting = failing_case(run)  # deadline at 8d12h, its reminder due from 6d12h
    _frozen_time.shift(dt.timedelta(days=3, hours=23, minutes=30))
    # 5d11h30m: the last sweep before the cluster goes down.
    assert run(process_timeouts_task)["reminders"] == 1
    assert (reminders(early), reminders(late), reminders(waiting)) == (1, 0, 0)

    # Two days later the cluster is back (7d12h30m): the first scheduled sweep runs.
    _frozen_time.shift(dt.timedelta(days=2, hours=1))
    counts = run(process_timeouts_task)

    assert (counts["timeouts"], counts["pre_cancel"], counts["resolved"]) == (2, 2, 0)
    # Late's reminder moment came and went during the outage: not sent late,
    # after its deadline. Waiting's deadline is still ahead: its one reminder goes now.
    assert counts["reminders"] == 1
    assert (reminders(early), reminders(late), reminders(waiting)) == (1, 0, 1)
    for scene in (early, late):
        scene.case.refresh_from_db()
        assert (scene.case.status, scene.case.reaudit_count) == (Case.Status.PRE_CANCEL, 1)
        timeouts = CaseEvent.objects.filter(case=scene.case, data__trigger="timeout")
        assert timeouts.count() == 1
        cancellations = PendingAction.objects.filter(case=scene.case, kind="cancel_membership")
        assert list(cancellations.values_list("rider__employee", "status")) == [
            (scene.far.pk, "pending")
        ]
        assert CaseReview.objects.filter(case=scene.case).count() == 1
    waiting.case.refresh_from_db()
    assert (waiting.case.status, waiting.case.reaudit_count) == (Case.Status.PENDING_REPLY, 0)

    before = sweep_state()
    again = run(process_timeouts_task)

    assert sweep_state() == before
    assert {key: value for key, value in again.items() if value} == {}


def test_fault_35_a_task_times_out_before_it_could_be_handed_to_a_second_worker(settings):
    # django-q2 gives a task to another worker once `retry` seconds pass without
    # an acknowledgement; the first worker is stopped at `timeout`.
    assert settings.Q_CLUSTER["timeout"] < settings.Q_CLUSTER["retry"]
    # Schedules missed while the cluster was down run once, not once per missed slot.
    assert settings.Q_CLUSTER["catch_up"] is False


@pytest.mark.parametrize(
    ("environment", "starts", "expected"),
    [
        ({"Q_TIMEOUT": "900"}, True, "900 960"),
        ({"Q_TIMEOUT": "600", "Q_RETRY": "600"}, False, "Q_RETRY=600 must be at least 601"),
    ],
)
@pytest.mark.slow_process
def test_fault_35_a_deployment_cannot_set_the_retry_at_or_below_the_timeout(
    tmp_path, environment, starts, expected
):
    code = (
        "from poolpatrol import settings as s; print(s.Q_CLUSTER['timeout'], s.Q_CLUSTER['retry'])"
    )
    started = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=process_env(tmp_path, **environment),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert expected in started.stdout + started.stderr
    assert (started.returncode == 0) is starts
