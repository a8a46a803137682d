"""The memory API: every endpoint for the owner, another project, anonymous and the wrong role; then behaviour."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from harness.actors import Actor
from memory_app.context import context_project
from memory_app.models import ContextSnapshot, MemoryRecord, MemoryWritePolicy
from memory_app.services import memory_write
from tests import factories

pytestmark = pytest.mark.django_db


@dataclass
class World:
    project: Any
    run: Any
    record: MemoryRecord
    held: MemoryRecord
    snapshot: ContextSnapshot
    tokens: dict[str, str]


@pytest.fixture
def world(project, other_project) -> World:  # type: ignore[no-untyped-def]
    # An `external` session: its context holds memory retrieved on request (memory_app.context).
    run = factories.make_run(project, factories.make_session(project, memory_policy="external"), active_agent="agent-1")
    tokens = {
        "agent": factories.make_agent_token(project, "agent-1")[1],
        "reader_agent": factories.make_agent_token(project, "watcher", role="reader")[1],
        "other_agent": factories.make_agent_token(other_project, "agent-1")[1],
        "operator": factories.make_personal_token(factories.make_user("olga", role="operator", projects=[project]))[1],
        "other_operator": factories.make_personal_token(
            factories.make_user("otto", role="operator", projects=[other_project]))[1],
        "admin": factories.make_personal_token(factories.make_user("ada", role="admin", projects=[project]))[1],
        "reviewer": factories.make_personal_token(factories.make_user("rita", role="reviewer", projects=[project]))[1],
    }
    agent = Actor.for_agent("agent-1")
    record = memory_write(project=project, actor=agent, scope="project", subject="sea",
                          content="The sea is north.", source_run_id=run.pk).record
    MemoryWritePolicy.objects.create(project=project, scope="user", decision="hold")
    held = memory_write(project=project, actor=agent, scope="user", scope_key="alice", content="Alice hums.",
                        source_run_id=run.pk).record
    snapshot = context_project(project=project, run_id=run.pk, budget_chars=500, query="sea")
    assert snapshot.memory_ids == [record.pk]
    assert record is not None and held is not None
    return World(project, run, record, held, snapshot, tokens)


def client_for(world: World, who: str) -> APIClient:
    client = APIClient()
    if who != "anonymous":
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {world.tokens[who]}")
    return client


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: Callable[[World], str]
    body: Callable[[World], dict] = lambda w: {}
    agents: bool = True  # agent tokens may call it (operators always may)
    ok: int = 200
    admins_only: bool = False  # operators who are not admins are refused (403)


BASE = "/api/v1/memory"
ENDPOINTS = [
    Endpoint("list", "get", lambda w: f"{BASE}/records/?project=acme"),
    Endpoint("write", "post", lambda w: f"{BASE}/records/",
             lambda w: {"project": "acme", "scope": "project", "content": "The lamp is lit.",
                        "source_run_id": w.run.pk}, ok=201),
    Endpoint("read", "get", lambda w: f"{BASE}/records/{w.record.pk}/"),
    Endpoint("chain", "get", lambda w: f"{BASE}/records/{w.record.pk}/chain/"),
    Endpoint("supersede", "post", lambda w: f"{BASE}/records/{w.record.pk}/supersede/",
             lambda w: {"content": "The sea is north-east.", "source_run_id": w.run.pk,
                        "expected_version": w.record.version, "reason": "r"}, ok=201),
    Endpoint("retrieve", "get", lambda w: f"{BASE}/retrieve/?project=acme&scope=project&q=sea"),
    Endpoint("conflicts", "get", lambda w: f"{BASE}/conflicts/?project=acme"),
    Endpoint("context", "post", lambda w: f"{BASE}/context/", lambda w: {"run_id": w.run.pk, "budget_chars": 300},
             ok=201),
    Endpoint("context-read", "get", lambda w: f"{BASE}/context/{w.snapshot.pk}/"),
    Endpoint("held", "get", lambda w: f"{BASE}/held/?project=acme", agents=False),
    Endpoint("review", "post", lambda w: f"{BASE}/records/{w.held.pk}/review/",
             lambda w: {"decision": "approve", "expected_version": w.held.version}, agents=False),
    Endpoint("expire", "post", lambda w: f"{BASE}/records/{w.record.pk}/expire/",
             lambda w: {"expected_version": w.record.version}, agents=False),
    Endpoint("delete", "post", lambda w: f"{BASE}/records/{w.record.pk}/delete/",
             lambda w: {"expected_version": 1, "reason": "r"}, agents=False),
    Endpoint("erase", "post", lambda w: f"{BASE}/records/{w.record.pk}/erase/", agents=False),
    Endpoint("bulk-delete", "post", lambda w: f"{BASE}/records/bulk-delete/",
             lambda w: {"project": "acme", "ids": [w.record.pk], "reason": "r"}, agents=False),
    Endpoint("bulk-expire", "post", lambda w: f"{BASE}/records/bulk-expire/",
             lambda w: {"project": "acme", "ids": [w.record.pk]}, agents=False),
    Endpoint("erase-person", "post", lambda w: f"{BASE}/erasures/",
             lambda w: {"project": "acme", "subject": "alice", "reason": "request 1"}, agents=False, admins_only=True),
]


def _call(world: World, who: str, endpoint: Endpoint) -> Any:
    client = client_for(world, who)
    if endpoint.method == "get":
        return client.get(endpoint.path(world))
    return client.post(endpoint.path(world), endpoint.body(world), format="json")


def _expected(endpoint: Endpoint, who: str) -> int:
    if who == "anonymous":
        return 401
    if who == "reviewer":
        return 403  # a console user without the operator role
    if who == "operator" and endpoint.admins_only:
        return 403
    if who in ("agent", "reader_agent") and not endpoint.agents:
        return 403
    if who == "reader_agent":
        return endpoint.ok if endpoint.method == "get" else 403
    if who in ("other_agent", "other_operator"):
        if who == "other_agent" and not endpoint.agents:
            return 403  # the role is refused before anything is looked up
        return 404
    return endpoint.ok


WHO = ["agent", "operator", "admin", "other_agent", "other_operator", "anonymous", "reviewer", "reader_agent"]


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.name for e in ENDPOINTS])
@pytest.mark.parametrize("who", WHO)
def test_access_matrix(world, endpoint, who):
    response = _call(world, who, endpoint)
    assert response.status_code == _expected(endpoint, who), response.content
    if response.status_code >= 400:
        assert set(response.json()) >= {"code", "detail"}
    if who in ("other_agent", "other_operator") and response.status_code == 404:
        assert "north" not in response.content.decode()


def test_the_write_reply_says_what_the_policy_decided_and_why(world):
    client = client_for(world, "agent")
    url = f"{BASE}/records/"
    body = {"scope": "project", "subject": "sea", "content": "The sea is south.", "source_run_id": world.run.pk}

    accepted = client.post(url, body, format="json")
    merged = client.post(url, {**body, "content": "the SEA is south."}, format="json")
    held = client.post(url, {**body, "scope": "user", "scope_key": "bob"}, format="json")
    rejected = client.post(url, {**body, "source_run_id": None}, format="json")

    assert accepted.status_code == 201 and accepted.json()["outcome"] == "accepted"
    assert accepted.json()["conflicts"] == [world.record.pk]  # same subject, other content
    assert accepted.json()["record"]["provenance"] == {
        "kind": "observed", "run": world.run.pk, "session": None, "item_seq": None, "person": None,
        "by": "agent:agent-1"}
    assert (merged.status_code, merged.json()["outcome"]) == (200, "merged")
    assert merged.json()["record"]["id"] == accepted.json()["record"]["id"]
    assert (held.status_code, held.json()["outcome"], held.json()["record"]["status"]) == (201, "held", "held")
    assert rejected.status_code == 422
    assert rejected.json()["code"] == "provenance_required" and rejected.json()["outcome"] == "rejected"
    assert rejected.json()["reason"]


def test_server_owned_fields_are_not_writable(world):
    body = {"scope": "project", "content": "Owned by the server.", "source_run_id": world.run.pk}
    server_owned = {"status": "deleted", "version": 99, "source_note": "agent:someone-else",
                    "superseded_by": world.record.pk}
    before = MemoryRecord.objects.count()
    response = client_for(world, "agent").post(f"{BASE}/records/", {**body, **server_owned}, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "unknown_field")  # refused, never dropped
    assert response.json()["unknown_fields"] == list(server_owned)
    assert MemoryRecord.objects.count() == before
    response = client_for(world, "agent").post(f"{BASE}/records/", body, format="json")
    record = response.json()["record"]
    assert (record["status"], record["version"], record["provenance"]["by"], record["superseded_by"]) == (
        "active", 1, "agent:agent-1", None)


def test_an_agent_supersedes_only_what_it_wrote_through_the_api(world, project):
    _, other_secret = factories.make_agent_token(project, "agent-2")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {other_secret}")
    response = client.post(f"{BASE}/records/{world.record.pk}/supersede/",
                           {"content": "Mine now.", "source_run_id": world.run.pk, "expected_version": 1},
                           format="json")
    assert (response.status_code, response.json()["code"]) == (403, "not_owner")


def test_a_conflict_then_an_operator_supersede_resolves_it(world):
    agent, operator = client_for(world, "agent"), client_for(world, "operator")
    south = agent.post(f"{BASE}/records/", {"scope": "project", "subject": "sea", "content": "The sea is south.",
                                           "source_run_id": world.run.pk}, format="json").json()["record"]
    [conflict] = operator.get(f"{BASE}/conflicts/?project=acme").json()
    assert {r["id"] for r in conflict["records"]} == {world.record.pk, south["id"]}

    response = operator.post(f"{BASE}/records/{world.record.pk}/supersede/",
                             {"replacement_id": south["id"], "expected_version": world.record.version}, format="json")

    assert (response.status_code, response.json()["id"]) == (201, south["id"])
    assert response.json()["supersedes"] == [world.record.pk]
    assert operator.get(f"{BASE}/conflicts/?project=acme").json() == []
    chain = operator.get(f"{BASE}/records/{world.record.pk}/chain/").json()
    assert (chain["before"], chain["after"]) == ([], [south["id"]])


def test_a_stale_version_is_a_409_with_the_current_state(world):
    response = client_for(world, "operator").post(f"{BASE}/records/{world.record.pk}/delete/",
                                                  {"expected_version": 7, "reason": "r"}, format="json")
    assert response.status_code == 409
    assert (response.json()["code"], response.json()["current_version"]) == ("version_conflict", 1)


def test_retrieval_returns_only_the_asked_scope(world):
    agent = client_for(world, "agent")
    agent.post(f"{BASE}/records/", {"scope": "agent", "scope_key": "agent-1", "content": "I keep notes on the sea.",
                                    "source_run_id": world.run.pk}, format="json")
    found = agent.get(f"{BASE}/retrieve/?scope=project&q=sea&k=5").json()
    assert [r["id"] for r in found] == [world.record.pk]
    missing_key = agent.get(f"{BASE}/retrieve/?scope=user")
    assert (missing_key.status_code, missing_key.json()["code"]) == (400, "scope_key_required")


def test_an_operator_by_login_session_needs_the_csrf_token(world):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(factories.make_user("sam", role="operator", projects=[world.project]))
    assert client.get(f"{BASE}/records/{world.record.pk}/").status_code == 200
    refused = client.post(f"{BASE}/records/{world.record.pk}/delete/", {}, format="json")
    assert refused.status_code == 403
    assert MemoryRecord.objects.get(pk=world.record.pk).status == "active"


def test_erase_through_the_api_leaves_no_content(world):
    response = client_for(world, "operator").post(f"{BASE}/records/{world.record.pk}/erase/", {}, format="json")
    assert response.status_code == 200 and response.json()["erased"] == [world.record.pk]
    read = client_for(world, "operator").get(f"{BASE}/records/{world.record.pk}/").json()
    assert (read["status"], read["content"], read["subject"]) == ("deleted", "", "")
    snapshot = client_for(world, "agent").get(f"{BASE}/context/{world.snapshot.pk}/").json()
    assert "north" not in str(snapshot["content"])


def test_a_retried_write_with_the_same_idempotency_key_is_answered_once(world):
    from harness.models import AuditEntry

    client = client_for(world, "agent")
    body = {"scope": "project", "content": "Written once.", "source_run_id": world.run.pk}
    first = client.post(f"{BASE}/records/", body, format="json", HTTP_IDEMPOTENCY_KEY="mem-1")
    again = client.post(f"{BASE}/records/", body, format="json", HTTP_IDEMPOTENCY_KEY="mem-1")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()  # the replay, not a "merged" second write
    assert AuditEntry.objects.filter(action__in=["memory.accepted", "memory.merged"],
                                     target_id=str(first.json()["record"]["id"])).count() == 1


def test_erase_also_wipes_the_content_from_stored_idempotent_replies(world):
    from harness.models import IdempotentRequest

    agent = client_for(world, "agent")
    written = agent.post(f"{BASE}/records/", {"scope": "project", "content": "Bob's PIN is 8812.",
                                              "source_run_id": world.run.pk}, format="json",
                         HTTP_IDEMPOTENCY_KEY="pin-1").json()["record"]
    context = agent.post(f"{BASE}/context/", {"run_id": world.run.pk, "budget_chars": 500, "query": "PIN"},
                         format="json", HTTP_IDEMPOTENCY_KEY="ctx-1")
    assert written["id"] in context.json()["memory_ids"]
    assert "8812" in str(list(IdempotentRequest.objects.values_list("response_body", flat=True)))

    client_for(world, "operator").post(f"{BASE}/records/{written['id']}/erase/", {}, format="json")

    assert "8812" not in str(list(IdempotentRequest.objects.values_list("response_body", flat=True)))
    replay = agent.post(f"{BASE}/records/", {"scope": "project", "content": "Bob's PIN is 8812.",
                                             "source_run_id": world.run.pk}, format="json",
                        HTTP_IDEMPOTENCY_KEY="pin-1")
    assert replay.status_code == 201 and replay.json()["record"]["content"] == ""
