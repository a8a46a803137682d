import pytest
from django.test import Client

from tests import factories
from tests.console.scenario import Scene, build_scene


@pytest.fixture
def scene(project) -> Scene:  # type: ignore[no-untyped-def]
    return build_scene(project)


@pytest.fixture
def other_scene(other_project) -> Scene:  # type: ignore[no-untyped-def]
    return build_scene(other_project, suffix="-b")


def _client_for(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def reviewer(project):  # type: ignore[no-untyped-def]
    return factories.make_user("rita", role="reviewer", projects=[project])


@pytest.fixture
def operator(project):  # type: ignore[no-untyped-def]
    return factories.make_user("otto", role="operator", projects=[project])


@pytest.fixture
def reviewer_client(reviewer) -> Client:  # type: ignore[no-untyped-def]
    return _client_for(reviewer)


@pytest.fixture
def operator_client(operator) -> Client:  # type: ignore[no-untyped-def]
    return _client_for(operator)


@pytest.fixture
def client_for():  # type: ignore[no-untyped-def]
    return _client_for
