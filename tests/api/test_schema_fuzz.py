"""A property-based run of the whole OpenAPI schema (schemathesis, one worker, bounded).

Every operation gets a few positive and a few negative examples, sent through the full WSGI stack
(middleware included) with a real agent token; path ids are real records half of the time. The
checks: no 5xx, only documented status codes and content types, and bodies that match the schema.
"""

from typing import Any

import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator

from tests.api.conftest import World
from tests.schema_fuzz import (
    fuzzer,
    with_real_id,
    wsgi_keeps_the_test_connection,  # noqa: F401 - a fixture these tests use
)

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
    real = next((pk for prefix, pk in real_ids.items() if operation.path.startswith(prefix + "{id}")), None)
    return with_real_id(operation, mode, real)


@pytest.mark.slow
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
            check = fuzzer(_strategy(operation, mode, _real_ids(world)), count, auth, calls)
            try:
                check()
            except Exception as exc:  # noqa: BLE001 - collect every operation's failure, report them together
                failures.append(f"{operation.method.upper()} {operation.path} [{mode.value}]: {exc}")

    assert len(calls) >= 100
    assert not failures, "\n\n".join(failures)
