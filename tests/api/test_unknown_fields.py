"""A body names only the fields its operation takes: any other is 400 `unknown_field` and nothing is written.

The walk covers every write operation of the schema (test_access's ENDPOINTS here, memory's table in
tests/memory_app/test_unknown_fields.py, and a coverage test over both): the operation's valid body plus one
unknown field is refused, the database is as it was, the Idempotency-Key stored nothing, and the valid body
alone then succeeds under the same key. Then the fields the server sets, nested objects, free-form values, the schema.
"""

import uuid
from typing import Any

import pytest
from django.apps import apps

from harness.models import AuditEntry, IdempotentRequest
from runs_app.models import Checkpoint
from sessions_app.models import SessionItem
from tests.api.conftest import ApiClient, World
from tests.api.test_access import DECIDE, ENDPOINTS, OPERATE, REVIEW, Endpoint

WRITES = [e for e in ENDPOINTS if e.method in ("POST", "PUT", "PATCH")]
UNKNOWN = "unexpected_field"

# Every table an operation writes to (the apps' and the audit log); not the Idempotency-Key's, which is checked
# on its own, nor the tokens' (last use).
_WRITTEN_APPS = ("sessions_app", "runs_app", "memory_app", "notify_app")


def database_state() -> dict[str, list[dict[str, Any]]]:
    models = [m for app in _WRITTEN_APPS for m in apps.get_app_config(app).get_models()] + [AuditEntry]
    return {m._meta.label: list(m.objects.order_by("pk").values()) for m in models}


def assert_refused_and_nothing_written(client: ApiClient, method: str, path: str, body: dict[str, Any],
                                       unknown: list[str]) -> str:
    """The call is 400 unknown_field naming `unknown`, the database did not change, and its Idempotency-Key
    holds nothing (issue 30: a 400 is not stored, so the corrected body may reuse the key); the key."""
    key = f"strict-{uuid.uuid4()}"
    before = database_state()
    response = client.call(method, path, body, HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 400, response.content
    answer = response.json()
    assert answer["code"] == "unknown_field", answer
    assert answer["unknown_fields"] == unknown, answer
    assert all(f"`{path}`" in answer["detail"] for path in unknown)
    assert database_state() == before
    assert not IdempotentRequest.objects.filter(key=key).exists()
    return key


def _owner(world: World, endpoint: Endpoint) -> ApiClient:
    return {DECIDE: world.reviewer, OPERATE: world.operator, REVIEW: world.reviewer}.get(endpoint.kind, world.agent)


def _path_and_body(endpoint: Endpoint, world: World) -> tuple[str, dict[str, Any]]:
    for record in (world.run, world.task, world.session):
        record.refresh_from_db()
    path = endpoint.path(world)  # first: some paths make the records their bodies name
    return path, dict(endpoint.body(world))


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", WRITES, ids=[e.operation for e in WRITES])
def test_every_write_refuses_an_unknown_field_and_writes_nothing(endpoint: Endpoint, world: World) -> None:
    client = _owner(world, endpoint)
    path, body = _path_and_body(endpoint, world)
    key = assert_refused_and_nothing_written(client, endpoint.method, path, {**body, UNKNOWN: 1}, [UNKNOWN])

    # The same body without it, under the same Idempotency-Key, is the operation's ordinary answer: the field
    # alone was refused, and the refusal did not take the key.
    response = client.call(endpoint.method, path, body, HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == endpoint.owner_status, response.content
    assert "Idempotent-Replayed" not in response


@pytest.mark.django_db
def test_the_walks_cover_every_write_operation_of_the_schema() -> None:
    from drf_spectacular.generators import SchemaGenerator

    from tests.memory_app.test_unknown_fields import MEMORY_WRITE_ROUTES

    schema = SchemaGenerator().get_schema(request=None, public=True)
    writes = {(method.upper(), path) for path, ops in schema["paths"].items() if path.startswith("/api/v1/")
              for method in ops if method in ("post", "put", "patch")}
    walked = {(e.method, e.template) for e in WRITES} | {("POST", route) for route in MEMORY_WRITE_ROUTES}
    assert writes == walked


# --- the parent / parent_checkpoint trap -------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("keyed", [False, True], ids=["no-key", "idempotency-key"])
def test_a_checkpoint_posted_with_parent_checkpoint_is_refused_and_points_at_parent(world: World, keyed: bool
                                                                                    ) -> None:
    body = {"run": world.run.pk, "lease_owner": world.run.lease_owner,
            "parent_checkpoint": world.checkpoint.pk, "cursor": {"node": "draft"}}
    headers = {"HTTP_IDEMPOTENCY_KEY": f"cp-{uuid.uuid4()}"} if keyed else {}
    before = Checkpoint.objects.count()
    response = world.agent.call("POST", "/api/v1/checkpoints/", body, **headers)
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "unknown_field"
    assert response.json()["unknown_fields"] == ["parent_checkpoint"]
    assert "did you mean `parent`?" in response.json()["detail"]
    assert Checkpoint.objects.count() == before
    assert not IdempotentRequest.objects.filter(response_status__lt=300).exists()

    body["parent"] = body.pop("parent_checkpoint")
    response = world.agent.call("POST", "/api/v1/checkpoints/", body, **headers)
    assert response.status_code == 201, response.content
    assert response.json()["parent"] == world.checkpoint.pk
    assert Checkpoint.objects.get(pk=response.json()["id"]).parent_id == world.checkpoint.pk


# --- the fields the server sets ----------------------------------------------------------------------------

def _server_set(out: Any, taken: Any) -> list[str]:
    """What an answer shows that the operation's body does not take."""
    from harness.http.body import body_shape

    return sorted(set(out().fields) - body_shape(taken).fields)


def _server_set_cases() -> list[tuple[str, Any, Any]]:
    from notify_app.api import WebhookCreatedSerializer, WebhookInSerializer
    from runs_app.api import approvals, checkpoints, effects, events, runs, tasks
    from runs_app.api.handoffs import HandoffIssuedSerializer, HandoffIssueInSerializer
    from sessions_app import api as sessions

    return [
        ("sessions_create", sessions.SessionOutSerializer, sessions.SessionCreateInSerializer),
        ("runs_create", runs.RunOutSerializer, runs.RunCreateInSerializer),
        ("run_events_append", events.EventOutSerializer, events.EventInSerializer),
        ("checkpoints_create", checkpoints.CheckpointOutSerializer, checkpoints.CheckpointInSerializer),
        ("approvals_request", approvals.ApprovalOutSerializer, approvals.ApprovalCreateInSerializer),
        ("effects_intend", effects.EffectOutSerializer, effects.EffectIntendInSerializer),
        ("tasks_create", tasks.TaskOutSerializer, tasks.TaskCreateInSerializer),
        ("tasks_save", tasks.TaskOutSerializer, tasks.TaskSaveInSerializer),
        ("handoffs_issue", HandoffIssuedSerializer, HandoffIssueInSerializer),
        ("webhooks_register", WebhookCreatedSerializer, WebhookInSerializer),
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("operation", [c[0] for c in _server_set_cases()])
def test_a_field_the_server_sets_is_refused_as_unknown(operation: str, world: World) -> None:
    """`id`, `status`, `version`, `project`, `created_at`...: shown in answers, never taken, never dropped."""
    _, out, taken = next(c for c in _server_set_cases() if c[0] == operation)
    endpoint = next(e for e in WRITES if e.operation == operation)
    path, body = _path_and_body(endpoint, world)
    server_set = _server_set(out, taken)
    assert {"id", "created_at"} <= set(server_set)
    for name in server_set:
        assert_refused_and_nothing_written(_owner(world, endpoint), endpoint.method, path, {**body, name: 1}, [name])


@pytest.mark.django_db
def test_an_appended_item_may_not_set_its_seq_id_or_session(world: World) -> None:
    from sessions_app.api import ItemInSerializer, ItemOutSerializer

    path = f"/api/v1/sessions/{world.session.pk}/items/"
    for name in _server_set(ItemOutSerializer, ItemInSerializer):
        items = [{"role": "user", "content": "a"}, {"role": "user", "content": "b", name: 7}]
        assert_refused_and_nothing_written(world.agent, "POST", path, {"items": items}, [f"items[1].{name}"])


# --- nested objects with fixed fields; free-form values ----------------------------------------------------


@pytest.mark.django_db
def test_each_appended_item_is_held_to_its_fields(world: World) -> None:
    path = f"/api/v1/sessions/{world.session.pk}/items/"
    items = [{"role": "user", "content": "a", "colour": "red"}, {"role": "user", "content": "b"},
             {"role": "user", "contnt": "c"}]
    assert_refused_and_nothing_written(world.agent, "POST", path, {"items": items, "expected_last_seq": 0},
                                       ["items[0].colour", "items[2].contnt"])
    response = world.agent.post(path, {"items": [{"role": "user", "contnt": "c"}]})
    assert "did you mean `content`?" in response.json()["detail"]
    assert not SessionItem.objects.filter(session=world.session).exists()


@pytest.mark.django_db
def test_a_compactions_summary_and_a_handoffs_inputs_are_held_to_their_fields(world: World) -> None:
    from tests.api.test_access import _soon

    compact = {"first_seq": 1, "last_seq": 2, "summary": {"content": "s", "seq": 2}}
    assert_refused_and_nothing_written(world.agent, "POST", f"/api/v1/sessions/{world.session.pk}/items/compact/",
                                       compact, ["summary.seq"])
    issue = {"receiver_session": world.session.pk, "objective": "Review.", "output_schema": {"type": "object"},
             "deadline": _soon(), "inputs": [{"name": "a", "fingerprint": "0" * 64, "value": 1, "digest": "x"}]}
    assert_refused_and_nothing_written(world.agent, "POST", f"/api/v1/runs/{world.running_run.pk}/handoffs/", issue,
                                       ["inputs[0].digest"])


@pytest.mark.django_db
def test_free_form_values_take_any_keys(world: World) -> None:
    anything = {"colour": "red", "nested": {"id": 1, "status": "x"}}
    session = world.agent.post("/api/v1/sessions/", {"metadata": anything})
    assert session.status_code == 201 and session.json()["metadata"] == anything
    items = world.agent.post(f"/api/v1/sessions/{world.session.pk}/items/",
                             {"items": [{"role": "user", "content": anything}]})
    assert items.status_code == 201 and items.json()["items"][0]["content"] == anything
    event = world.agent.post(f"/api/v1/runs/{world.run.pk}/events/", {"kind": "k", "data": anything,
                                                                    "lease_owner": world.run.lease_owner})
    assert event.status_code == 201 and event.json()["data"] == anything
    checkpoint = world.agent.post("/api/v1/checkpoints/", {"run": world.run.pk, "lease_owner": world.run.lease_owner,
                                                           "state": anything,
                                                           "cursor": anything, "pending_gate": anything})
    assert checkpoint.status_code == 201 and checkpoint.json()["state"] == anything
    task = world.agent.post("/api/v1/tasks/", {"objective": "o", "constraints": [anything], "artifact_refs": anything})
    assert task.status_code == 201 and task.json()["constraints"] == [anything]


@pytest.mark.django_db
def test_an_operation_without_a_body_takes_no_field(world: World) -> None:
    from tests.api.test_access import _webhook

    path = f"/api/v1/webhooks/{_webhook(world).pk}/deactivate/"
    assert_refused_and_nothing_written(world.agent, "POST", path, {"active": False}, ["active"])
    assert world.agent.post(path).status_code == 200


@pytest.mark.django_db
def test_many_unknown_fields_get_a_short_answer(world: World) -> None:
    from harness.http.body import MAX_NAMED

    body = {f"f{n}": n for n in range(500)}
    response = world.agent.post("/api/v1/sessions/", body)
    assert response.status_code == 400 and response.json()["code"] == "unknown_field"
    assert response.json()["unknown_fields"] == [f"f{n}" for n in range(MAX_NAMED)]
    assert f"and {500 - MAX_NAMED} more" in response.json()["detail"]


# --- the schema says so ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_schema_closes_every_request_body_and_documents_the_refusal() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    for path, ops in schema["paths"].items():
        for method, operation in ops.items():
            if method not in ("post", "put", "patch") or "requestBody" not in operation:
                continue
            ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert components[ref.rsplit("/", 1)[1]]["additionalProperties"] is False, (method, path)
            assert "unknown_field" in operation["responses"]["400"]["description"]
    assert components["ItemInRequest"]["additionalProperties"] is False  # nested: each appended item
    assert components["PacketInputRequest"]["additionalProperties"] is False
    assert components["CheckpointInRequest"]["properties"]["state"]["additionalProperties"] != False  # noqa: E712
    assert "unknown_fields" in components["Error"]["properties"]

