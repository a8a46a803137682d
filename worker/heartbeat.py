"""The worker's heartbeat: beat sends `worker.heartbeat` every HARNESS_WORKER_HEARTBEAT_SECONDS with the time of
sending, and whichever worker runs it records that it is alive and how long the message waited (/readyz and
/metrics read the row: harness.ops.health, harness.ops.metrics)."""

import time

from django.db import connection

from harness.models import WorkerHeartbeat

# A worker's name carries its pid (bin/serve: worker-<pid>@host), so each restart adds a row: rows silent for a
# day go in the same statement.
_UPSERT = f"""
WITH gone AS (DELETE FROM {WorkerHeartbeat._meta.db_table} WHERE last_seen < now() - interval '1 day')
INSERT INTO {WorkerHeartbeat._meta.db_table} (hostname, last_seen, queue_lag_seconds) VALUES (%s, now(), %s)
ON CONFLICT (hostname) DO UPDATE SET last_seen = excluded.last_seen, queue_lag_seconds = excluded.queue_lag_seconds
"""  # noqa: S608 - the table name is the model's


def worker_heartbeat_record(*, hostname: str, sent_at: float | None) -> float:
    """One statement, the database's clock; returns the lag in seconds (0 when the sender gave no time)."""
    lag = max(0.0, time.time() - sent_at) if sent_at is not None else 0.0
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT, [hostname[:200], lag])
    return lag
