import pytest

from harness.actors import Actor
from tests import factories


@pytest.fixture
def agent() -> Actor:
    return Actor.for_agent("writer")


@pytest.fixture
def operator(project):  # type: ignore[no-untyped-def]
    return factories.make_user("olga", role="operator", projects=[project])


@pytest.fixture
def operator_actor(operator) -> Actor:  # type: ignore[no-untyped-def]
    return Actor.for_user(operator)


@pytest.fixture
def run(project):  # type: ignore[no-untyped-def]
    return factories.make_run(project, active_agent="writer")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):  # type: ignore[no-untyped-def]
    # Users are made in almost every test; the production hasher would dominate the run time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
