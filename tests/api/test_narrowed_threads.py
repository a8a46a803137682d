"""Tokens narrowed to one end user on the doors a LangGraph graph serving that user calls (issue 30, part 2: "the
adapters use it"): its threads (ensure, checkpoint put, read and list, pending writes, delete), their runs' read,
usage reports and approval requests, and those approvals' reads. Another user's thread, run, checkpoint or approval
is absent (404, an empty list, nothing deleted); a write to a thread id another user's thread holds is 409
`thread_ref_taken`, naming nothing of that thread. Every other door stays closed (403 `narrowed_token_scope`)."""

import random
from typing import Any

import pytest

from runs_app.models import ApprovalRequest, Checkpoint, CheckpointWrite, Run
from sessions_app.models import Session
from tests.api.conftest import ApiClient, World
from tests.api.test_narrowed_tokens import _session_of, for_user

THREADS = "/api/v1/threads/"
PUT = "/api/v1/threads/checkpoints/"
READ = "/api/v1/threads/checkpoint/"
WRITES = "/api/v1/threads/writes/"
DELETE = "/api/v1/threads/delete/"

# Every operation outside memory a narrowed token may call: its view declares `narrowed_token_allowed` and confines
# it. A door added to this list is a deliberate decision, with its confinement tested; any other view refuses the
# token (403 narrowed_token_scope). (Memory's views admit it on every operation, each confined or refused by
# memory_app.scoping and the memory policy: tests/api/test_narrowed_tokens.py.)
NARROWED_DOORS = {
    # sessions and their items (sessions_app.api), the minting door (to say it cannot mint)
    "sessions_list", "sessions_create", "sessions_read", "sessions_transition", "session_items_list",
    "session_items_append", "session_items_latest", "session_items_pop", "session_items_clear", "session_items_trim",
    "session_items_compact", "tokens_narrow",
    # what HarnessSaver(end_user=...) calls (runs_app.api.threads, runs_app.api.runs and .approvals)
    "threads_ensure", "threads_checkpoints_list", "threads_checkpoints_put", "threads_checkpoint_read",
    "threads_writes_put", "threads_delete", "threads_copy", "threads_prune", "threads_delete_for_runs",
    "threads_ttl_read", "threads_ttl_set", "runs_read", "runs_usage_report", "approvals_request", "approvals_list",
    "approvals_read",
}


def _put(client: ApiClient, thread: str, checkpoint_id: str, by: str, parent: str | None = None) -> Any:
    return client.post(PUT, {"thread_id": thread, "checkpoint_id": checkpoint_id, "parent_checkpoint_id": parent,
                             "checkpoint": {"v": 4}, "channel_values": {"by": by},
                             "metadata": {"step": 0, "run_id": "lg-a"}})


def _thread_of(client: ApiClient, thread: str, by: str) -> Run:
    """A thread with one checkpoint `c00000` and one pending write, made through `client`'s token."""
    assert _put(client, thread, "c00000", by).status_code == 201
    wrote = client.post(WRITES, {"thread_id": thread, "checkpoint_id": "c00000", "task_id": "t", "writes": [[0, "a",
                                                                                                        by]]})
    assert wrote.status_code == 201, wrote.content
    return Run.objects.get(ref=thread)


def _approval_on(client: ApiClient, run: Run, key: str) -> int:
    response = client.post(f"/api/v1/runs/{run.pk}/approvals/", {"tool": "publish", "arguments": {"n": 1},
                                                                 "idempotency_key": key, "lease_owner": None})
    assert response.status_code == 201, response.content
    approval_id: int = response.json()["id"]
    return approval_id


@pytest.mark.django_db
def test_the_doors_a_narrowed_token_may_call_are_exactly_these() -> None:
    """Deny by default: the schema's operations whose views admit a narrowed token are NARROWED_DOORS, no more."""
    from drf_spectacular.generators import SchemaGenerator

    generator = SchemaGenerator()
    schema = generator.get_schema(request=None, public=True)
    admitted = set()
    for path, _regex, method, view in generator.endpoints:
        operation = schema["paths"].get(path.replace("{pk}", "{id}"), {}).get(method.lower())
        if (path.startswith("/api/v1/") and not path.startswith("/api/v1/memory/") and operation
                and getattr(view.cls, "narrowed_token_allowed", False)):
            admitted.add(operation["operationId"])
    assert admitted == NARROWED_DOORS


@pytest.mark.django_db
def test_a_narrowed_tokens_threads_are_tagged_with_its_user(world: World) -> None:
    alice = for_user(world.agent, "u-1")
    ensured = alice.post(THREADS, {"thread_id": "alice-1"})
    assert ensured.status_code == 200, ensured.content
    assert Session.objects.get(pk=ensured.json()["session"]).end_user == "u-1"
    # Its first checkpoint creates a thread too, tagged the same way.
    run = _thread_of(alice, "alice-2", "u-1")
    assert Session.objects.get(pk=run.session_id).end_user == "u-1"
    assert alice.post(THREADS, {"thread_id": "alice-1", "end_user": "u-1"}).json()["run"] == ensured.json()["run"]
    refused = alice.post(THREADS, {"thread_id": "alice-3", "end_user": "u-2"})
    assert (refused.status_code, refused.json()["code"]) == (403, "end_user_scope")
    assert not Run.objects.filter(ref="alice-3").exists()
    # The project's agent token names the end user a new thread serves; an existing thread must be that user's.
    tagged = world.agent.post(THREADS, {"thread_id": "bob-1", "end_user": "u-2"}).json()
    assert Session.objects.get(pk=tagged["session"]).end_user == "u-2"
    assert world.agent.post(THREADS, {"thread_id": "bob-1"}).json()["run"] == tagged["run"]
    mismatch = world.agent.post(THREADS, {"thread_id": "bob-1", "end_user": "u-3"})
    assert (mismatch.status_code, mismatch.json()["code"]) == (409, "thread_ref_taken")
    # And a thread the agent tagged for u-1 is u-1's narrowed token's.
    world.agent.post(THREADS, {"thread_id": "alice-by-agent", "end_user": "u-1"})
    assert _put(alice, "alice-by-agent", "c00000", "u-1").status_code == 201


@pytest.mark.django_db
def test_a_token_narrowed_to_one_session_keeps_its_threads_in_that_session(world: World) -> None:
    one, other = _session_of(world.project, "u-1", "one"), _session_of(world.project, "u-1", "other")
    confined = for_user(world.agent, "u-1", session=one.pk)
    run = _thread_of(confined, "in-one", "u-1")
    assert run.session_id == one.pk
    # A thread of the same user in another session is not this token's.
    everywhere = for_user(world.agent, "u-1")
    elsewhere = _thread_of(everywhere, "in-other", "u-1")
    assert elsewhere.session_id not in (one.pk, other.pk)
    assert confined.get(f"{READ}?thread_id=in-other").status_code == 404
    assert confined.get(f"/api/v1/runs/{elsewhere.pk}/").status_code == 404
    assert _put(confined, "in-other", "c00001", "u-1").json()["code"] == "thread_ref_taken"
    assert everywhere.get(f"{READ}?thread_id=in-one").status_code == 200


@pytest.mark.django_db
def test_another_users_thread_reads_as_absent_and_refuses_writes(world: World) -> None:
    """Every thread door, called by user B's token on user A's thread: nothing read, nothing written, and no answer
    names A's run, session or user."""
    from drf_spectacular.generators import SchemaGenerator

    alice, bob = for_user(world.agent, "u-a"), for_user(world.agent, "u-b")
    run = _thread_of(alice, "alice-t", "u-a")
    approval = _approval_on(alice, _thread_of(alice, "alice-waits", "u-a"), "ask-1")
    secrets = {str(run.pk), str(run.session_id), "u-a"}
    calls = {
        "threads_ensure": bob.post(THREADS, {"thread_id": "alice-t"}),
        "threads_checkpoints_put": _put(bob, "alice-t", "c00001", "u-b", parent="c00000"),
        "threads_writes_put": bob.post(WRITES, {"thread_id": "alice-t", "checkpoint_id": "c00000", "task_id": "x",
                                                "writes": [[0, "a", "u-b"]]}),
        "threads_checkpoint_read": bob.get(f"{READ}?thread_id=alice-t"),
        "threads_checkpoints_list": bob.get(f"{PUT}?thread_id=alice-t"),
        "threads_delete": bob.post(DELETE, {"thread_id": "alice-t"}),
        "threads_copy": bob.post(f"{THREADS}copy/", {"source_thread_id": "alice-t", "target_thread_id": "bob-t"}),
        "threads_prune": bob.post(f"{THREADS}prune/", {"thread_ids": ["alice-t"], "strategy": "delete"}),
        "threads_delete_for_runs": bob.post(f"{THREADS}delete-for-runs/", {"run_ids": ["lg-a"]}),
        "threads_ttl_read": bob.get(f"{THREADS}ttl/?thread_id=alice-t"),
        "threads_ttl_set": bob.post(f"{THREADS}ttl/", {"thread_id": "alice-t", "ttl_days": 1}),
    }
    schema = SchemaGenerator().get_schema(request=None, public=True)
    thread_ops = {op["operationId"] for path, ops in schema["paths"].items() if path.startswith(THREADS)
                  for op in ops.values() if isinstance(op, dict) and "operationId" in op}
    assert thread_ops == set(calls)  # a new thread door fails here until it is walked
    for name in ("threads_ensure", "threads_checkpoints_put", "threads_writes_put"):
        response = calls[name]
        assert (response.status_code, response.json()["code"]) == (409, "thread_ref_taken"), (name, response.content)
        assert set(response.json()) == {"code", "detail"}
    read = calls["threads_checkpoint_read"]
    assert (read.status_code, read.json()["code"]) == (404, "checkpoint_not_found")
    assert calls["threads_checkpoints_list"].json() == []
    assert calls["threads_delete"].json() == {"checkpoints": 0, "writes": 0}
    for name in ("threads_copy", "threads_ttl_read", "threads_ttl_set"):
        response = calls[name]
        assert (response.status_code, response.json()["code"]) == (404, "thread_not_found"), (name, response.content)
    for name in ("threads_prune", "threads_delete_for_runs"):
        assert calls[name].json() == {"checkpoints": 0, "writes": 0, "kept": []}, name
    assert not Run.objects.filter(ref="bob-t").exists() and Run.objects.get(pk=run.pk).thread_ttl_days is None
    for name, response in calls.items():
        assert not any(secret in response.content.decode() for secret in secrets), (name, response.content)
    # Bob's list of every thread is his own (none yet); Alice's thread is as she left it.
    assert bob.get(PUT).json() == []
    assert list(Checkpoint.objects.filter(run=run).values_list("external_id", flat=True)) == ["c00000"]
    assert list(CheckpointWrite.objects.filter(run=run).values_list("value", flat=True)) == ["u-a"]
    # Its run and its approval: absent.
    assert bob.get(f"/api/v1/runs/{run.pk}/").status_code == 404
    assert bob.get(f"/api/v1/approvals/{approval}/").status_code == 404
    assert bob.get("/api/v1/approvals/").json()["results"] == []
    assert [a["id"] for a in alice.get("/api/v1/approvals/").json()["results"]] == [approval]


@pytest.mark.django_db
def test_a_narrowed_token_works_its_own_threads_run(world: World) -> None:
    alice = for_user(world.agent, "u-a")
    run = _thread_of(alice, "alice-t", "u-a")
    assert alice.get(f"/api/v1/runs/{run.pk}/").json()["id"] == run.pk
    usage = alice.post(f"/api/v1/runs/{run.pk}/usage/", {"tokens": 7, "model": "m", "lease_owner": None})
    assert (usage.status_code, usage.json()["tokens_used"]) == (200, 7), usage.content
    approval = _approval_on(alice, run, "ask-1")
    assert alice.get(f"/api/v1/approvals/{approval}/").json()["status"] == "pending"
    assert [a["id"] for a in alice.get(f"/api/v1/approvals/?run={run.pk}").json()["results"]] == [approval]
    # Its copy is its user's too; its TTL it sets.
    copied = alice.post(f"{THREADS}copy/", {"source_thread_id": "alice-t", "target_thread_id": "alice-copy"})
    assert copied.status_code == 201, copied.content
    assert Run.objects.get(pk=copied.json()["run"]).session.end_user == "u-a"
    assert alice.post(f"{THREADS}ttl/", {"thread_id": "alice-copy", "ttl_days": 3}).json()["ttl_days"] == 3
    assert alice.get(f"{THREADS}ttl/?thread_id=alice-copy").json()["ttl_days"] == 3
    assert alice.post(f"{THREADS}delete/", {"thread_id": "alice-copy"}).json() == {"checkpoints": 1, "writes": 1}
    assert alice.post(f"{THREADS}prune/", {"thread_ids": ["alice-t"]}).json()["kept"] == [
        {"thread_id": "alice-t", "rule": "shown_by_pending_approval"}]
    # A deletion waits for the pending approval (the retention keep rule), then goes.
    refused = alice.post(DELETE, {"thread_id": "alice-t"})
    assert (refused.status_code, refused.json()["code"], refused.json()["rule"]) == (
        409, "thread_kept", "shown_by_pending_approval")
    ApprovalRequest.objects.filter(pk=approval).update(status="expired")
    assert alice.post(DELETE, {"thread_id": "alice-t"}).json() == {"checkpoints": 1, "writes": 1}
    # Its other run doors stay closed.
    for path, body in ((f"/api/v1/runs/{run.pk}/events/", None), ("/api/v1/runs/", None),
                       (f"/api/v1/runs/{run.pk}/transition/", {"to": "failed", "expected_version": 1})):
        response = alice.post(path, body) if body is not None else alice.get(path)
        assert (response.status_code, response.json()["code"]) == (403, "narrowed_token_scope"), path


USERS = [f"u-{n}" for n in range(5)]


@pytest.mark.django_db
@pytest.mark.slow  # ~26 s in a full run: started first (tests/parallel.py)
def test_a_thousand_random_thread_run_and_approval_calls_never_touch_another_users(world: World) -> None:
    """Seeded: five end users, two threads each (checkpointed by their own narrowed tokens) and a third waiting on
    an approval; each step one user's token calls a random thread door, run door or approval door on its own or
    another user's object. Another's is absent or refused every time, and what it reads is its own."""
    rng = random.Random(31)
    clients = {u: for_user(world.agent, u) for u in USERS}
    threads = {u: [f"{u}-t{i}" for i in range(2)] for u in USERS}
    runs = {u: [_thread_of(clients[u], t, u) for t in threads[u]] for u in USERS}
    waiting = {u: _thread_of(clients[u], f"{u}-waits", u) for u in USERS}
    approvals = {u: _approval_on(clients[u], waiting[u], f"{u}-ask") for u in USERS}
    own_runs = {u: {r.pk for r in [*runs[u], waiting[u]]} for u in USERS}
    puts = {t: 1 for ts in threads.values() for t in ts}
    tokens = {r.pk: 0 for rs in runs.values() for r in rs}
    counts = {"own": 0, "other": 0}
    for step in range(1, 1001):
        u, target = rng.choice(USERS), rng.choice(USERS)
        own = u == target
        counts["own" if own else "other"] += 1
        client = clients[u]
        i = rng.randrange(2)
        thread, run = threads[target][i], runs[target][i]
        op = rng.randrange(10)
        if op == 0:  # checkpoint a thread
            response = _put(client, thread, f"c{step:05d}", u)
            assert response.status_code == (201 if own else 409), (step, response.content)
            puts[thread] += own
        elif op == 1:  # a thread's newest checkpoint
            response = client.get(f"{READ}?thread_id={thread}")
            assert response.status_code == (200 if own else 404), step
            if own:
                assert response.json()["run"] == run.pk and response.json()["channel_values"] == {"by": u}
        elif op == 2:  # every checkpoint the token reaches
            rows = client.get(PUT).json()
            assert rows and {row["run"] for row in rows} <= own_runs[u], step
        elif op == 3:  # one thread's checkpoints
            rows = client.get(f"{PUT}?thread_id={thread}").json()
            assert (len(rows) == puts[thread]) if own else rows == [], step
        elif op == 4:  # pending writes
            response = client.post(WRITES, {"thread_id": thread, "checkpoint_id": "c00000", "task_id": f"s{step}",
                                            "writes": [[0, "a", u]]})
            assert response.status_code == (201 if own else 409), (step, response.content)
        elif op == 5:  # a run
            response = client.get(f"/api/v1/runs/{rng.choice([run, waiting[target]]).pk}/")
            assert response.status_code == (200 if own else 404), step
        elif op == 6:  # a usage report
            response = client.post(f"/api/v1/runs/{run.pk}/usage/", {"tokens": 1, "lease_owner": None})
            assert response.status_code == (200 if own else 404), (step, response.content)
            tokens[run.pk] += own
        elif op == 7:  # an approval
            response = client.get(f"/api/v1/approvals/{approvals[target]}/")
            assert response.status_code == (200 if own else 404), step
        elif op == 8:  # the approvals list
            rows = client.get("/api/v1/approvals/").json()["results"]
            assert [row["id"] for row in rows] == [approvals[u]], step
        else:  # ensure a thread
            response = client.post(THREADS, {"thread_id": thread})
            assert response.status_code == (200 if own else 409), step
            if own:
                assert response.json()["run"] == run.pk
    assert min(counts.values()) > 100  # both kinds of step were tried many times
    for u in USERS:  # what landed in each user's threads was written by that user's token, and nothing else did
        for thread, run in zip(threads[u], runs[u], strict=True):
            stored = Checkpoint.objects.filter(run=run).exclude(external_id="")
            assert stored.count() == puts[thread]
            assert {c.state["by"] for c in stored} == {u}
            assert set(CheckpointWrite.objects.filter(run=run).values_list("value", flat=True)) == {u}
            assert Run.objects.get(pk=run.pk).tokens_used == tokens[run.pk]
        assert ApprovalRequest.objects.filter(run=waiting[u]).count() == 1
