"""SQLite writers take turns through a lock file; on PostgreSQL the lock is a no-op.

On PostgreSQL the turn-taking is the case row's lock (``cases.lifecycle.lock_case``),
so each vendor has its own test of what makes two writers take turns; CI runs
the suite on both (``.ci/run``).
"""

import fcntl
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction

from cases.lifecycle import lock_case
from cases.models import Case
from poolpatrol.write_lock import one_writer_at_a_time
from tests.factories import CaseFactory

TRIES = 20
on_sqlite = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the lock file is SQLite's; .ci/run runs it on SQLite"
)
on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="row locks are PostgreSQL's; .ci/run runs it on PostgreSQL",
)


@on_sqlite
@pytest.mark.django_db(transaction=True)
def test_a_second_writer_waits_until_the_first_lets_go():
    order: list[str] = []
    holding = threading.Event()

    def second() -> None:
        holding.wait(timeout=5)
        with one_writer_at_a_time():
            order.append("second")
        connection.close()

    other = threading.Thread(target=second)
    other.start()
    with one_writer_at_a_time():
        holding.set()
        time.sleep(0.1)  # the other thread is blocked on the lock meanwhile
        order.append("first")
    other.join(timeout=5)

    assert order == ["first", "second"]


def in_threads(writer: Callable[[], None], count: int) -> None:
    """Run ``writer`` in ``count`` threads released together; re-raise the first error."""
    start = threading.Barrier(count, timeout=10)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            start.wait()
            writer()
        except BaseException as exc:  # reported to the test below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "a writer never finished"
    if errors:
        raise errors[0]


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_the_lock_file_is_not_taken_and_writers_overlap():
    # Two threads inside at once: each waits at the barrier for the other, which
    # a lock between them would never let in (BrokenBarrierError after 10 s).
    both_inside = threading.Barrier(2, timeout=10)

    def writer() -> None:
        with one_writer_at_a_time():
            both_inside.wait()

    in_threads(writer, 2)
    name = str(connection.settings_dict["NAME"])
    assert not Path(f"{name}.writer-lock").exists()


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_lock_case_holds_the_case_row_until_the_transaction_ends():
    case = CaseFactory()
    holding, done = threading.Event(), threading.Event()

    def holder() -> None:
        with transaction.atomic():
            lock_case(case.pk)
            holding.set()
            done.wait(timeout=10)

    thread = threading.Thread(target=lambda: (holder(), connection.close()))
    thread.start()
    try:
        assert holding.wait(timeout=10)
        with pytest.raises(DatabaseError, match="could not obtain lock"), transaction.atomic():
            Case.objects.select_for_update(nowait=True).get(pk=case.pk)
    finally:
        done.set()
        thread.join(timeout=10)
    with transaction.atomic():  # released with the holder's transaction
        assert Case.objects.select_for_update(nowait=True).get(pk=case.pk) == case


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_two_writers_of_one_case_take_turns_through_lock_case():
    case = CaseFactory(reaudit_count=0)
    inside, most_inside = [0], [0]
    count_lock = threading.Lock()

    def writer() -> None:
        with transaction.atomic():
            lock_case(case.pk)
            with count_lock:
                inside[0] += 1
                most_inside[0] = max(most_inside[0], inside[0])
            seen = Case.objects.values_list("reaudit_count", flat=True).get(pk=case.pk)
            Case.objects.filter(pk=case.pk).update(reaudit_count=seen + 1)
            with count_lock:
                inside[0] -= 1

    for _ in range(TRIES):
        in_threads(writer, 2)

    case.refresh_from_db()
    assert (case.reaudit_count, most_inside[0]) == (2 * TRIES, 1)  # no lost update, no overlap


@pytest.mark.django_db
def test_inside_a_transaction_it_takes_nothing():
    # The outer transaction already decided who writes: waiting on the file
    # lock while holding SQLite's lock could deadlock with a writer holding the file.
    with transaction.atomic(), one_writer_at_a_time():
        if connection.vendor == "sqlite":
            path = f"{connection.settings_dict['NAME']}.writer-lock"
            with open(path, "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: raises if it were held
                fcntl.flock(lock, fcntl.LOCK_UN)
