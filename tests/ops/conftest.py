"""Fixtures for running the service as production does: the worker tests' broker and fake tool, and the test
database's URL for child processes."""

import pytest

from tests.subprocesses import test_database_url
from tests.worker.conftest import broker, fake_service

__all__ = ["broker", "fake_service"]


@pytest.fixture
def live_database_url(transactional_db) -> str:  # type: ignore[no-untyped-def]
    """pytest-django's test database (committed rows: child processes see them), as a URL for a child."""
    return test_database_url()
