"""Shared pieces of the schemathesis runs (tests/api, tests/memory_app, reliability experiment 14)."""

from collections.abc import Iterator
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from config.wsgi import application

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def with_real_id(operation: Any, mode: Any, pk: int | None) -> Any:
    """Positive examples draw half their path ids from a real row, so handlers past the 404 run too."""
    free = operation.as_strategy(generation_mode=mode)
    if pk is None or mode != schemathesis.GenerationMode.POSITIVE:
        return free
    return st.one_of(free, operation.as_strategy(generation_mode=mode, path_parameters={"id": str(pk)}))


def fuzzer(strategy: Any, count: int, auth: str, calls: list[int]) -> Any:
    """A bounded, derandomised hypothesis test that calls the WSGI app and validates each response."""

    @hypothesis.settings(
        max_examples=count, deadline=None, database=None, derandomize=True,
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(case=strategy)
    def check(case: Any) -> None:
        calls.append(1)
        case.call_and_validate(app=application, headers={"Authorization": auth}, checks=CHECKS)

    return check


@pytest.fixture
def wsgi_keeps_the_test_connection() -> Iterator[None]:
    """As Django's test client does: a request must not close the connection holding the test's transaction."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)
