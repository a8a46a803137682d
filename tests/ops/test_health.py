"""/healthz and /readyz (harness.ops.health): unauthenticated, never cached, by address, each failure named."""

import json

import pytest
from django.db import connection
from django.test import override_settings

from harness.models import WorkerHeartbeat
from tests.ops.wsgi import call
from worker.heartbeat import worker_heartbeat_record

# transaction=True: the WSGI handler runs Django's request signals, which close the connection a test's
# transaction would hold (as in tests/harness/test_api_chain.py).
pytestmark = pytest.mark.django_db(transaction=True)


def _ready() -> tuple[int, dict]:
    status, _, body = call("GET", "/readyz")
    return status, json.loads(body)


def test_healthz_answers_by_address_without_a_session_and_is_never_cached() -> None:
    status, headers, body = call("GET", "/healthz", host="10.20.30.40:8000")  # not in ALLOWED_HOSTS
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    assert "no-store" in headers["Cache-Control"]
    assert "Set-Cookie" not in headers and "Vary" not in headers  # no session or CSRF middleware ran
    assert len(headers["X-Request-ID"]) == 32


def test_readyz_is_unavailable_until_a_worker_beats_then_ready_then_unavailable_when_the_beat_is_old() -> None:
    status, body = _ready()
    assert status == 503
    assert body["checks"] == {"database": "ok", "migrations": "ok", "broker": "ok",
                              "worker": "failed: no worker heartbeat yet"}

    worker_heartbeat_record(hostname="worker-1@box", sent_at=None)
    status, body = _ready()
    assert (status, body["status"]) == (200, "ok"), body

    with connection.cursor() as cursor:
        cursor.execute("UPDATE harness_workerheartbeat SET last_seen = now() - interval '10 minutes'")
    status, body = _ready()
    assert status == 503
    assert body["checks"]["worker"].startswith("failed: last heartbeat 600 s ago")


def test_readyz_names_an_unreachable_broker() -> None:
    worker_heartbeat_record(hostname="worker-1@box", sent_at=None)
    # Port 1 on loopback: nothing listens, the connection is refused at once.
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):
        status, body = _ready()
    assert status == 503
    assert body["checks"]["broker"] == "failed: ConnectionError"
    assert body["checks"]["database"] == "ok"


def test_a_heartbeat_records_its_queue_lag_and_keeps_one_row_per_worker() -> None:
    import time

    worker_heartbeat_record(hostname="w@a", sent_at=time.time() - 1000)
    worker_heartbeat_record(hostname="w@a", sent_at=time.time() - 1)
    worker_heartbeat_record(hostname="w@b", sent_at=None)
    assert WorkerHeartbeat.objects.count() == 2
    lag = WorkerHeartbeat.objects.get(hostname="w@a").queue_lag_seconds
    assert 1 <= lag < 500  # the newer beat's lag (1 s) replaced the older one's (1,000 s)

    # A worker silent for a day (a restarted one: its name carries its pid) is forgotten at the next beat.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE harness_workerheartbeat SET last_seen = now() - interval '25 hours' "
                       "WHERE hostname = 'w@b'")
    worker_heartbeat_record(hostname="w@a", sent_at=None)
    assert list(WorkerHeartbeat.objects.values_list("hostname", flat=True)) == ["w@a"]

