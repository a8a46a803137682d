"""Generated requests against every memory operation in the OpenAPI schema (schemathesis, bounded).

Agent-reachable operations are called with an agent token, operator-only ones with an operator's
personal token; half the positive examples use real record and snapshot ids. No 5xx, only
documented statuses, and bodies that match the schema.
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
from memory_app.services import Actor, context_project, memory_write
from tests import factories

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = {schemathesis.GenerationMode.POSITIVE: 4, schemathesis.GenerationMode.NEGATIVE: 2}
OPERATOR_ONLY = ("/held/", "/review/", "/expire/", "/delete/", "/erase/", "/bulk-delete/", "/bulk-expire/")


@pytest.fixture
def wsgi_keeps_the_test_connection() -> Any:
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@pytest.mark.usefixtures("wsgi_keeps_the_test_connection")
def test_every_memory_operation_holds_under_generated_requests(project) -> None:
    run = factories.make_run(project, active_agent="agent-1")
    _, agent_secret = factories.make_agent_token(project, "agent-1")
    operator = factories.make_user("olga", role="operator", projects=[project])
    _, operator_secret = factories.make_personal_token(operator)
    record = memory_write(project=project, actor=Actor.for_agent("agent-1"), scope="project", subject="sea",
                          content="The sea is north.", source_run_id=run.pk).record
    snapshot = context_project(project=project, run_id=run.pk, budget_chars=500)
    assert record is not None
    real = {"/api/v1/memory/records/{id}": record.pk, "/api/v1/memory/context/{id}": snapshot.pk}

    schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
    failures: list[str] = []
    calls: list[int] = []
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]
        if not operation.path.startswith("/api/v1/memory/"):
            continue
        secret = operator_secret if operation.path.endswith(OPERATOR_ONLY) else agent_secret
        for mode, count in EXAMPLES.items():
            strategy = operation.as_strategy(generation_mode=mode)
            pk = next((pk for prefix, pk in real.items() if operation.path.startswith(prefix)), None)
            if pk is not None and mode == schemathesis.GenerationMode.POSITIVE:
                strategy = st.one_of(strategy, operation.as_strategy(generation_mode=mode,
                                                                     path_parameters={"id": str(pk)}))
            try:
                _fuzzer(strategy, count, f"Bearer {secret}", calls)()
            except Exception as exc:  # noqa: BLE001 - report every operation's failure together
                failures.append(f"{operation.method.upper()} {operation.path} [{mode.value}]: {exc}")

    assert len(calls) >= 60
    assert not failures, "\n\n".join(failures)


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
