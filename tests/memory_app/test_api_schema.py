"""Generated requests against every memory operation in the OpenAPI schema (schemathesis, bounded).

Agent-reachable operations are called with an agent token, operator-only ones with an operator's
personal token; half the positive examples use real record and snapshot ids. No 5xx, only
documented statuses, and bodies that match the schema.
"""


import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator

from harness.actors import Actor
from memory_app.context import context_project
from memory_app.services import memory_write
from tests import factories
from tests.schema_fuzz import (
    fuzzer,
    with_real_id,
    wsgi_keeps_the_test_connection,  # noqa: F401 - a fixture these tests use
)

EXAMPLES = {schemathesis.GenerationMode.POSITIVE: 4, schemathesis.GenerationMode.NEGATIVE: 2}
OPERATOR_ONLY = ("/held/", "/review/", "/expire/", "/delete/", "/erase/", "/bulk-delete/", "/bulk-expire/")


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
            pk = next((pk for prefix, pk in real.items() if operation.path.startswith(prefix)), None)
            try:
                fuzzer(with_real_id(operation, mode, pk), count, f"Bearer {secret}", calls)()
            except Exception as exc:  # noqa: BLE001 - report every operation's failure together
                failures.append(f"{operation.method.upper()} {operation.path} [{mode.value}]: {exc}")

    assert len(calls) >= 60
    assert not failures, "\n\n".join(failures)
