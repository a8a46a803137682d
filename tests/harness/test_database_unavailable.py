"""A request that cannot reach the database is answered 503 database_unavailable with Retry-After, in the API's
{code, detail} shape (experiment 25: during a PostgreSQL restart the API answered Django's HTML 500 page)."""

import json
import socket
from collections.abc import Iterator

import pytest
from django.db import OperationalError, connection
from django.test import Client

from harness.http.errors import api_exception_handler
from tests import factories


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


@pytest.fixture
def database_away() -> Iterator[None]:
    """The default connection pointed at a port nothing listens on, as while the server restarts."""
    connection.close()
    saved = dict(connection.settings_dict)
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(_closed_port()))
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@pytest.mark.django_db(transaction=True)
def test_an_agent_call_while_the_database_is_away_is_a_503_with_retry_after(request: pytest.FixtureRequest) -> None:
    project = factories.make_project("away")
    session = factories.make_session(project)
    _, secret = factories.make_agent_token(project)
    request.getfixturevalue("database_away")

    response = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").post(
        f"/api/v1/sessions/{session.pk}/items/", data=json.dumps({"items": [{"role": "user", "content": "hi"}]}),
        content_type="application/json", HTTP_IDEMPOTENCY_KEY="away-1")

    assert response.status_code == 503
    assert response.json()["code"] == "database_unavailable"
    assert response["Retry-After"] == "1"


def test_an_error_of_the_statement_itself_is_not_called_unreachable() -> None:
    class Deadlock(Exception):
        sqlstate = "40P01"

    error = OperationalError("deadlock detected")
    error.__cause__ = Deadlock()
    assert api_exception_handler(error, {}) is None  # still the server error it is
