"""The reliability experiments in their quick (CI) form: each runs on pytest-django's test database,
committed for real (transaction=True) because the experiments start processes that must see the rows."""

from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings

from tests import template_db


@pytest.fixture(autouse=True, scope="session")
def _clusters_load_the_suites_schema(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The experiments that start a PostgreSQL of their own (reliability/clusters.py) load the suite's migrated
    template instead of migrating it again (RELIABILITY_SCHEMA_DUMP)."""
    dump = tmp_path_factory.mktemp("schema") / "template.sql"
    dump.write_bytes(template_db.template_dump())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RELIABILITY_SCHEMA_DUMP", str(dump))
        yield


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # The experiments make reviewers and operators; the production hasher would dominate their time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _redis_broker() -> None:
    if not django_settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.fail("The reliability experiments need a Redis broker: set CELERY_BROKER_URL=redis://... "
                    "(bin/test does).")
