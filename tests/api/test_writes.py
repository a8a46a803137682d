"""What writes through the API do: server-owned fields stay the server's, CAS, items, effects, limits."""

import json
import re

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command

from harness.actors import Actor
from harness.canonical import digest
from harness.models import ApiToken, Project
from runs_app.models import ApprovalRequest, ExternalEffect, Run, Task
from runs_app.services import run_transition
from sessions_app.models import Session, SessionItem
from tests.api.conftest import ApiClient, World

pytestmark = pytest.mark.django_db


# --- mass assignment: a field the server sets is refused (400 unknown_field), never taken nor dropped ---


def _refused(client: ApiClient, method: str, path: str, body: dict, server_set: list[str], model: type) -> None:
    """The body with the server's fields is 400 unknown_field naming each one, and no row was written."""
    before = model.objects.count()
    response = client.call(method, path, body)
    assert response.status_code == 400, response.content
    assert (response.json()["code"], response.json()["unknown_fields"]) == ("unknown_field", server_set)
    assert model.objects.count() == before
    for name in server_set:
        body.pop(name)


def test_a_new_session_may_not_set_server_fields(world: World, other_world: World) -> None:
    body = {"role": "writer", "status": "completed", "version": 99, "last_seq": 7, "project": "globex", "id": 1}
    _refused(world.agent, "POST", "/api/v1/sessions/", body, ["status", "version", "last_seq", "project", "id"],
             Session)
    response = world.agent.post("/api/v1/sessions/", body)
    assert response.status_code == 201
    session = Session.objects.get(pk=response.json()["id"])
    assert (session.status, session.version, session.last_seq, session.project) == ("created", 1, 0, world.project)


def test_a_new_run_may_not_set_status_lease_or_version(world: World) -> None:
    body = {"session": world.session.pk, "status": "succeeded", "version": 50, "lease_owner": "me",
            "lease_expires_at": "2099-01-01T00:00:00Z", "tokens_used": 5, "bound_result": {"x": 1}}
    _refused(world.agent, "POST", "/api/v1/runs/", body,
             ["status", "version", "lease_owner", "lease_expires_at", "tokens_used", "bound_result"], Run)
    response = world.agent.post("/api/v1/runs/", body)
    assert response.status_code == 201
    run = Run.objects.get(pk=response.json()["id"])
    assert (run.status, run.version, run.lease_owner, run.tokens_used, run.bound_result) == ("created", 1, "", 0, None)


def test_appended_items_may_not_set_their_seq(world: World) -> None:
    items = [{"role": "user", "content": "a", "seq": 100}, {"role": "assistant", "content": {"t": "b"}, "seq": 1}]
    path = f"/api/v1/sessions/{world.session.pk}/items/"
    response = world.agent.post(path, {"items": items})
    assert response.status_code == 400
    assert response.json()["unknown_fields"] == ["items[0].seq", "items[1].seq"]
    assert not SessionItem.objects.filter(session=world.session).exists()
    response = world.agent.post(path, {"items": [{k: v for k, v in i.items() if k != "seq"} for i in items]})
    assert response.status_code == 201
    assert [i["seq"] for i in response.json()["items"]] == [1, 2]
    assert list(SessionItem.objects.filter(session=world.session).values_list("seq", flat=True)) == [1, 2]


def test_an_approval_request_cannot_arrive_decided(world: World) -> None:
    body = {"tool": "t", "idempotency_key": "k", "status": "approved", "decided_by": 1,
            "approved_fingerprint": "f" * 64, "action_fingerprint": "0" * 64}
    path = f"/api/v1/runs/{world.running_run.pk}/approvals/"
    _refused(world.agent, "POST", path, body,
             ["status", "decided_by", "approved_fingerprint", "action_fingerprint"], ApprovalRequest)
    assert Run.objects.get(pk=world.running_run.pk).status == "running"
    response = world.agent.post(path, body)
    assert response.status_code == 201
    approval = ApprovalRequest.objects.get(pk=response.json()["id"])
    assert (approval.status, approval.decided_by, approval.approved_fingerprint) == ("pending", None, "")
    assert Run.objects.get(pk=world.running_run.pk).status == "waiting_approval"


def test_an_effect_intent_may_not_set_its_result_or_receipt(world: World) -> None:
    body = {"idempotency_key": "e-9", "tool": "t", "status": "consumed", "result_hash": "a" * 64, "receipt": "r"}
    _refused(world.agent, "POST", "/api/v1/effects/", body, ["status", "result_hash", "receipt"], ExternalEffect)
    response = world.agent.post("/api/v1/effects/", body)
    assert response.status_code == 201
    effect = ExternalEffect.objects.get(pk=response.json()["id"])
    assert (effect.status, effect.result_hash, effect.receipt) == ("intended", "", "")


def test_a_task_save_may_not_set_status_and_uses_expected_version(world: World) -> None:
    body = {"expected_version": world.task.version, "status": "completed", "version": 40, "plan": ["x"]}
    path = f"/api/v1/tasks/{world.task.pk}/"
    _refused(world.agent, "PATCH", path, body, ["status", "version"], Task)
    assert Task.objects.get(pk=world.task.pk).version == world.task.version
    response = world.agent.patch(path, body)
    assert response.status_code == 200
    task = Task.objects.get(pk=world.task.pk)
    assert (task.status, task.version, task.plan) == ("open", world.task.version + 1, ["x"])


def test_a_checkpoint_hash_and_depth_are_computed(world: World) -> None:
    from runs_app.models import Checkpoint

    body = {"run": world.run.pk, "lease_owner": world.run.lease_owner,
            "parent": world.checkpoint.pk, "content_hash": "0" * 64, "depth": 9}
    _refused(world.agent, "POST", "/api/v1/checkpoints/", body, ["content_hash", "depth"], Checkpoint)
    response = world.agent.post("/api/v1/checkpoints/", body)
    assert response.status_code == 201
    assert response.json()["depth"] == 1


# --- compare-and-set and conflicts in the one error shape ---------------------------------------------


def test_a_stale_task_version_is_409_with_the_current_version(world: World) -> None:
    stale = world.task.version
    assert world.agent.patch(f"/api/v1/tasks/{world.task.pk}/", {"expected_version": stale}).status_code == 200
    response = world.agent.patch(f"/api/v1/tasks/{world.task.pk}/", {"expected_version": stale, "plan": []})
    assert response.status_code == 409
    assert response.json() == {
        "code": "version_conflict", "detail": response.json()["detail"],
        "current_status": "open", "current_version": stale + 1,
    }


def test_an_illegal_run_transition_is_409(world: World) -> None:
    response = world.agent.post(
        f"/api/v1/runs/{world.run.pk}/transition/", {"to": "succeeded", "expected_version": world.run.version}
    )
    assert response.status_code == 409
    assert response.json()["code"] == "illegal_transition"
    assert response.json()["current_status"] == "created"


def test_an_agent_cannot_resume_a_run_waiting_for_approval(world: World) -> None:
    run = world.waiting_run
    body = {"to": "running", "expected_version": run.version}
    response = world.agent.post(f"/api/v1/runs/{run.pk}/transition/", body)
    assert response.status_code == 409
    assert response.json()["code"] == "worker_only_transition"


def test_a_heartbeat_after_the_lease_is_lost_is_409(world: World) -> None:
    world.agent.post(f"/api/v1/runs/{world.running_run.pk}/claim/", {"owner": "a", "lease_seconds": 30})
    response = world.agent.post(f"/api/v1/runs/{world.running_run.pk}/heartbeat/", {"owner": "b"})
    assert response.status_code == 409
    assert response.json()["code"] == "lease_lost"


def test_an_optimistic_append_with_a_stale_seq_is_409(world: World) -> None:
    path = f"/api/v1/sessions/{world.session.pk}/items/"
    first = world.agent.post(path, {"items": [{"role": "user", "content": 1}], "expected_last_seq": 0})
    assert first.status_code == 201
    response = world.agent.post(path, {"items": [{"role": "user", "content": 2}], "expected_last_seq": 0})
    assert response.status_code == 409
    assert (response.json()["code"], response.json()["last_seq"]) == ("seq_conflict", 1)


def test_items_and_events_page_with_a_cursor_and_a_limit(world: World) -> None:
    path = f"/api/v1/sessions/{world.session.pk}/items/"
    world.agent.post(path, {"items": [{"role": "user", "content": n} for n in range(5)]})
    first = world.agent.get(f"{path}?limit=2").json()
    assert [i["seq"] for i in first["results"]] == [1, 2]
    second = world.agent.get(first["next"]).json()
    assert [i["seq"] for i in second["results"]] == [3, 4]
    events = world.agent.get(f"/api/v1/runs/{world.waiting_run.pk}/events/?limit=1").json()
    assert len(events["results"]) == 1 and events["next"]


def test_runs_filter_by_status_and_session(world: World) -> None:
    response = world.agent.get(f"/api/v1/runs/?status=waiting_approval&session={world.session.pk}")
    assert [r["id"] for r in response.json()["results"]] == [world.waiting_run.pk]
    assert world.agent.get("/api/v1/runs/?status=nonsense").status_code == 400


def test_a_duplicate_ref_is_409_not_500(world: World) -> None:
    response = world.agent.post("/api/v1/sessions/", {"ref": world.session.ref})
    assert response.status_code == 409
    assert response.json()["code"] == "already_exists"


def test_a_checkpoint_parent_from_another_lineage_is_refused(world: World) -> None:
    other_run = world.running_run
    response = world.agent.post("/api/v1/checkpoints/", {"run": other_run.pk, "parent": world.checkpoint.pk})
    assert response.status_code == 400
    assert response.json()["code"] == "parent_not_in_lineage"


def test_lineage_lists_ancestors_newest_first(world: World) -> None:
    child = world.agent.post("/api/v1/checkpoints/", {"run": world.run.pk, "lease_owner": world.run.lease_owner,
                                                      "parent": world.checkpoint.pk}).json()
    grandchild = world.agent.post("/api/v1/checkpoints/", {"run": world.run.pk, "lease_owner": world.run.lease_owner,
                                                           "parent": child["id"]}).json()
    lineage = world.agent.get(f"/api/v1/checkpoints/{grandchild['id']}/lineage/").json()
    assert [c["id"] for c in lineage] == [grandchild["id"], child["id"], world.checkpoint.pk]


def test_an_approval_for_a_run_that_cannot_wait_leaves_nothing_behind(world: World) -> None:
    response = world.agent.post(f"/api/v1/runs/{world.run.pk}/approvals/", {"tool": "t", "idempotency_key": "k"})
    assert response.status_code == 409
    assert (response.json()["code"], response.json()["current_status"]) == ("illegal_transition", "created")
    assert not ApprovalRequest.objects.filter(run=world.run).exists()


def test_the_agent_reads_the_reviewers_decision(world: World) -> None:
    decided = world.reviewer.post(
        f"/api/v1/approvals/{world.approval.pk}/decision/",
        {"decision": "reject", "reason": "No.", "expected_version": world.approval.version},
    )
    assert decided.status_code == 200
    seen = world.agent.get(f"/api/v1/approvals/{world.approval.pk}/").json()
    assert (seen["status"], seen["decision_reason"], seen["decided_by"]) == ("rejected", "No.", "acme-reviewer")
    again = world.reviewer.post(f"/api/v1/approvals/{world.approval.pk}/decision/",
                                {"decision": "approve", "expected_version": world.approval.version})
    assert again.status_code == 409
    assert again.json()["code"] == "already_decided"


# --- external effects: consume once ------------------------------------------------------------------


def test_the_same_result_twice_is_consumed_once_with_one_receipt(world: World) -> None:
    body = {"idempotency_key": world.effect.idempotency_key, "result": {"id": 42}}
    first = world.agent.post("/api/v1/effects/deliver/", body)
    second = world.agent.post("/api/v1/effects/deliver/", {**body, "result_hash": digest({"id": 42})})
    assert (first.status_code, second.status_code) == (200, 200)
    assert (first.json()["outcome"], second.json()["outcome"]) == ("consumed", "already_consumed")
    assert first.json()["receipt"] and first.json()["receipt"] == second.json()["receipt"]
    assert ExternalEffect.objects.get(pk=world.effect.pk).status == "consumed"


def test_a_different_result_hash_is_409_and_blocks_the_run(world: World) -> None:
    key = world.effect.idempotency_key
    first = world.agent.post("/api/v1/effects/deliver/", {"idempotency_key": key, "result": {"id": 42}})
    assert first.status_code == 200
    response = world.agent.post("/api/v1/effects/deliver/", {"idempotency_key": key, "result": {"id": 43}})
    assert response.status_code == 409
    assert response.json()["code"] == "effect_conflict"
    assert response.json()["run_status"] == "blocked"
    effect = ExternalEffect.objects.get(pk=world.effect.pk)
    run = Run.objects.get(pk=world.running_run.pk)
    assert (effect.status, effect.conflicting_hash) == ("conflict", digest({"id": 43}))
    assert (run.status, run.blocked_step) == ("blocked", "effect_conflict")


def test_a_client_hash_that_does_not_match_the_result_is_400(world: World) -> None:
    body = {"idempotency_key": world.effect.idempotency_key, "result": {"id": 1}, "result_hash": "0" * 64}
    response = world.agent.post("/api/v1/effects/deliver/", body)
    assert response.status_code == 400
    assert response.json()["code"] == "result_hash_mismatch"


def test_intending_the_same_key_twice_returns_the_first_record(world: World) -> None:
    body = {"idempotency_key": world.effect.idempotency_key, "tool": "publish", "arguments": {"n": 1},
            "run": world.running_run.pk}
    response = world.agent.post("/api/v1/effects/", body)
    assert response.status_code == 200
    assert response.json()["id"] == world.effect.pk
    reused = world.agent.post("/api/v1/effects/", {**body, "arguments": {"n": 2}})
    assert (reused.status_code, reused.json()["code"]) == (409, "idempotency_key_reused")


# --- hostile input: limits, never a 500 -------------------------------------------------------------


def test_a_body_over_the_cap_is_413(world: World, settings) -> None:  # type: ignore[no-untyped-def]
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    response = world.agent.post("/api/v1/sessions/", {"metadata": {"blob": "x" * 4096}})
    assert response.status_code == 413
    assert response.json()["code"] == "body_too_large"


def test_json_nested_deeper_than_the_cap_is_400(world: World) -> None:
    deep = "[" * 5000 + "]" * 5000
    response = world.agent.post_raw("/api/v1/sessions/", f'{{"metadata": {{"a": {deep}}}}}')
    assert response.status_code == 400
    assert response.json()["code"] == "json_too_deep"


def test_brackets_inside_strings_do_not_count_as_nesting(world: World) -> None:
    response = world.agent.post("/api/v1/sessions/", {"metadata": {"text": "[" * 500 + '"{'}})
    assert response.status_code == 201


@pytest.mark.parametrize("value", ["nul\u0000byte", "lone \ud800 surrogate"])
def test_text_postgresql_cannot_store_is_400(world: World, value: str) -> None:
    raw = json.dumps({"metadata": {"k": value}})
    response = world.agent.post_raw("/api/v1/sessions/", raw)
    assert response.status_code == 400
    assert response.json()["code"] == "parse_error"


def test_non_finite_numbers_are_400(world: World) -> None:
    response = world.agent.post_raw("/api/v1/runs/", '{"session": 1, "cursor": {"x": 1e999}}')
    assert response.status_code == 400


def test_ids_too_big_for_the_database_are_404_or_400(world: World) -> None:
    assert world.agent.get(f"/api/v1/runs/{10**30}/").status_code == 404
    assert world.agent.post("/api/v1/runs/", {"session": 10**30}).status_code == 400


def test_malformed_json_is_400(world: World) -> None:
    response = world.agent.post_raw("/api/v1/sessions/", "{nope")
    assert (response.status_code, response.json()["code"]) == (400, "parse_error")


# --- schema, docs, tokens --------------------------------------------------------------------------


def test_the_schema_and_offline_docs_are_served(anonymous: ApiClient) -> None:
    schema = anonymous.get("/api/schema/?format=json")
    assert schema.status_code == 200
    assert "/api/v1/runs/{id}/claim/" in schema.json()["paths"]
    docs = anonymous.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "drf_spectacular_sidecar/swagger-ui-dist" in html
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html
    # Every asset the page loads ships in an installed package (drf-spectacular-sidecar).
    assets = re.findall(r'(?:src|href)="/static/([^"]+)"', html)
    assert assets and all(finders.find(asset) for asset in assets), assets


def test_create_agent_token_creates_the_project_and_prints_a_working_token(capsys) -> None:  # type: ignore[no-untyped-def]
    call_command("create_agent_token", "--project", "newco", "--name", "writer-bot")
    secret = capsys.readouterr().out.strip().splitlines()[-1]
    token = ApiToken.objects.get(name="writer-bot")
    assert token.digest == ApiToken.hash_secret(secret) and secret not in (token.digest, token.prefix)
    assert (token.project, token.kind, token.role) == (Project.objects.get(slug="newco"), "agent", "agent")
    response = ApiClient(secret).post("/api/v1/sessions/", {"role": "writer"})
    assert (response.status_code, response.json()["project"]) == (201, "newco")


def test_a_reader_token_from_the_command_reads_but_does_not_write(capsys, world: World) -> None:  # type: ignore[no-untyped-def]
    call_command("create_agent_token", "--project", "acme", "--name", "dash", "--role", "reader")
    client = ApiClient(capsys.readouterr().out.strip().splitlines()[-1])
    assert client.get(f"/api/v1/runs/{world.run.pk}/").status_code == 200
    assert client.post("/api/v1/sessions/", {}).status_code == 403


def test_a_blocked_run_can_be_failed_by_the_agent(world: World) -> None:
    run_transition(project=world.project, run_id=world.running_run.pk, to="blocked", expected_version=None,
                   blocked_step="x", actor=Actor.for_worker("worker:test"))
    run = Run.objects.get(pk=world.running_run.pk)
    response = world.agent.post(f"/api/v1/runs/{run.pk}/transition/",
                                {"to": "failed", "expected_version": run.version, "error": {"why": "gave up"}})
    assert response.status_code == 200
    assert response.json()["status"] == "failed"
