import pytest
from django.conf import settings
from django.db import OperationalError

from tests.qcluster_support import (
    clusters_seen,
    process_env,
    running_qcluster,
)

pytestmark = pytest.mark.django_db


def test_it_reports_database_and_queue_status(client):
    response = client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    broker = "Redis" if settings.REDIS_URL else "ORM"  # CI's PostgreSQL pass runs on Redis
    assert body["queue"] == {"ok": True, "broker": broker, "queued": 0, "clusters": 0}


def test_it_answers_503_when_the_database_is_unreachable(client, monkeypatch):
    def refuse(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr("poolpatrol.health.connection.cursor", refuse)
    response = client.get("/health")
    assert response.status_code == 503
    assert response.json()["status"] == "down"
    assert response.json()["database"] == {
        "ok": False,
        "vendor": response.json()["database"]["vendor"],
        "error": "OperationalError",
    }


def test_it_stays_up_but_degraded_when_the_queue_broker_fails(client, monkeypatch):
    def broken_broker(*args, **kwargs):
        raise ConnectionError("redis down")

    monkeypatch.setattr("django_q.brokers.get_broker", broken_broker)
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json()["status"] == "degraded"
    assert response.json()["queue"] == {"ok": False, "error": "ConnectionError"}


def test_it_is_not_cached(client):
    assert "no-cache" in client.get("/health")["Cache-Control"]


def test_it_only_answers_get(client):
    assert client.post("/health").status_code == 405


@pytest.mark.slow_process
def test_it_counts_a_worker_running_in_another_process(migrated_var_dir):
    # django-q2 keeps cluster stats in a Django cache: a per-process one
    # (LocMemCache) meant the web process always reported "clusters": 0.
    env = process_env(migrated_var_dir)
    with running_qcluster(env) as worker:
        assert clusters_seen(env, wait=30) == 1
        assert worker.poll() is None


def test_the_cluster_stats_are_in_a_cache_every_process_shares():
    from django_q.brokers import get_broker
    from django_q.conf import Conf

    if settings.REDIS_URL:
        # The Redis broker keeps the stats in Redis itself, which every host shares.
        assert type(get_broker()).__name__ == "Redis"
        return
    backend = settings.CACHES[Conf.CACHE]["BACKEND"]
    assert backend == "django.core.cache.backends.db.DatabaseCache"
