import os

import pytest

from tests import factories


def pytest_configure(config: pytest.Config) -> None:
    # The suite's promises are about PostgreSQL; a missing or SQLite DATABASE_URL must fail loudly
    # rather than quietly test something else.
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise pytest.UsageError(
            "The test suite runs on PostgreSQL only: set DATABASE_URL=postgres://... (bin/test does)."
        )


@pytest.fixture(autouse=True, scope="session")
def _postgresql_is_the_database(django_db_setup, django_db_blocker) -> None:  # type: ignore[no-untyped-def]
    from django.db import connection

    with django_db_blocker.unblock():
        assert connection.vendor == "postgresql"
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")


@pytest.fixture
def project(db):  # type: ignore[no-untyped-def]
    return factories.make_project("acme")


@pytest.fixture
def other_project(db):  # type: ignore[no-untyped-def]
    return factories.make_project("globex")
