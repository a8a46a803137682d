"""The no-op task the worker scenario measures the broker's round trip with (loaded by `--include`).

It does nothing but tell the sender it ran: an LPUSH on the broker's own Redis, which the sender
waits for with BLPOP. That is the floor any resume (a task that does real work) is compared with.
"""

from __future__ import annotations

import uuid

import redis
from celery import shared_task
from django.conf import settings

_client: redis.Redis | None = None


def broker_redis() -> redis.Redis:
    global _client
    if _client is None:
        _client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    return _client


@shared_task(name="bench.noop", ignore_result=True, acks_late=False)
def noop(key: str) -> None:
    broker_redis().lpush(key, b"1")
    broker_redis().expire(key, 60)


def noop_round_trip(timeout: float = 10.0) -> bool:
    """Send the no-op and wait for it to have run; False on timeout."""
    key = f"bench:noop:{uuid.uuid4().hex}"
    noop.delay(key)
    return broker_redis().blpop([key], timeout=timeout) is not None


def ping_worker(timeout: float = 1.0) -> bool:
    try:
        return noop_round_trip(timeout)
    except Exception:  # noqa: BLE001 - not ready yet (broker or worker)
        return False
