import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.conf import settings
from django.db import connection

from tests.worker.support import FakeService, Workers


@pytest.fixture
def fake_service() -> Iterator[FakeService]:
    service = FakeService().start()
    yield service
    service.stop()


@pytest.fixture
def broker() -> Iterator[redis.Redis]:
    """This suite's own Redis db (TEST_CELERY_BROKER_URL), emptied before and after each test."""
    url = settings.CELERY_BROKER_URL
    if not url.startswith("redis://"):
        pytest.fail("The worker tests need a Redis broker: set CELERY_BROKER_URL=redis://... (bin/test does).")
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


def _test_database_url() -> str:
    # The worker subprocess must use pytest-django's test database, not the one in DATABASE_URL.
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


@pytest.fixture
def workers(transactional_db, broker, fake_service: FakeService, tmp_path: Path) -> Iterator[Workers]:  # type: ignore[no-untyped-def]
    """Starts real `celery -A config worker --beat` processes; every one is killed at teardown.

    The demo's publish_chapter tool is routed to the fake HTTP service so the test counts its calls; the
    service deduplicates by key, and its adapter says so (a test of a tool that does not sets it false).
    """
    adapters = {"publish_chapter": {"kind": "http", "url": fake_service.url, "timeout": 10, "connect_timeout": 2,
                                    "honours_idempotency_key": True}}
    started = Workers(database_url=_test_database_url(), tmp_path=tmp_path, adapters=adapters)
    yield started
    started.stop_all()
