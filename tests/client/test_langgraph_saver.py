"""HarnessSaver with real compiled LangGraph graphs, end to end over HTTP against a live server: a graph with a
subgraph (a namespace), its history and a fork, the async methods, the console's lineage, tenant scoping,
deletion (audited), and the API's refusals."""

import operator
from typing import Annotated, Any, TypedDict

import pytest
from django.contrib.auth.models import User
from django.test import Client
from harness_client import AsyncHarnessClient, ConflictError, HarnessClient, NotFoundError
from harness_client.langgraph import TYPED, HarnessSaver
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from harness.models import AuditEntry
from runs_app.models import Checkpoint, CheckpointWrite, Run
from tests import factories
from tests.client.conftest import FAST_RETRY, Live, Recorder, posts_to, run_async

pytestmark = pytest.mark.django_db(transaction=True)


class Inner(TypedDict):
    notes: Annotated[list[str], operator.add]


class Research(TypedDict):
    topic: str
    findings: str


class State(TypedDict):
    topic: str
    notes: Annotated[list[str], operator.add]
    pair: tuple[int, int]
    findings: str


def _graph(saver: BaseCheckpointSaver[Any]) -> Any:
    """plan -> sub (a subgraph: it checkpoints in its own namespace) -> write."""
    inner = StateGraph(Research)
    inner.add_node("research", lambda s: {"findings": f"about {s['topic']}"})
    inner.add_edge(START, "research")
    inner.add_edge("research", END)

    outer = StateGraph(State)
    outer.add_node("plan", lambda s: {"notes": [f"plan {s['topic']}"], "pair": (1, 2)})
    outer.add_node("sub", inner.compile())
    outer.add_node("write", lambda s: {"notes": [f"written {s['findings']}"]})
    outer.add_edge(START, "plan")
    outer.add_edge("plan", "sub")
    outer.add_edge("sub", "write")
    outer.add_edge("write", END)
    return outer.compile(checkpointer=saver)


def test_a_graph_with_a_subgraph_checkpoints_through_the_api(live: Live, hc: HarnessClient) -> None:
    saver = HarnessSaver(client=hc)
    graph = _graph(saver)
    config: Any = {"configurable": {"thread_id": "chapter-3"}}
    result = graph.invoke({"topic": "ch3", "notes": []}, config)
    assert result == {"topic": "ch3", "notes": ["plan ch3", "written about ch3"], "pair": (1, 2),
                      "findings": "about ch3"}
    # LangGraph's own in-memory saver runs the same graph to the same states and history.
    reference = _graph(InMemorySaver())
    assert reference.invoke({"topic": "ch3", "notes": []}, config) == result
    expected = [(h.values, h.next, h.metadata["step"]) for h in reference.get_state_history(config)]
    assert [(h.values, h.next, h.metadata["step"]) for h in graph.get_state_history(config)] == expected

    # The thread is a run of the token's project, found by its ref; its checkpoints are the run's, the
    # subgraph's in its namespace ("sub:<task id>").
    run = Run.objects.get(project=live.project, ref="chapter-3")
    assert (run.task_mode, run.status) == ("langgraph", "running")
    namespaces = set(Checkpoint.objects.filter(run=run).values_list("ns", flat=True))
    assert len(namespaces) == 2 and "" in namespaces and next(n for n in namespaces if n).startswith("sub:")
    stored = Checkpoint.objects.filter(run=run, ns="")
    assert run.last_checkpoint_id == stored.order_by("-external_id")[0].pk

    # The state reads back as LangGraph's own saver reads it (its serializer makes the tuple a list);
    # history is newest first, linked by parents.
    state = graph.get_state(config)
    assert state.values == reference.get_state(config).values == {**result, "pair": [1, 2]} and state.next == ()
    history = list(graph.get_state_history(config))
    assert [h.metadata["step"] for h in history] == [3, 2, 1, 0, -1]
    for newer, older in zip(history, history[1:], strict=False):
        assert newer.parent_config["configurable"]["checkpoint_id"] == older.config["configurable"]["checkpoint_id"]
    # JSON stays JSON (what the console's diff shows); the tuple is stored as the serializer's bytes.
    newest = stored.order_by("-external_id")[0]
    assert newest.state["topic"] == "ch3" and newest.state["notes"] == ["plan ch3", "written about ch3"]
    assert newest.state["pair"][TYPED] == "msgpack"
    assert newest.parent.external_id == history[1].config["configurable"]["checkpoint_id"]
    assert newest.label == "loop 3" and newest.metadata["step"] == 3
    # The console's lineage API walks the same chain.
    lineage = hc.checkpoint_lineage(newest.pk)
    assert [c.id for c in lineage] == [stored.get(external_id=h.config["configurable"]["checkpoint_id"]).pk
                                       for h in history]

    # The console's pages: the run's lineage tree, the checkpoint with its thread, namespace, ids and metadata,
    # and the diff with its parent (what the step changed).
    browser = Client()
    browser.force_login(User.objects.get(username="client-reviewer"))
    assert browser.get(f"/runs/{run.pk}/lineage/").status_code == 200
    page = browser.get(f"/checkpoints/{newest.pk}/").content.decode()
    assert "LangGraph thread" in page and "chapter-3" in page and newest.external_id in page and "Metadata" in page
    diff = browser.get(f"/checkpoints/diff/?a={newest.parent_id}&b={newest.pk}")
    assert diff.status_code == 200 and "written about ch3" in diff.content.decode()

    # A fork: update the state at step 1; the thread grows a branch from there, and the newest is the fork.
    step1 = next(h for h in history if h.metadata["step"] == 1)
    forked = graph.update_state(step1.config, {"notes": ["edited"]})
    assert forked["configurable"]["checkpoint_id"] != history[0].config["configurable"]["checkpoint_id"]
    fork = Checkpoint.objects.get(run=run, external_id=forked["configurable"]["checkpoint_id"])
    assert fork.parent.external_id == step1.config["configurable"]["checkpoint_id"]
    assert fork.parent.children.count() == 2
    assert graph.get_state(config).values["notes"] == ["plan ch3", "edited"]
    reference_step1 = next(h for h in reference.get_state_history(config) if h.metadata["step"] == 1)
    reference.update_state(reference_step1.config, {"notes": ["edited"]})
    assert graph.get_state(config).values == reference.get_state(config).values


def test_a_subgraph_with_its_own_checkpoints_keeps_its_namespace(live: Live, hc: HarnessClient) -> None:
    saver = HarnessSaver(client=hc)
    inner = StateGraph(Inner)
    inner.add_node("research", lambda s: {"notes": ["researched"]})
    inner.add_node("check", lambda s: {"notes": ["checked"]})
    inner.add_edge(START, "research")
    inner.add_edge("research", "check")
    inner.add_edge("check", END)
    outer = StateGraph(Inner)
    outer.add_node("sub", inner.compile(checkpointer=True))
    outer.add_edge(START, "sub")
    outer.add_edge("sub", END)
    graph = outer.compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "ns-thread"}}
    assert graph.invoke({"notes": []}, config) == {"notes": ["researched", "checked"]}

    run = Run.objects.get(project=live.project, ref="ns-thread")
    namespaces = set(Checkpoint.objects.filter(run=run).values_list("ns", flat=True))
    assert "" in namespaces and "sub" in namespaces
    # The subgraph's checkpoints are read back by namespace, and listed across namespaces without one.
    sub = list(saver.list({"configurable": {"thread_id": "ns-thread", "checkpoint_ns": "sub"}}))
    assert sub and {t.config["configurable"]["checkpoint_ns"] for t in sub} == {"sub"}
    assert sub[0].checkpoint["channel_values"]["notes"] == ["researched", "checked"]
    every = list(saver.list({"configurable": {"thread_id": "ns-thread"}}))
    assert len(every) == Checkpoint.objects.filter(run=run).count() > len(sub)
    ids = [t.config["configurable"]["checkpoint_id"] for t in every]
    assert ids == sorted(ids, reverse=True)
    # The root graph's run pointer follows the root namespace only.
    assert Checkpoint.objects.get(pk=Run.objects.get(pk=run.pk).last_checkpoint_id).ns == ""


def test_the_async_methods_run_a_graph_too(live: Live) -> None:
    async def work() -> Any:
        async with AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY) as client:
            saver = HarnessSaver(client=client)
            graph = _graph(saver)
            config: Any = {"configurable": {"thread_id": "async-thread"}}
            result = await graph.ainvoke({"topic": "a", "notes": []}, config)
            history = [h async for h in graph.aget_state_history(config)]
            tuple_ = await saver.aget_tuple(config)
            await saver.adelete_thread("async-thread")
            after = await saver.aget_tuple(config)
            return result, history, tuple_, after

    result, history, newest, after = run_async(work())
    assert result["notes"] == ["plan a", "written about a"]
    assert len(history) == 5 and newest.metadata["step"] == 3 and after is None


def test_another_projects_token_sees_none_of_the_thread(live: Live, hc: HarnessClient) -> None:
    saver = HarnessSaver(client=hc)
    _graph(saver).invoke({"topic": "x", "notes": []}, {"configurable": {"thread_id": "secret"}})
    assert len(list(saver.list({"configurable": {"thread_id": "secret", "checkpoint_ns": ""}}))) == 5

    other = factories.make_project("otherco")
    _, token = factories.make_agent_token(other, name="other-agent")
    with HarnessClient(live.url, token, retry=FAST_RETRY) as intruder_client:
        intruder = HarnessSaver(client=intruder_client)
        config: Any = {"configurable": {"thread_id": "secret"}}
        assert intruder.get_tuple(config) is None
        assert list(intruder.list(config)) == [] and list(intruder.list(None)) == []
        # Its delete and its writes touch its own (new, empty) thread, never ours.
        intruder.delete_thread("secret")
        intruder.put_writes({"configurable": {"thread_id": "secret", "checkpoint_ns": "",
                                              "checkpoint_id": "x"}}, [("notes", ["spy"])], "task")
    assert len(list(saver.list({"configurable": {"thread_id": "secret", "checkpoint_ns": ""}}))) == 5
    ours = Run.objects.get(project=live.project, ref="secret")
    assert not CheckpointWrite.objects.filter(run=ours, checkpoint_external_id="x").exists()
    assert Run.objects.get(project=other, ref="secret").pk != ours.pk


def test_delete_thread_is_audited_and_the_thread_id_starts_again(live: Live, hc: HarnessClient) -> None:
    saver = HarnessSaver(client=hc)
    graph = _graph(saver)
    config: Any = {"configurable": {"thread_id": "again"}}
    graph.invoke({"topic": "one", "notes": []}, config)
    run = Run.objects.get(project=live.project, ref="again")
    count = Checkpoint.objects.filter(run=run).count()
    writes = CheckpointWrite.objects.filter(run=run).count()
    assert hc.delete_thread("again").checkpoints == count
    assert not Checkpoint.objects.filter(run=run).exists() and not CheckpointWrite.objects.filter(run=run).exists()
    entry = AuditEntry.objects.get(action="thread.delete", target_id=str(run.pk))
    assert entry.data == {"thread_id": "again", "checkpoints": count, "writes": writes}
    assert run.events.filter(kind="thread.deleted").count() == 1
    assert graph.get_state(config).values == {}
    assert graph.invoke({"topic": "two", "notes": []}, config)["notes"] == ["plan two", "written about two"]
    assert Run.objects.get(pk=run.pk).last_checkpoint is not None
    saver.delete_thread("never-seen")  # nothing to delete: no error


def test_checkpoints_are_immutable_and_bad_input_is_refused(live: Live, hc: HarnessClient) -> None:
    body: dict[str, Any] = {"thread_id": "imm", "checkpoint_id": "c1", "checkpoint": {"v": 4, "id": "c1"},
                            "channel_values": {"a": 1}, "metadata": {"step": 0}}
    first = hc.put_thread_checkpoint(**body)
    assert hc.put_thread_checkpoint(**body) == first  # the same content again: answered as before
    with pytest.raises(ConflictError) as changed:
        hc.put_thread_checkpoint(**{**body, "channel_values": {"a": 2}})
    assert changed.value.code == "checkpoint_exists"
    with pytest.raises(NotFoundError) as missing:
        hc.put_thread_checkpoint(**{**body, "checkpoint_id": "c2", "lease_owner": "me", "thread_id": "none"})
    assert missing.value.code == "thread_not_found"
    with pytest.raises(ConflictError) as fenced:
        hc.put_thread_checkpoint(**{**body, "checkpoint_id": "c2", "lease_owner": "me"})
    assert fenced.value.code == "lease_lost"

    # A run of the project that is not a LangGraph thread keeps its ref: the graph may not write into it.
    session = hc.create_session()
    other_run = hc.create_run(session=session.id, ref="R-9")
    for call in (lambda: hc.put_thread_checkpoint(**{**body, "thread_id": "R-9"}),
                 lambda: hc.put_thread_writes(thread_id="R-9", checkpoint_id="c1", task_id="t", writes=[(0, "a", 1)]),
                 lambda: hc.ensure_thread("R-9")):
        with pytest.raises(ConflictError) as taken:
            call()
        assert taken.value.code == "thread_ref_taken"
    assert not Checkpoint.objects.filter(run_id=other_run.id).exists()
    assert not CheckpointWrite.objects.filter(run_id=other_run.id).exists()

    http = live.client()._http
    cases = [
        ("threads/checkpoints/", {**body, "thread_id": "x" * 65}, "invalid_thread_id"),
        ("threads/checkpoints/", {**body, "checkpoint_id": ""}, "invalid_checkpoint_id"),
        ("threads/checkpoints/", {**body, "channel_values": [1]}, "invalid_channel_values"),
        ("threads/checkpoints/", {**body, "metadata": "m"}, "invalid_metadata"),
        ("threads/writes/", {"thread_id": "imm", "checkpoint_id": "c1", "task_id": "t", "writes": [["a", 1]]},
         "invalid_writes"),
        ("threads/delete/", {"thread_id": ""}, "invalid_thread_id"),
    ]
    for path, payload, code in cases:
        answer = http.post(path, json=payload, headers={"Idempotency-Key": f"k-{code}-{path}"})
        assert (answer.status_code, answer.json()["code"]) == (400, code), (path, answer.text)
    for query, code in [({"thread_id": "imm", "filter": "[1]"}, "invalid_filter"),
                        ({"thread_id": "imm", "filter": '{"a": "\\u0000"}'}, "invalid_filter"),
                        ({"thread_id": "imm", "limit": "-1"}, "invalid_limit")]:
        answer = http.get("threads/checkpoints/", params=query)
        assert (answer.status_code, answer.json()["code"]) == (400, code)
    # A reviewer's personal token reads, but only an agent token writes.
    with live.client(live.reviewer_token) as reviewer:
        assert [t.checkpoint_id for t in reviewer.thread_checkpoints(thread_id="imm")] == ["c1"]
        with pytest.raises(Exception) as refused:  # noqa: PT011 - the client's PermissionDenied
            reviewer.put_thread_checkpoint(**{**body, "checkpoint_id": "c3"})
        assert getattr(refused.value, "status", None) == 403


def test_lost_replies_of_a_put_and_its_writes_are_replayed_not_applied_twice(live: Live) -> None:
    """The put and the writes record their reply under the Idempotency-Key in the statement that writes them;
    a retry after a lost reply gets that reply (and the same key with another body gets 422)."""
    recorder = Recorder(lose=posts_to("/threads/checkpoints/"))
    config: Any = {"configurable": {"thread_id": "lossy", "checkpoint_ns": ""}}
    checkpoint: Any = {"v": 4, "id": "c1", "ts": "t", "channel_values": {"a": [1]}, "channel_versions": {"a": "1"},
                       "versions_seen": {}, "updated_channels": ["a"]}
    with live.client(transport=recorder) as flaky:
        saver = HarnessSaver(client=flaky)
        stored = saver.put(config, checkpoint, {"step": 0}, {"a": "1"})
        recorder.lose, recorder.lost = posts_to("/threads/writes/"), False
        saver.put_writes(stored, [("a", [2]), ("__interrupt__", "stop")], "task-1")
        newest = saver.get_tuple(config)
    run = Run.objects.get(project=live.project, ref="lossy")
    assert Checkpoint.objects.filter(run=run).count() == 1
    assert CheckpointWrite.objects.filter(run=run).count() == 2
    # In LangGraph's order (task path, task id, idx): the interrupt's idx is -3.
    assert newest is not None and newest.pending_writes == [("task-1", "__interrupt__", "stop"), ("task-1", "a", [2])]
    replays = [r for _, r in recorder.exchanges if r is not None and r.headers.get("Idempotent-Replayed")]
    assert [r.status_code for r in replays] == [201, 201]
    first, second = (request for request, response in recorder.exchanges if response is None)
    assert replays[0].json()["checkpoint_id"] == "c1" and replays[1].json() == {"written": 2}
    # The same key with another body is refused; nothing is written.
    http = live.client()._http
    changed = http.post("threads/checkpoints/", content=first.content.replace(b'"c1"', b'"c2"'),
                        headers={"Idempotency-Key": first.headers["Idempotency-Key"],
                                 "Content-Type": "application/json"})
    assert changed.status_code == 422 and Checkpoint.objects.filter(run=run).count() == 1
    assert second.headers["Idempotency-Key"] != first.headers["Idempotency-Key"]
