"""The LangGraph store's operations on memory (issue 34, part 2): a key per record within a namespace, put through
the write policy with supersede, search on the full-text index with filters and paging, namespaces, TTL as
freshness, delete as a tombstone erasure scrubs, and the scopes a token may reach."""

import datetime as dt
import json
from typing import Any
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from harness.actors import Actor
from memory_app.models import MemoryRecord, MemoryStatus, MemoryWritePolicy
from memory_app.services import memory_erase
from runs_app.models import Run
from sessions_app.models import Session
from tests import factories
from tests.api.conftest import ApiClient, World
from tests.api.test_narrowed_tokens import for_user

ITEMS = "/api/v1/memory/store/items/"


def put(client: ApiClient, namespace: list[str], key: str, value: dict[str, Any], **extra: Any) -> Any:
    return client.post(ITEMS, {"namespace": namespace, "key": key, "value": value, "graph": {"thread_id": "t-1"},
                               **extra})


def get(client: ApiClient, namespace: list[str], key: str, **extra: Any) -> Any:
    return client.get(f"{ITEMS}?{urlencode({'namespace': namespace, 'key': key, **extra}, doseq=True)}")


def search(client: ApiClient, prefix: list[str], **params: Any) -> Any:
    if "filter" in params:
        params["filter"] = json.dumps(params["filter"])
    response = client.get(f"/api/v1/memory/store/search/?{urlencode({'namespace_prefix': prefix, **params}, True)}")
    assert response.status_code == 200, response.content
    return response.json()


def namespaces(client: ApiClient, **params: Any) -> list[list[str]]:
    response = client.get(f"/api/v1/memory/store/namespaces/?{urlencode(params, doseq=True)}")
    assert response.status_code == 200, response.content
    found: list[list[str]] = response.json()["namespaces"]
    return found


@pytest.mark.django_db
def test_a_put_of_a_new_value_supersedes_the_old_and_the_chain_keeps_it(world: World) -> None:
    first = put(world.agent, ["project", "prefs"], "tone", {"text": "dry"})
    assert first.status_code == 201, first.content
    assert first.json()["outcome"] == "accepted"
    second = put(world.agent, ["project", "prefs"], "tone", {"text": "warm"})
    assert second.status_code == 201
    read = get(world.agent, ["project", "prefs"], "tone")
    assert read.status_code == 200
    assert read.json()["value"] == {"text": "warm"}
    assert read.json()["namespace"] == ["project", "prefs"]
    old = MemoryRecord.objects.get(pk=first.json()["record"]["id"])
    assert old.status == MemoryStatus.SUPERSEDED and old.superseded_by_id == second.json()["record"]["id"]
    chain = world.agent.get(f"/api/v1/memory/records/{read.json()['id']}/chain/").json()
    assert chain["before"] == [old.pk]
    # The same value again is confirmed, not stored twice.
    again = put(world.agent, ["project", "prefs"], "tone", {"text": "warm"})
    assert again.status_code == 200 and again.json()["outcome"] == "merged"
    assert again.json()["record"]["id"] == read.json()["id"]
    # Another key, or the same key in another namespace, is another item, even with the same value.
    assert put(world.agent, ["project", "other"], "tone", {"text": "warm"}).status_code == 201
    assert put(world.agent, ["project", "prefs"], "pace", {"text": "warm"}).status_code == 201


@pytest.mark.django_db
def test_a_held_put_waits_in_the_operators_queue_and_its_approval_replaces_the_value(world: World) -> None:
    assert put(world.agent, ["project", "facts"], "sea", {"text": "north"}).status_code == 201
    MemoryWritePolicy.objects.create(project=world.project, scope="project", decision="hold")
    held = put(world.agent, ["project", "facts"], "sea", {"text": "south"})
    assert held.status_code == 201 and held.json()["outcome"] == "held", held.content
    assert held.json()["code"] == "held_for_review"
    assert get(world.agent, ["project", "facts"], "sea").json()["value"] == {"text": "north"}
    queue = world.operator.get(f"/api/v1/memory/held/?project={world.project.slug}").json()["results"]
    assert [r["id"] for r in queue] == [held.json()["record"]["id"]]
    same = put(world.agent, ["project", "facts"], "sea", {"text": "south"})  # the held value again: still held
    assert (same.status_code, same.json()["outcome"]) == (201, "held")
    assert same.json()["record"]["id"] == held.json()["record"]["id"]
    second = put(world.agent, ["project", "facts"], "sea", {"text": "east"})
    assert second.status_code == 409 and second.json()["code"] == "store_key_held"
    decided = world.operator.post(f"/api/v1/memory/records/{held.json()['record']['id']}/review/",
                                  {"decision": "approve", "expected_version": same.json()["record"]["version"]})
    assert decided.status_code == 200, decided.content
    assert get(world.agent, ["project", "facts"], "sea").json()["value"] == {"text": "south"}
    assert MemoryRecord.objects.filter(key="sea", status="superseded").count() == 1


@pytest.mark.django_db
def test_the_policy_judges_the_value_and_a_rejection_stores_nothing(world: World) -> None:
    MemoryWritePolicy.objects.create(project=world.project, scope="project", blocked_patterns=["password"])
    refused = put(world.agent, ["project", "x"], "k", {"note": "the password is hunter2"})
    assert refused.status_code == 422 and refused.json()["code"] == "blocked_pattern"
    assert not MemoryRecord.objects.filter(key="k").exists()
    # No provenance at all (no graph, run, session or person) is refused by the default policy.
    bare = world.agent.post(ITEMS, {"namespace": ["project", "x"], "key": "k", "value": {"a": 1}})
    assert bare.status_code == 422 and bare.json()["code"] == "provenance_required"


@pytest.mark.django_db
def test_a_put_inside_a_thread_names_its_run_and_node_and_obeys_its_sessions_policy(world: World) -> None:
    run = Run.objects.get(pk=world.run.pk)
    Run.objects.filter(pk=run.pk).update(ref="thread-9")
    graph = {"thread_id": "thread-9", "checkpoint_ns": "", "checkpoint_id": "c-1", "node": "remember"}
    made = put(world.agent, ["project", "g"], "k", {"a": 1}, graph=graph)
    assert made.status_code == 201, made.content
    provenance = made.json()["record"]["provenance"]
    assert provenance["run"] == run.pk and provenance["graph"] == graph
    # A thread whose session keeps no memory (HarnessSaver's default, checkpoint_only) refuses the put.
    Session.objects.filter(pk=run.session_id).update(memory_policy="checkpoint_only")
    refused = put(world.agent, ["project", "g"], "k2", {"a": 2}, graph=graph)
    assert refused.status_code == 422 and refused.json()["code"] == "session_keeps_no_memory"


@pytest.mark.django_db
def test_search_filters_on_values_matches_full_text_and_pages(world: World) -> None:
    for n in range(5):
        put(world.agent, ["user", "u-1", "notes"], f"n{n}", {"text": f"note {n} about {'cats' if n % 2 else 'dogs'}",
                                                             "n": n, "tag": {"kind": "even" if n % 2 == 0 else "odd"}})
    put(world.agent, ["user", "u-2", "notes"], "n0", {"text": "cats of u-2", "n": 9})
    everything = search(world.agent, ["user", "u-1"], limit=100)
    assert sorted(i["key"] for i in everything) == ["n0", "n1", "n2", "n3", "n4"]
    assert [i["key"] for i in search(world.agent, ["user"], filter={"n": 9})] == ["n0"]
    assert {i["key"] for i in search(world.agent, ["user", "u-1"], filter={"n": {"$gte": 3}})} == {"n3", "n4"}
    assert {i["key"] for i in search(world.agent, ["user", "u-1"], filter={"tag": {"kind": "odd"}})} == {"n1", "n3"}
    assert {i["key"] for i in search(world.agent, ["user", "u-1"], filter={"n": {"$ne": 0}})} == {"n1", "n2", "n3",
                                                                                                 "n4"}
    found = search(world.agent, ["user", "u-1"], query="cats")
    assert {i["key"] for i in found} == {"n1", "n3"} and all(i["score"] > 0 for i in found)
    pages = [search(world.agent, ["user", "u-1"], limit=2, offset=o) for o in (0, 2, 4)]
    assert [len(p) for p in pages] == [2, 2, 1]
    assert sorted(i["key"] for p in pages for i in p) == ["n0", "n1", "n2", "n3", "n4"]


@pytest.mark.django_db
def test_namespaces_list_with_prefix_suffix_wildcards_and_depth(world: World) -> None:
    for ns in (["project", "a", "x"], ["project", "a", "y"], ["project", "b"], ["user", "u-1", "x"]):
        assert put(world.agent, ns, "k", {"v": 1}).status_code == 201
    assert namespaces(world.agent) == [["project", "a", "x"], ["project", "a", "y"], ["project", "b"],
                                       ["user", "u-1", "x"]]
    assert namespaces(world.agent, prefix=["project", "a"]) == [["project", "a", "x"], ["project", "a", "y"]]
    assert namespaces(world.agent, suffix=["x"]) == [["project", "a", "x"], ["user", "u-1", "x"]]
    assert namespaces(world.agent, prefix=["*", "a"]) == [["project", "a", "x"], ["project", "a", "y"]]
    assert namespaces(world.agent, max_depth=2) == [["project", "a"], ["project", "b"], ["user", "u-1"]]
    assert namespaces(world.agent, limit=1, offset=1) == [["project", "a", "y"]]


@pytest.mark.django_db
def test_a_ttl_is_freshness_and_a_refreshing_read_renews_it(world: World) -> None:
    made = put(world.agent, ["project", "t"], "k", {"v": 1}, ttl_seconds=60).json()["record"]
    record = MemoryRecord.objects.get(pk=made["id"])
    assert record.ttl_seconds == 60 and record.expires_at is not None
    MemoryRecord.objects.filter(pk=record.pk).update(expires_at=timezone.now() + dt.timedelta(seconds=5))
    renewed = get(world.agent, ["project", "t"], "k", refresh_ttl="true").json()
    assert dt.datetime.fromisoformat(renewed["expires_at"]) > timezone.now() + dt.timedelta(seconds=50)
    MemoryRecord.objects.filter(pk=record.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert get(world.agent, ["project", "t"], "k").status_code == 404
    assert search(world.agent, ["project"]) == []
    # A put over a lapsed key supersedes it: the history stays.
    assert put(world.agent, ["project", "t"], "k", {"v": 2}).status_code == 201
    assert MemoryRecord.objects.get(pk=record.pk).status == MemoryStatus.SUPERSEDED


@pytest.mark.django_db
def test_delete_is_a_tombstone_that_erasure_scrubs(world: World) -> None:
    made = put(world.agent, ["user", "u-1"], "email", {"address": "a@example.com"}).json()["record"]
    deleted = world.agent.post("/api/v1/memory/store/items/delete/", {"namespace": ["user", "u-1"], "key": "email"})
    assert deleted.status_code == 200 and deleted.json() == {"deleted": [made["id"]]}
    assert get(world.agent, ["user", "u-1"], "email").status_code == 404
    tombstone = MemoryRecord.objects.get(pk=made["id"])
    assert tombstone.status == MemoryStatus.DELETED and tombstone.value == {"address": "a@example.com"}
    again = world.agent.post("/api/v1/memory/store/items/delete/", {"namespace": ["user", "u-1"], "key": "email"})
    assert again.json() == {"deleted": []}
    operator = factories.make_user("eraser", role="operator", projects=[world.project])
    memory_erase(project=world.project, actor=Actor.for_user(operator), record_id=made["id"])
    tombstone.refresh_from_db()
    assert (tombstone.value, tombstone.content, tombstone.key, tombstone.namespace) == (None, "", "", [])


@pytest.mark.django_db
def test_a_narrowed_token_reaches_only_its_users_namespaces(world: World) -> None:
    put(world.agent, ["user", "alice"], "k", {"v": "alice's"})
    put(world.agent, ["user", "bob"], "k", {"v": "bob's"})
    put(world.agent, ["project", "shared"], "k", {"v": "everyone's"})
    alice = for_user(world.agent, "alice")
    assert get(alice, ["user", "alice"], "k").json()["value"] == {"v": "alice's"}
    refused = get(alice, ["user", "bob"], "k")
    assert refused.status_code == 403 and refused.json()["code"] == "end_user_scope"
    assert {i["value"]["v"] for i in search(alice, [])} == {"alice's", "everyone's"}
    assert {tuple(ns) for ns in namespaces(alice)} == {("user", "alice"), ("project", "shared")}
    assert put(alice, ["user", "bob"], "k", {"v": "x"}).status_code == 403
    assert put(alice, ["project", "shared"], "k", {"v": "x"}).json()["code"] == "scope_read_only"
    deleted = alice.post("/api/v1/memory/store/items/delete/", {"namespace": ["user", "bob"], "key": "k"})
    assert deleted.status_code == 403
    assert put(alice, ["user", "alice"], "k2", {"v": "mine"}).status_code == 201


@pytest.mark.django_db
def test_another_agents_scope_is_not_reachable(world: World) -> None:
    assert put(world.agent, ["agent", "acme-agent"], "k", {"v": 1}).status_code == 201
    other = ApiClient(factories.make_agent_token(world.project, name="second")[1])
    assert get(other, ["agent", "acme-agent"], "k").json()["code"] == "agent_scope_not_yours"
    assert search(other, ["agent"]) == []
    assert put(other, ["agent", "acme-agent"], "k", {"v": 2}).status_code == 403


@pytest.mark.django_db
def test_a_namespace_must_name_its_scope(world: World) -> None:
    for ns in (["memories"], ["user"], [], ["project", ""], ["project", "*"]):
        response = put(world.agent, ns, "k", {"v": 1})
        assert response.status_code == 400, (ns, response.content)
    assert world.reader.post(ITEMS, {"namespace": ["project"], "key": "k", "value": {}}).status_code == 403


@pytest.mark.django_db
def test_a_held_put_shows_in_the_consoles_queue_and_accepting_it_there_replaces_the_value(world: World) -> None:
    from django.test import Client

    put(world.agent, ["user", "u-1", "prefs"], "tea", {"text": "green"})
    MemoryWritePolicy.objects.create(project=world.project, scope="user", decision="hold")
    held = put(world.agent, ["user", "u-1", "prefs"], "tea", {"text": "black"}).json()["record"]
    operator = factories.make_user("console-op", role="operator", projects=[world.project])
    browser = Client()
    browser.force_login(operator)
    page = browser.get("/memory/held/")
    assert page.status_code == 200
    assert "user / u-1 / prefs · tea" in page.content.decode() and "black" in page.content.decode()
    detail = browser.get(f"/memory/{held['id']}/")
    assert detail.status_code == 200 and "user / u-1 / prefs · tea" in detail.content.decode()
    decided = browser.post(f"/memory/held/{held['id']}/review/", {"decision": "accept", "version": 1})
    assert decided.status_code == 302
    assert get(world.agent, ["user", "u-1", "prefs"], "tea").json()["value"] == {"text": "black"}


@pytest.mark.django_db
def test_erasure_scrubs_a_puts_stored_reply_too(world: World) -> None:
    from harness.models import IdempotentRequest

    made = world.agent.post(ITEMS, {"namespace": ["user", "u-9"], "key": "phone", "value": {"number": "555-0101"},
                                    "graph": {"thread_id": "t"}}, HTTP_IDEMPOTENCY_KEY="put-phone").json()["record"]
    operator = factories.make_user("eraser-2", role="operator", projects=[world.project])
    memory_erase(project=world.project, actor=Actor.for_user(operator), record_id=made["id"])
    reply = IdempotentRequest.objects.get(key="put-phone").response_body
    assert reply["record"]["value"] is None and reply["record"]["key"] == ""
    assert "555-0101" not in json.dumps(reply)


@pytest.mark.django_db(transaction=True)
def test_concurrent_puts_to_one_key_leave_one_value_and_a_linear_history(project: Any) -> None:
    from memory_app.services import memory_put
    from tests.threads import run_concurrently

    actor = Actor.for_agent("racer")

    def put_one(i: int) -> Any:
        return memory_put(project=project.pk, actor=actor, namespace=["project", "race"], key="k", value={"n": i},
                          graph={"thread_id": f"t-{i}"})

    results = run_concurrently(6, put_one)
    landed = [r for r in results if not isinstance(r, Exception)]
    assert all(r.outcome == "accepted" for r in landed), results
    records = list(MemoryRecord.objects.filter(project=project, key="k").order_by("pk"))
    assert len(records) == len(landed)
    assert [r.status for r in records].count("active") == 1
    # Each superseded version points at exactly one successor, and every version but the first has a predecessor.
    successors = [r.superseded_by_id for r in records if r.status == "superseded"]
    assert len(successors) == len(set(successors)) == len(records) - 1
    # A put that lost every retry says so (409 write_race); none is lost silently.
    assert all(getattr(r, "code", "write_race") == "write_race" for r in results if isinstance(r, Exception))
