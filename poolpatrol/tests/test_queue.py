"""With REDIS_URL, the task broker and the cache live in Redis, shared by every host.

A real redis-server is started on a free port for the module (`make test`
installs it when missing); settings load once per process, so each check runs
``manage.py shell`` in a fresh interpreter, as a worker or web host would.
"""

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.qcluster_support import clusters_seen, process_env, running_qcluster

# Starts a private redis-server and qcluster workers: `make test` runs it in its slow_process step.
pytestmark = pytest.mark.slow_process

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private redis-server on a Unix socket: no port another run could share."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is missing: `make test` installs it"
    home = tmp_path_factory.mktemp("redis")
    sock = home / "redis.sock"
    server = subprocess.Popen(
        [binary, "--port", "0", "--unixsocket", str(sock), "--save", "", "--appendonly", "no",
         "--dir", str(home)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not _answers(sock):
            assert server.poll() is None, "redis-server exited"
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        yield f"unix://{sock}?db=0"
    finally:
        server.terminate()
        server.wait(timeout=10)


def _answers(sock: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(0.5)
            client.connect(str(sock))
            client.sendall(b"PING\r\n")
            return client.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def shell(code: str, redis_url: str, tmp_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env=env | {"REDIS_URL": redis_url, "VAR_DIR": str(tmp_path), "LOG_LEVEL": "warning"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_task_enqueued_on_one_host_is_taken_by_a_worker_on_another(redis_url, tmp_path):
    shell(
        "from django_q.tasks import async_task; async_task('math.floor', 2.5)", redis_url, tmp_path
    )
    take = (
        "from django_q.brokers import get_broker; from django_q.signing import SignedPackage; "
        "b = get_broker(); t = SignedPackage.loads(b.dequeue()[0][1]); "
        "print(type(b).__name__, t['func'], t['args'])"
    )
    assert shell(take, redis_url, tmp_path) == "Redis math.floor (2.5,)"


def test_the_cache_and_so_the_api_throttle_counts_are_shared_between_hosts(redis_url, tmp_path):
    shell(
        "from django.core.cache import cache; cache.set('throttle-probe', 7)", redis_url, tmp_path
    )
    read = "from django.core.cache import cache; print(cache.get('throttle-probe'))"
    assert shell(read, redis_url, tmp_path) == "7"


def test_health_counts_a_worker_running_on_another_host(redis_url, migrated_var_dir):
    # The Redis broker keeps django-q2's cluster stats in Redis itself.
    env = process_env(migrated_var_dir, REDIS_URL=redis_url)
    with running_qcluster(env) as worker:
        assert clusters_seen(env, wait=30) == 1
        assert worker.poll() is None
