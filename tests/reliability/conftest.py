"""The reliability experiments in their quick (CI) form: each runs on pytest-django's test database,
committed for real (transaction=True) because the experiments start processes that must see the rows."""

from typing import Any

import pytest
from django.conf import settings as django_settings


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # The experiments make reviewers and operators; the production hasher would dominate their time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _redis_broker() -> None:
    if not django_settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.fail("The reliability experiments need a Redis broker: set CELERY_BROKER_URL=redis://... "
                    "(bin/test does).")
