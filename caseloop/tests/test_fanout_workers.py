"""A full audit fanned out to two real qcluster workers gives what one process gives.

The workers are real ``manage.py qcluster`` processes on the test database,
through the configured broker: the ORM broker on SQLite, and Redis in CI's
PostgreSQL pass (``REDIS_URL``). A queue of the test's own keeps them off
any other work, and the scheduler is off in them.
"""

import json
import secrets
import time
from pathlib import Path

import pytest
from django.conf import settings

from caseloop.audits import audit_vanpools
from caseloop.fanout import start_audit_run
from caseloop.models import progress
from cases.models import Case, CaseEvent, PendingAction, Verification
from outreach.models import Message
from poolpatrol.qcluster import current_database_url, running_qcluster
from tests.factories import EmployeeFactory, RiderFactory, ShiftFactory, VanpoolFactory
from tests.qcluster_support import process_env

# Starts two real qcluster workers: `make test` runs it in its slow_process step.
pytestmark = pytest.mark.slow_process

WEEKDAYS = [
    {"day": d, "start": "07:00", "end": "16:00"} for d in ("Mon", "Tue", "Wed", "Thu", "Fri")
]
NEAR, FAR = "94587", "90026"


def worker_env(var_dir: Path, queue: str) -> dict[str, str]:
    """A worker on the test database and the configured broker, draining ``queue`` only."""
    return process_env(
        var_dir,
        DATABASE_URL=current_database_url(),
        Q_CLUSTER_NAME=queue,
        Q_SCHEDULER="false",
        **({"REDIS_URL": settings.REDIS_URL} if settings.REDIS_URL else {}),
    )


def program(prefix: str) -> list[str]:
    """Eight vanpools: clean ones, far riders, and one free-text shift for a person."""
    shift = ShiftFactory(shift_id=f"{prefix}-DAY", schedule=WEEKDAYS)
    flex = ShiftFactory(shift_id=f"{prefix}-FLEX", schedule=[], schedule_text="varies, ask")
    ids = []
    for n, homes in enumerate([(NEAR,), (NEAR, FAR), (FAR,), (NEAR, NEAR), (NEAR,), (FAR, FAR),
                               (NEAR,), (NEAR,)]):  # fmt: skip
        van = VanpoolFactory(vanpool_id=f"{prefix}-{n}", schedule=WEEKDAYS)
        for k, home in enumerate(homes):
            employee = EmployeeFactory(
                employee_id=f"{prefix}-E{n}{k}", home_zip=home, shift=flex if n == 4 else shift
            )
            RiderFactory(vanpool=van, employee=employee)
        ids.append(van.vanpool_id)
    return ids


def results(prefix: str) -> list[tuple]:
    """What the audit decided for the program, with its prefix taken out."""

    def same(value: object) -> str:
        return json.dumps(value, sort_keys=True).replace(prefix, "P")

    return sorted(
        [("case", same(c.vanpool.vanpool_id), c.status, same(c.meta.get("rider_flags")),
          c.meta.get("reason"), c.events.count())
         for c in Case.objects.filter(vanpool__vanpool_id__startswith=prefix)]
        + [("verification", same(v.vanpool.vanpool_id), v.check_type, v.verdict,
            same(v.rider_flags)) for v in Verification.objects.filter(
                vanpool__vanpool_id__startswith=prefix)]
        + [("action", a.kind, same(a.payload.get("riders")))
           for a in PendingAction.objects.filter(case__vanpool__vanpool_id__startswith=prefix)]
    )  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_two_workers_audit_a_program_exactly_as_one_process_does(tmp_path):
    one, fanned = program("ONE"), program("TWO")
    audit_vanpools(one)
    queue = f"fanout-test-{secrets.token_hex(4)}"
    audit_run = start_audit_run(fanned, chunk_size=2, queue=queue)
    env = worker_env(tmp_path, queue)

    with running_qcluster(env), running_qcluster(env):
        deadline = time.monotonic() + 120
        while (counts := progress(audit_run))["done"] + counts["failed"] < counts["total"]:
            assert time.monotonic() < deadline, counts
            time.sleep(0.5)

    assert counts == {"total": 4, "done": 4, "failed": 0, "running": 0, "waiting": 0}
    assert results("TWO") == results("ONE")
    cases = list(
        Case.objects.filter(vanpool__vanpool_id__startswith="TWO").values_list(
            "vanpool_id", flat=True
        )
    )
    assert len(cases) == len(set(cases)) == 4  # three failing vanpools and the unknown: no double
    assert CaseEvent.objects.filter(case__vanpool__vanpool_id__startswith="TWO").exists()


@pytest.mark.django_db(transaction=True)
def test_two_full_audits_started_at_once_open_no_second_case_and_send_no_second_email(tmp_path):
    ids = program("TWIN")
    queue = f"fanout-test-{secrets.token_hex(4)}"
    runs = [start_audit_run(ids, chunk_size=2, queue=queue) for _ in range(2)]
    env = worker_env(tmp_path, queue)

    with running_qcluster(env), running_qcluster(env):
        deadline = time.monotonic() + 120
        while any(progress(run)["done"] < progress(run)["total"] for run in runs):
            assert time.monotonic() < deadline, [progress(run) for run in runs]
            time.sleep(0.5)
        # The first emails the audits queue are written and sent by the same workers.
        while Message.objects.filter(direction="outbound").exclude(status="sent").exists() or (
            not Message.objects.filter(direction="outbound").exists()
        ):
            assert time.monotonic() < deadline
            time.sleep(0.5)

    cases = list(Case.objects.values_list("vanpool__vanpool_id", flat=True))
    assert len(cases) == len(set(cases)) == 4
    letters = list(
        Message.objects.filter(direction="outbound").values_list("thread__case_id", "employee_id")
    )
    # One first letter per flagged rider (4 far riders on 3 vanpools), none twice; the
    # unknown vanpool waits for a person's ruling and writes to nobody yet.
    assert len(letters) == len(set(letters)) == 4
