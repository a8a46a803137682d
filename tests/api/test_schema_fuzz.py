"""A property-based run of the whole OpenAPI schema (schemathesis, one worker, bounded).

Every operation gets a few positive and a few negative examples, sent through the full WSGI stack
(middleware included) with a real agent token; path ids are real records half of the time. The
checks: no 5xx, only documented status codes and content types, and bodies that match the schema.
"""

from typing import Any

import hypothesis
import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from harness.wsgi import application
from tests.api.conftest import World

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# About 40 operations x (3 positive + 2 negative): ~200 requests, well under a minute on 2 cores.
EXAMPLES = {schemathesis.GenerationMode.POSITIVE: 3, schemathesis.GenerationMode.NEGATIVE: 2}


def _real_ids(world: World) -> dict[str, int]:
    return {
        "/api/v1/sessions/": world.session.pk,
        "/api/v1/runs/": world.running_run.pk,
        "/api/v1/checkpoints/": world.checkpoint.pk,
        "/api/v1/approvals/": world.approval.pk,
        "/api/v1/effects/": world.effect.pk,
        "/api/v1/tasks/": world.task.pk,
    }


def _strategy(operation: Any, mode: Any, real_ids: dict[str, int]) -> Any:
    free = operation.as_strategy(generation_mode=mode)
    real = next((pk for prefix, pk in real_ids.items() if operation.path.startswith(prefix + "{id}")), None)
    if real is None or mode != schemathesis.GenerationMode.POSITIVE:
        return free
    return st.one_of(free, operation.as_strategy(generation_mode=mode, path_parameters={"id": str(real)}))


def _fuzzer(strategy: Any, count: int, auth: str, calls: list[int]) -> Any:
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
def wsgi_keeps_the_test_connection() -> Any:
    """As Django's test client does: a request must not close the connection holding the test's transaction."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@pytest.mark.usefixtures("wsgi_keeps_the_test_connection")
def test_the_whole_schema_holds_under_generated_requests(world: World) -> None:
    raw = SchemaGenerator().get_schema(request=None, public=True)
    schema = schemathesis.openapi.from_dict(raw)
    agent = world.agent.headers["HTTP_AUTHORIZATION"]
    reviewer = world.reviewer.headers["HTTP_AUTHORIZATION"]
    failures: list[str] = []
    calls: list[int] = []

    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]
        auth = reviewer if operation.path.endswith("/decision/") else agent
        for mode, count in EXAMPLES.items():
            check = _fuzzer(_strategy(operation, mode, _real_ids(world)), count, auth, calls)
            try:
                check()
            except Exception as exc:  # noqa: BLE001 - collect every operation's failure, report them together
                failures.append(f"{operation.method.upper()} {operation.path} [{mode.value}]: {exc}")

    assert len(calls) >= 100
    assert not failures, "\n\n".join(failures)
