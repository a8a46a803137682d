"""Every memory write refuses a field it does not take (400 `unknown_field`) and writes nothing: the walk of
tests/api/test_unknown_fields.py over memory's own table (tests/memory_app/test_api.py)."""


import pytest
from django.urls import resolve

from tests.api.conftest import ApiClient
from tests.api.test_unknown_fields import UNKNOWN, assert_refused_and_nothing_written
from tests.memory_app.test_api import ENDPOINTS, Endpoint, World
from tests.memory_app.test_api import world as world  # the fixture these tests use

pytestmark = pytest.mark.django_db

# The LangGraph store's writes (their access rows are tests/api/test_access.py's STORE_ENDPOINTS).
STORE_WRITES = [
    Endpoint("store-put", "post", lambda w: "/api/v1/memory/store/items/",
             lambda w: {"namespace": ["project", "walk"], "key": "k", "value": {"v": 1}, "source_run_id": w.run.pk},
             ok=201),
    Endpoint("store-delete", "post", lambda w: "/api/v1/memory/store/items/delete/",
             lambda w: {"namespace": ["project", "walk"], "key": "k"}),
]
WRITES = [e for e in ENDPOINTS if e.method == "post"] + STORE_WRITES
# Each walked row's operation, as the schema names it (test_the_walks_cover_every_write_operation_of_the_schema).
TEMPLATES = {
    "write": "/api/v1/memory/records/", "supersede": "/api/v1/memory/records/{id}/supersede/",
    "context": "/api/v1/memory/context/", "review": "/api/v1/memory/records/{id}/review/",
    "expire": "/api/v1/memory/records/{id}/expire/", "delete": "/api/v1/memory/records/{id}/delete/",
    "erase": "/api/v1/memory/records/{id}/erase/", "bulk-delete": "/api/v1/memory/records/bulk-delete/",
    "bulk-expire": "/api/v1/memory/records/bulk-expire/", "erase-person": "/api/v1/memory/erasures/",
    "store-put": "/api/v1/memory/store/items/", "store-delete": "/api/v1/memory/store/items/delete/",
}
MEMORY_WRITE_ROUTES = {TEMPLATES[e.name] for e in WRITES}


def _caller(world: World, endpoint: Endpoint) -> ApiClient:
    who = "admin" if endpoint.admins_only else "agent" if endpoint.agents else "operator"
    return ApiClient(world.tokens[who])


@pytest.mark.parametrize("endpoint", WRITES, ids=[e.name for e in WRITES])
def test_every_memory_write_refuses_an_unknown_field_and_writes_nothing(world: World, endpoint: Endpoint) -> None:
    path, body = endpoint.path(world), endpoint.body(world)
    assert resolve(path).route == TEMPLATES[endpoint.name].lstrip("/").replace("{id}", "<id:pk>")
    client = _caller(world, endpoint)
    key = assert_refused_and_nothing_written(client, "POST", path, {**body, UNKNOWN: 1}, [UNKNOWN])
    # The corrected body reuses the key (the 400 was not stored under it).
    response = client.call("POST", path, body, HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == endpoint.ok, response.content
    assert "Idempotent-Replayed" not in response


def test_a_memory_write_may_not_set_the_records_status_or_version(world: World) -> None:
    from harness.http.body import body_shape
    from memory_app.api import MemoryRecordOutSerializer, WriteInSerializer

    body = {"project": "acme", "scope": "project", "content": "The lamp is lit.", "source_run_id": world.run.pk}
    server_set = sorted(set(MemoryRecordOutSerializer().fields) - body_shape(WriteInSerializer).fields)
    assert {"status", "version", "id", "provenance", "policy_decision"} <= set(server_set)
    for name in server_set:
        assert_refused_and_nothing_written(ApiClient(world.tokens["agent"]), "POST", "/api/v1/memory/records/",
                                           {**body, name: 1}, [name])
