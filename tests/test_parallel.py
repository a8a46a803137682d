"""bin/test's workers each get a Redis db of their own (tests/parallel.py)."""

import os

import pytest
from django.conf import settings

from tests.parallel import worker_broker_url, worker_suffix


def test_worker_n_gets_the_base_db_plus_n() -> None:
    assert worker_broker_url("redis://127.0.0.1:6379/12", 0) == "redis://127.0.0.1:6379/12"
    assert worker_broker_url("redis://127.0.0.1:6379/12", 3) == "redis://127.0.0.1:6379/15"
    assert worker_broker_url("redis://:pw@cache:6380", 2) == "redis://:pw@cache:6380/2"


def test_a_worker_past_redis_last_db_or_a_broker_that_is_not_redis_stops_the_run() -> None:
    with pytest.raises(pytest.UsageError, match="Redis db 16"):
        worker_broker_url("redis://127.0.0.1:6379/13", 3)
    with pytest.raises(pytest.UsageError, match="redis://"):
        worker_broker_url("filesystem://", 1)


def test_this_process_uses_the_db_its_worker_was_given() -> None:
    """What the children inherit (os.environ) and what Django and the rate limits' cache read agree."""
    assert os.environ["CELERY_BROKER_URL"] == settings.CELERY_BROKER_URL
    assert settings.CACHES["default"]["LOCATION"] == settings.CELERY_BROKER_URL
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    assert worker_suffix() == (f"_{worker}" if worker else "")
