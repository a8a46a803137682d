"""One Redis client per kombu channel instead of one per broker operation (redis/redis-py#3624).

kombu's Redis transport (5.7) runs every synchronous broker operation through `Channel.conn_or_acquire()`, which
builds a new `redis.Redis` on the channel's connection pool each time: a publish (`LPUSH`), and in the worker,
with `acks_late`, the MULTI/EXEC that records a received message in `unacked` and the one that removes it on
ack. redis-py's constructor copies its ~170 response callbacks into a case-insensitive dict each time (issue
#3624; the fix, PR #4124, is not released). Measured in the resume worker (bench/worker_cycle.py --profile, issue
14): two constructions per message, about a quarter of Celery's and kombu's own CPU per task.

A `redis.Redis` holds no connection of its own (each command borrows one from the pool and returns it; it is
safe to share between threads), so reusing one per channel changes nothing the broker sees: the same commands,
the same pool, the same pipelines. The client is rebuilt whenever the channel's pool is not the one it was
built on (kombu drops the pool when the channel closes or the connection is lost). Only the synchronous client
is cached; the asynchronous one (`Channel.client`, BRPOP) is kombu's own cached property already.

`install()` is called when the Celery app is built (config.celery); it replaces one method, and only when
kombu's `conn_or_acquire` is the one this was written for (its source is hashed): after a kombu upgrade that
changes it, nothing is replaced, a warning says so, and tests/harness/test_broker.py fails until this is looked at
again (drop it once the redis-py fix is released).
"""

from __future__ import annotations

import hashlib
import inspect
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# The source of kombu 5.7's Channel.conn_or_acquire, hashed: what install() replaces.
_EXPECTED_SOURCE_SHA256 = "25883caca6c4121e73463ac71db4a7037981634eb84b715c2280edaa609c080a"
_installed = False

log = logging.getLogger(__name__)


def _source_digest(function: Any) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()


@contextmanager
def _conn_or_acquire(self: Any, client: Any = None) -> Iterator[Any]:
    if client:
        yield client
        return
    pool = self.pool
    cached = self.__dict__.get("_harness_client")
    if cached is None or cached.connection_pool is not pool:
        cached = self.__dict__["_harness_client"] = self._create_client()
    yield cached


def install() -> bool:
    """Reuse one synchronous Redis client per kombu channel; False (nothing changed) without kombu's Redis
    transport or when its `conn_or_acquire` is not the one this replaces."""
    global _installed
    if _installed:
        return True
    try:
        from kombu.transport import redis as kombu_redis
    except ImportError:  # pragma: no cover - redis-py is in requirements.lock
        return False
    if getattr(kombu_redis, "redis", None) is None:  # pragma: no cover - kombu without redis-py
        return False
    original = kombu_redis.Channel.conn_or_acquire
    digest = _source_digest(original)
    if digest != _EXPECTED_SOURCE_SHA256:
        log.warning("kombu's Redis Channel.conn_or_acquire is not the one harness.ops.broker replaces (sha256 %s): "
                    "left as it is; see whether redis/redis-py#3624 is fixed, and update or drop the workaround",
                    digest)
        return False
    kombu_redis.Channel.conn_or_acquire = _conn_or_acquire  # type: ignore[method-assign]
    _installed = True
    return True
