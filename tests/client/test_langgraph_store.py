"""HarnessStore (issue 34, part 2) against a live server: LangGraph's store contract, differentially against
LangGraph's own InMemoryStore on random operation sequences (no published store conformance suite exists:
langgraph-checkpoint-conformance 0.0.2 covers checkpointers only), and what memory adds: the write policy's held
puts, supersede history, full-text search, TTL, a graph's provenance, the async forms."""

import uuid
from typing import Any

import pytest
from harness_client import AsyncHarnessClient, PermissionDenied, ValidationError
from harness_client.langgraph_store import HarnessStore, MemoryHeld
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from memory_app.models import MemoryRecord, MemoryWritePolicy
from tests import factories
from tests.client.conftest import FAST_RETRY, Live, run_async

pytestmark = pytest.mark.django_db(transaction=True)


def _store(live: Live, **kwargs: Any) -> HarnessStore:
    session = factories.make_session(live.project, memory_policy="session")
    return HarnessStore(live.client(), source_session_id=session.pk, **kwargs)


# --- differential: the same operations on InMemoryStore and HarnessStore --------------------------------------

SUBS = st.sampled_from([(), ("a",), ("a", "b"), ("c",)])
KEYS = st.sampled_from(["k1", "k2", "k3"])
VALUES = st.fixed_dictionaries({"colour": st.sampled_from(["red", "blue"]), "n": st.integers(0, 3)})
OPS = st.one_of(
    st.tuples(st.just("put"), SUBS, KEYS, VALUES),
    st.tuples(st.just("delete"), SUBS, KEYS),
    st.tuples(st.just("get"), SUBS, KEYS),
    st.tuples(st.just("search"), SUBS, st.sampled_from([None, {"colour": "red"}, {"n": {"$gte": 2}}])),
    st.tuples(st.just("namespaces"), st.sampled_from([None, ("a",), ("*", "b")]), st.sampled_from([None, 2, 3])),
)


def _apply(store: BaseStore, root: tuple[str, ...], op: tuple[Any, ...]) -> Any:
    kind = op[0]
    if kind == "put":
        return store.put((*root, *op[1]), op[2], op[3])
    if kind == "delete":
        return store.delete((*root, *op[1]), op[2])
    if kind == "get":
        item = store.get((*root, *op[1]), op[2])
        return None if item is None else (item.namespace, item.key, item.value)
    if kind == "search":
        found = store.search((*root, *op[1]), filter=op[2], limit=100)
        return sorted((i.namespace, i.key, tuple(sorted(i.value.items()))) for i in found)
    if isinstance(store, InMemoryStore):
        # InMemoryStore keeps a namespace whose last item was deleted (and makes one on a get of it) and lists it;
        # LangGraph's PostgresStore, like memory, lists only namespaces that hold items: compare with those.
        for empty in [ns for ns, items in store._data.items() if not items]:
            del store._data[empty]
    prefix = (*root, *(op[1] or ()))
    return store.list_namespaces(prefix=prefix, max_depth=None if op[2] is None else len(root) + op[2])


def test_harness_store_answers_as_langgraphs_in_memory_store(live: Live) -> None:
    harness = _store(live)
    sequences = 0

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.lists(OPS, min_size=1, max_size=12))
    def same_answers(ops: list[tuple[Any, ...]]) -> None:
        nonlocal sequences
        sequences += 1
        root = ("project", f"diff-{uuid.uuid4().hex[:8]}")
        reference = InMemoryStore()
        for op in ops:
            assert _apply(harness, root, op) == _apply(reference, root, op), op

    same_answers()
    assert sequences == 25


# --- what memory adds -----------------------------------------------------------------------------------------


def test_a_put_supersedes_and_the_history_stays(live: Live) -> None:
    store = _store(live)
    store.put(("user", "alice", "prefs"), "tea", {"kind": "green"})
    store.put(("user", "alice", "prefs"), "tea", {"kind": "black"})
    item = store.get(("user", "alice", "prefs"), "tea")
    assert item is not None and item.value == {"kind": "black"}
    versions = list(MemoryRecord.objects.filter(project=live.project, key="tea").order_by("pk")
                    .values_list("status", "value"))
    assert versions == [("superseded", {"kind": "green"}), ("active", {"kind": "black"})]
    store.delete(("user", "alice", "prefs"), "tea")
    assert store.get(("user", "alice", "prefs"), "tea") is None
    assert MemoryRecord.objects.filter(project=live.project, key="tea", status="deleted").count() == 1


def test_a_held_put_is_reported_as_held_and_waits_for_an_operator(live: Live) -> None:
    MemoryWritePolicy.objects.create(project=live.project, scope="user", decision="hold")
    store = _store(live)
    with pytest.raises(MemoryHeld) as held:
        store.put(("user", "bob"), "allergy", {"text": "peanuts"})
    record = MemoryRecord.objects.get(pk=held.value.record_id)
    assert record.status == "held" and record.value == {"text": "peanuts"}
    assert store.get(("user", "bob"), "allergy") is None  # not read before it is approved
    quiet = _store(live, raise_on_held=False)
    assert quiet.put_result(("user", "bob"), "diet", {"text": "vegan"})["outcome"] == "held"


def test_a_rejected_put_raises_with_the_policys_code(live: Live) -> None:
    MemoryWritePolicy.objects.create(project=live.project, scope="project", blocked_patterns=["secret"])
    with pytest.raises(ValidationError) as refused:
        _store(live).put(("project", "notes"), "k", {"text": "the secret is 42"})
    assert refused.value.code == "blocked_pattern"


def test_search_is_full_text_with_scores_and_paging(live: Live) -> None:
    store = _store(live)
    for n, text in enumerate(["the lighthouse at dawn", "a storm at sea", "the lighthouse keeper sleeps"]):
        store.put(("project", "scenes"), f"s{n}", {"text": text, "n": n})
    found = store.search(("project", "scenes"), query="lighthouse")
    assert {i.key for i in found} == {"s0", "s2"} and all(i.score is not None and i.score > 0 for i in found)
    pages = [store.search(("project",), limit=2, offset=offset) for offset in (0, 2)]
    assert sorted(i.key for page in pages for i in page) == ["s0", "s1", "s2"]
    assert [i.key for i in store.search(("project",), filter={"n": {"$gt": 1}})] == ["s2"]


def test_a_ttl_expires_the_item_and_a_refreshing_read_renews_it(live: Live) -> None:
    store = _store(live, ttl={"default_ttl": 1.0, "refresh_on_read": True})
    store.put(("project", "ttl"), "k", {"v": 1})
    record = MemoryRecord.objects.get(project=live.project, key="k")
    assert record.ttl_seconds == 60
    from django.utils import timezone

    MemoryRecord.objects.filter(pk=record.pk).update(expires_at=timezone.now() + timezone.timedelta(seconds=2))
    assert store.get(("project", "ttl"), "k") is not None
    record.refresh_from_db()
    assert record.expires_at is not None and record.expires_at > timezone.now() + timezone.timedelta(seconds=30)
    MemoryRecord.objects.filter(pk=record.pk).update(expires_at=timezone.now())
    assert store.get(("project", "ttl"), "k") is None


def test_a_narrowed_client_reaches_only_its_users_namespace(live: Live) -> None:
    _store(live).put(("user", "carol"), "k", {"v": "carol's"})
    session = factories.make_session(live.project, memory_policy="session", end_user="dave")
    dave = HarnessStore(live.client().for_user("dave"), source_session_id=session.pk)
    with pytest.raises(PermissionDenied):
        dave.get(("user", "carol"), "k")
    assert dave.search(("user",)) == []
    dave.put(("user", "dave"), "k", {"v": "dave's"})
    assert [i.value for i in dave.search(("user",))] == [{"v": "dave's"}]


def test_a_graph_node_records_its_thread_and_node(live: Live) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    def note(state: dict[str, Any], *, store: BaseStore) -> dict[str, Any]:
        store.put(("project", "graph"), "fact", {"text": state["text"]})
        return {}

    builder = StateGraph(dict)
    builder.add_node("note", note)
    builder.add_edge(START, "note")
    builder.add_edge("note", END)
    graph = builder.compile(checkpointer=InMemorySaver(), store=HarnessStore(live.client()))
    graph.invoke({"text": "the keeper is called Ada"}, {"configurable": {"thread_id": "graph-thread-1"}})
    record = MemoryRecord.objects.get(project=live.project, key="fact")
    assert record.source_graph["thread_id"] == "graph-thread-1"
    assert record.source_graph["node"] == "note"
    assert record.source_graph.get("checkpoint_id")
    assert record.source_run_id is None  # InMemorySaver: the thread is not one of the project's runs


def test_the_async_forms_answer_as_the_sync_ones(live: Live) -> None:
    session = factories.make_session(live.project, memory_policy="session")
    store = HarnessStore(aclient=AsyncHarnessClient(live.url, live.agent_token, retry=FAST_RETRY),
                         source_session_id=session.pk)

    async def scenario() -> tuple[Any, ...]:
        await store.aput(("project", "async"), "k", {"v": 1})
        item = await store.aget(("project", "async"), "k")
        found = await store.asearch(("project",))
        spaces = await store.alist_namespaces(prefix=("project",))
        await store.adelete(("project", "async"), "k")
        return item.value if item else None, [i.key for i in found], spaces, await store.aget(("project", "async"),
                                                                                              "k")

    assert run_async(scenario()) == ({"v": 1}, ["k"], [("project", "async")], None)


def test_the_async_counterpart_of_a_narrowed_store_is_narrowed_too(live: Live) -> None:
    _store(live).put(("user", "erin"), "k", {"v": "erin's"})
    session = factories.make_session(live.project, memory_policy="session", end_user="frank")
    frank = HarnessStore(live.client(), end_user="frank", source_session_id=session.pk)

    async def reach() -> Any:
        seen = await frank.asearch(("user",)), await frank.aget(("project",), "nothing")
        with pytest.raises(PermissionDenied):
            await frank.aget(("user", "erin"), "k")
        return seen

    assert run_async(reach()) == ([], None)  # erin's item is not frank's to see, by the async door either


def test_with_harness_saver_a_put_names_the_threads_run_in_a_session_that_keeps_memory(live: Live) -> None:
    """HarnessSaver's own threads keep no memory (checkpoint_only); a client narrowed to a session whose policy
    keeps memory makes the thread in that session, so the graph's puts are accepted with the thread's run."""
    from harness_client.langgraph import HarnessSaver

    from runs_app.models import Run

    def note(state: dict[str, Any], *, store: BaseStore) -> dict[str, Any]:
        store.put(("user", "gail", "notes"), "n", {"text": state["text"]})
        return {}

    builder = StateGraph(dict)
    builder.add_node("note", note)
    builder.add_edge(START, "note")
    builder.add_edge("note", END)

    plain = builder.compile(checkpointer=HarnessSaver(live.client()), store=HarnessStore(live.client()))
    with pytest.raises(ValidationError) as refused:
        # durability="sync": the thread's first checkpoint (which makes its run) is saved before the node runs.
        plain.invoke({"text": "x"}, {"configurable": {"thread_id": "saver-plain"}}, durability="sync")
    assert refused.value.code == "session_keeps_no_memory"

    session = factories.make_session(live.project, memory_policy="external", end_user="gail")
    gail = live.client().for_user("gail", session=session.pk)
    graph = builder.compile(checkpointer=HarnessSaver(gail), store=HarnessStore(gail))
    graph.invoke({"text": "gail likes rain"}, {"configurable": {"thread_id": "saver-gail"}}, durability="sync")
    record = MemoryRecord.objects.get(project=live.project, key="n")
    run = Run.objects.get(project=live.project, ref="saver-gail")
    assert (record.source_run_id, run.session_id, record.source_graph["node"]) == (run.pk, session.pk, "note")
