"""What each pytest-xdist worker gets of its own, so `bin/test` can run the suite on several at once.

The database is pytest-django's business (`test_<name>_gw0`, `_gw1`, ...). The Redis db is ours: the worker and
reliability tests flush their broker's db and count the messages in it, and the rate limits count in the same
Redis (the cache follows the broker, config/settings.py), so two workers on one db would see each other's work.
Worker `gwN` gets db `base + N`, base being the db in CELERY_BROKER_URL (bin/test: TEST_CELERY_BROKER_URL).

The variable must be in the worker's environment before Django reads its settings, which pytest-django does
before any conftest runs; so the controller puts it into each worker's execnet spec (`env:`), which execnet
applies when it starts the worker's interpreter. Every child a test starts inherits it from os.environ.
"""

import os
import re
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

import execnet
import pytest

REDIS_DATABASES = 16  # Redis' default `databases`


def worker_broker_url(base_url: str, index: int) -> str:
    """`base_url` with its db number moved up by `index` (redis://host:6379/8, 2 -> redis://host:6379/10)."""
    parts = urlsplit(base_url)
    match = re.fullmatch(r"/?(\d*)", parts.path)
    if parts.scheme not in ("redis", "rediss") or match is None:
        raise pytest.UsageError(f"CELERY_BROKER_URL must be redis://host:port/<db> to run in parallel: {base_url!r}")
    db = int(match.group(1) or 0) + index
    if db >= REDIS_DATABASES:
        raise pytest.UsageError(
            f"worker {index} would need Redis db {db} ({base_url!r} + {index}); Redis has {REDIS_DATABASES}: "
            "lower the base db in TEST_CELERY_BROKER_URL or run fewer workers (-n)."
        )
    return urlunsplit(parts._replace(path=f"/{db}"))


def worker_suffix() -> str:
    """`_gw0`, `_gw1`, ... inside an xdist worker, "" otherwise: for the names a test makes on shared servers."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return f"_{worker}" if worker else ""


def pytest_xdist_setupnodes(config: pytest.Config, specs: Sequence[execnet.XSpec]) -> None:
    base = os.environ.get("CELERY_BROKER_URL", "")
    if not base.startswith(("redis://", "rediss://")):
        return  # the suite's own fixtures fail loudly on a broker that is not Redis
    for index, spec in enumerate(specs):
        spec.env["CELERY_BROKER_URL"] = worker_broker_url(base, index)


LONG_MARKERS = ("slow", "worker", "browser")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests first (stable otherwise): the scheduler hands them out while every worker is free, instead
    of one worker starting a 90 s test when the others have nothing left. The same order on every worker, as
    xdist requires, and under -n 0."""
    items.sort(key=lambda item: not any(item.get_closest_marker(name) for name in LONG_MARKERS))
