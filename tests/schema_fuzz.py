"""Shared pieces of the schemathesis runs: reliability experiment 14 (the whole schema, every operation with the
principal that may call it; its quick form is tests/reliability/test_security_quick.py::test_14) and
tests/memory_app/test_api_schema.py (the memory operations, more examples each)."""

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


def real_ids(world: Any) -> dict[str, int]:
    """The world's (tests/api/conftest.py) row for each object endpoint's `{id}`."""
    return {
        "/api/v1/sessions/": world.session.pk,
        "/api/v1/runs/": world.running_run.pk,
        "/api/v1/checkpoints/": world.checkpoint.pk,
        "/api/v1/approvals/": world.approval.pk,
        "/api/v1/effects/": world.effect.pk,
        "/api/v1/tasks/": world.task.pk,
    }


def strategy_for(operation: Any, mode: Any, ids: dict[str, int]) -> Any:
    """`operation`'s cases in `mode`, half of the positive ones on the real row its path names (if any)."""
    real = next((pk for prefix, pk in ids.items() if operation.path.startswith(prefix + "{id}")), None)
    return with_real_id(operation, mode, real)


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
