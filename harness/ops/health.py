"""The probes: /healthz (the process answers) and /readyz (it can do its work), unauthenticated and never cached.

/healthz touches nothing: a load balancer or an orchestrator restarts a process that stops answering it.
/readyz checks what a request or a resume needs, each bounded by a short timeout, and answers 503 naming the
failing check, so traffic goes elsewhere while it lasts:
- database: one round trip (the newest worker heartbeat, read in the same statement);
- migrations: none left to apply (read once per process until true: migrations are not un-applied);
- broker: Redis answers PING (the filesystem transport: its folder is writable);
- worker: a worker ran the heartbeat task (worker.heartbeat, sent by beat) within
  HARNESS_WORKER_HEARTBEAT_MAX_AGE seconds, so beat, the broker, a worker and the database all work.
Both are served by harness.http.handlers without the session, CSRF or host middleware (a probe comes by address,
not by the public host name) and answer plain JSON: {"status": "ok"|"unavailable", "checks": {...}}.
"""

import tempfile
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from harness.models import WorkerHeartbeat

_migrations_applied = False
_redis_clients: dict[str, Any] = {}


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, Any] = {}
    checks["database"], heartbeat = _database()
    checks["migrations"] = _migrations() if checks["database"] == "ok" else "not checked"
    checks["broker"] = _broker()
    checks["worker"] = _worker(heartbeat)
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503)


def _database() -> tuple[str, WorkerHeartbeat | None | str]:
    try:
        return "ok", WorkerHeartbeat.objects.newest()
    except Exception as exc:  # noqa: BLE001 - any failure to reach or read the database is "not ready", named
        connections[DEFAULT_DB_ALIAS].close_if_unusable_or_obsolete()
        return f"failed: {type(exc).__name__}", "database unreachable"


def _migrations() -> str:
    global _migrations_applied
    if _migrations_applied:
        return "ok"
    try:
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception as exc:  # noqa: BLE001 - a migration table that cannot be read: not ready, named
        return f"failed: {type(exc).__name__}"
    if pending:
        return f"failed: {len(pending)} migration(s) not applied"
    _migrations_applied = True
    return "ok"


def _broker() -> str:
    url: str = settings.CELERY_BROKER_URL
    try:
        if url.startswith(("redis://", "rediss://")):
            if url not in _redis_clients:
                import redis

                _redis_clients[url] = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
            _redis_clients[url].ping()
        elif url.startswith("filesystem://"):
            folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".readyz-"):
                pass
        else:
            from kombu import Connection

            with Connection(url, connect_timeout=1) as connection:
                connection.ensure_connection(max_retries=1)
    except Exception as exc:  # noqa: BLE001 - a refused, timed-out or unwritable broker: not ready, named
        return f"failed: {type(exc).__name__}"
    return "ok"


def _worker(heartbeat: WorkerHeartbeat | None | str) -> str:
    if isinstance(heartbeat, str):
        return f"failed: {heartbeat}"
    if heartbeat is None:
        return "failed: no worker heartbeat yet"
    limit: int = settings.HARNESS_WORKER_HEARTBEAT_MAX_AGE
    if heartbeat.age_seconds > limit:
        return f"failed: last heartbeat {heartbeat.age_seconds:.0f} s ago (limit {limit} s)"
    return "ok"
