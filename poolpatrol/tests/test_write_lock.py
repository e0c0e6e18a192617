"""SQLite writers take turns through a lock file; on PostgreSQL the lock is a no-op."""

import fcntl
import threading
import time

import pytest
from django.db import connection, transaction

from poolpatrol.write_lock import one_writer_at_a_time


@pytest.mark.django_db(transaction=True)
def test_a_second_writer_waits_until_the_first_lets_go():
    if connection.vendor != "sqlite":
        with one_writer_at_a_time():  # PostgreSQL: nothing to take
            assert connection.vendor == "postgresql"
        return
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
