"""HarnessSaver against LangGraph's own PostgresSaver, call by call: generated sequences of puts (chains,
forks, namespaces, missing parents), pending writes (special channels included), get_tuple (by id and newest),
list (filter, before, limit, namespace, every thread) and delete_thread give the same answers.

PostgresSaver runs on a PostgreSQL database of its own (`<the suite's database>_lg`, never the test database),
HarnessSaver against the live server. Each example starts both from nothing: PostgresSaver's tables are
emptied, HarnessSaver gets a fresh project.
"""

import itertools
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from harness_client import HarnessClient
from harness_client.langgraph import HarnessSaver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.postgres import PostgresSaver

from tests import factories
from tests.client.conftest import FAST_RETRY, Live
from tests.parallel import worker_suffix

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = ["t1", "t2"]
NAMESPACES = ["", "sub:1"]
CHANNELS = ["a", "b", "msgs"]
SPECIAL = ["__error__", "__scheduled__", "__interrupt__", "__resume__"]

_examples = itertools.count()


def _lg_database_url() -> str:
    """PostgresSaver's own database beside the suite's: `<name>_lg` on the same server, created if missing
    (`<name>_lg_gw0` ... under xdist: each worker writes its own threads)."""
    parts = urlsplit(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/harness"))
    name = parts.path.lstrip("/") + "_lg" + worker_suffix()
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture(scope="module")
def postgres_saver() -> Iterator[PostgresSaver]:
    with PostgresSaver.from_conn_string(_lg_database_url()) as saver:
        saver.setup()
        yield saver


# --- what a call sequence is made of ------------------------------------------------------------------------

# Values of every kind. A channel's primitive value (str, int, float, bool, None) is kept in PostgresSaver's
# jsonb checkpoint row, which refuses NUL and infinity and keeps -0.0 and 1e20 as 0.0 and an integer: those are
# written only inside containers (serialized) or as pending writes (always serialized). The serializer refuses
# integers past 64 bits, which jsonb keeps: those only as primitives.
text = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.sampled_from([0.5, -2.25, 1e-7, 3.0, 1e-320])
    | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
odd_leaves = st.sampled_from([-0.0, 1e20, float("inf"), "nul\x00in text", "\u00e9t\u00e9"])
other_values = (
    st.tuples(st.integers(-9, 9), text) | st.frozensets(st.integers(0, 9), max_size=3)
    | st.sets(st.integers(0, 9), max_size=2) | st.binary(max_size=6)
    | st.just({"__lg_type__": "msgpack", "b64": "AA=="})  # a dict that looks like a stored typed value
    | st.lists(odd_leaves | json_values, min_size=1, max_size=3)
)
channel_values_ = json_values | other_values | st.just(2**70)
write_values = json_values | other_values | odd_leaves
# (No NUL in text: LangGraph strips it from metadata, but a filter holding one is refused by jsonb on both sides.)
metadata_values = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(
    st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=5) | st.lists(
    st.integers(0, 3), max_size=2)


class CallSequence:
    """Drives both savers through one generated sequence, keeping what a well-behaved graph would know."""

    def __init__(self, ours: HarnessSaver, theirs: PostgresSaver, data: st.DataObject) -> None:
        self.ours, self.theirs, self.data = ours, theirs, data
        self.ids = itertools.count(1)
        self.stored: dict[tuple[str, str], list[str]] = {}  # (thread, ns) -> checkpoint ids, as put
        self.versions: dict[tuple[str, str, str], dict[str, Any]] = {}  # (thread, ns, id) -> channel versions
        self.values: dict[tuple[str, str, str], dict[str, Any]] = {}  # (thread, ns, id) -> channel values

    def draw(self, strategy: st.SearchStrategy[Any], label: str) -> Any:
        return self.data.draw(strategy, label=label)

    def new_id(self) -> str:
        # Fixed-width ids in random order (LangGraph's are uuid6: they sort by time; ours test the sorting).
        return f"{self.draw(st.integers(0, 0xFFFF), 'id'):04x}-{next(self.ids):04d}"

    def some_id(self, thread: str, ns: str) -> str:
        known = self.stored.get((thread, ns), [])
        options = st.sampled_from(known) if known else st.nothing()
        return self.draw(options | st.just("ffff-9999") | st.just("0000-0000"), "known id")

    # --- the calls -------------------------------------------------------------------------------------

    def put(self) -> None:
        thread, ns = self.draw(st.sampled_from(THREADS), "thread"), self.draw(st.sampled_from(NAMESPACES), "ns")
        known = self.stored.get((thread, ns), [])
        parent = self.draw(st.none() | (st.sampled_from(known) if known else st.nothing()) | st.just("0001-0000"),
                           "parent")
        parent_versions = self.versions.get((thread, ns, parent or ""), {})
        parent_values = self.values.get((thread, ns, parent or ""), {})
        versions: dict[str, Any] = {}
        new_versions: dict[str, Any] = {}
        channel_values: dict[str, Any] = {}
        for channel in CHANNELS:
            keep = channel in parent_versions and self.draw(st.booleans(), f"keep {channel}")
            if keep:  # unchanged since the parent: the same version and value (LangGraph's contract)
                versions[channel] = parent_versions[channel]
                if channel in parent_values:
                    channel_values[channel] = parent_values[channel]
            elif self.draw(st.booleans(), f"write {channel}"):
                n = next(self.ids)
                version = self.draw(st.sampled_from([f"{n:032}.{n / 7:.16f}", n, n + 0.5]), "version")
                versions[channel] = new_versions[channel] = version
                if self.draw(st.integers(0, 5), "empty") > 0:  # else: a version without a value ("empty")
                    channel_values[channel] = self.draw(channel_values_, f"value {channel}")
        if self.draw(st.booleans(), "unversioned"):  # a primitive without a version is kept inline, as is
            channel_values["x"] = self.draw(st.integers() | st.text(max_size=3) | st.none(), "x")
        checkpoint_id = self.new_id()
        checkpoint: Any = {
            "v": 4, "id": checkpoint_id, "ts": f"2026-12-01T07:{next(self.ids) % 60:02d}:00+00:00",
            "channel_values": channel_values, "channel_versions": versions,
            "versions_seen": {"node": {k: v for k, v in versions.items() if k != "msgs"}},
            "updated_channels": sorted(new_versions) or None,
        }
        metadata: Any = {"source": self.draw(st.sampled_from(["input", "loop", "update", "fork"]), "source"),
                         "step": self.draw(st.integers(-1, 5), "step"), "parents": {},
                         **self.draw(st.dictionaries(st.sampled_from(["tag", "who", "n"]), metadata_values,
                                                     max_size=2), "extra")}
        configurable: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
        if parent is not None:
            configurable["checkpoint_id"] = parent
        if self.draw(st.booleans(), "config keys"):  # what LangGraph copies from the config into the metadata
            configurable.update(user="alice", __private="no", attempt=2)
        config: Any = {"configurable": configurable}
        ours = self.ours.put(config, checkpoint, metadata, new_versions)
        theirs = self.theirs.put(config, checkpoint, metadata, new_versions)
        assert ours == theirs
        self.stored.setdefault((thread, ns), []).append(checkpoint_id)
        self.versions[(thread, ns, checkpoint_id)] = versions
        self.values[(thread, ns, checkpoint_id)] = channel_values

    def put_writes(self) -> None:
        thread, ns = self.draw(st.sampled_from(THREADS), "thread"), self.draw(st.sampled_from(NAMESPACES), "ns")
        checkpoint_id = self.some_id(thread, ns)
        channels = st.sampled_from(CHANNELS) | st.sampled_from(SPECIAL)
        only_special = st.lists(st.tuples(st.sampled_from(SPECIAL), write_values), min_size=1, max_size=2)
        writes = self.draw(st.lists(st.tuples(channels, write_values), max_size=3) | only_special, "writes")
        task_id = self.draw(st.sampled_from(["task-a", "task-b"]), "task")
        task_path = self.draw(st.sampled_from(["", "~__pregel_pull, node", "~__pregel_push, 0"]), "path")
        config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}
        self.ours.put_writes(config, writes, task_id, task_path)
        self.theirs.put_writes(config, writes, task_id, task_path)

    def get_tuple(self) -> None:
        thread, ns = self.draw(st.sampled_from(THREADS), "thread"), self.draw(st.sampled_from(NAMESPACES), "ns")
        configurable: dict[str, Any] = {"thread_id": thread}
        if ns or self.draw(st.booleans(), "ns given"):
            configurable["checkpoint_ns"] = ns
        if self.draw(st.booleans(), "by id"):
            configurable["checkpoint_id"] = self.some_id(thread, ns)
        config: Any = {"configurable": configurable}
        same(self.ours.get_tuple(config), self.theirs.get_tuple(config))

    def list(self) -> None:
        config: Any = None
        if self.draw(st.integers(0, 4), "every thread") > 0:
            thread = self.draw(st.sampled_from(THREADS), "thread")
            configurable: dict[str, Any] = {"thread_id": thread}
            ns = self.draw(st.none() | st.sampled_from(NAMESPACES), "ns")
            if ns is not None:
                configurable["checkpoint_ns"] = ns
            if self.draw(st.integers(0, 5), "by id") == 0:
                configurable["checkpoint_id"] = self.some_id(thread, ns or "")
            config = {"configurable": configurable}
        metadata_filter = self.draw(st.none() | st.just({}) | st.fixed_dictionaries(
            {}, optional={"source": st.sampled_from(["loop", "input"]), "step": st.integers(-1, 2),
                          "user": st.just("alice"), "tag": metadata_values}), "filter")
        before: Any = None
        if self.draw(st.booleans(), "before"):
            some = self.some_id(self.draw(st.sampled_from(THREADS), "t"), self.draw(st.sampled_from(NAMESPACES), "n"))
            before = {"configurable": {"checkpoint_id": some}} if self.draw(st.integers(0, 5), "no id") else {
                "configurable": {}}
        limit = self.draw(st.none() | st.integers(0, 4), "limit")
        ours = list(self.ours.list(config, filter=metadata_filter, before=before, limit=limit))
        theirs = list(self.theirs.list(config, filter=metadata_filter, before=before, limit=limit))
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            same(a, b)

    def delete_thread(self) -> None:
        thread = self.draw(st.sampled_from([*THREADS, "t-none"]), "thread")
        self.ours.delete_thread(thread)
        self.theirs.delete_thread(thread)
        for key in [k for k in self.stored if k[0] == thread]:
            del self.stored[key]
        for mapping in (self.versions, self.values):
            for key in [k for k in mapping if k[0] == thread]:
                del mapping[key]


def same(ours: CheckpointTuple | None, theirs: CheckpointTuple | None) -> None:
    """The same tuple: config, checkpoint (values of the same types), metadata, parent, pending writes."""
    assert (ours is None) == (theirs is None)
    if ours is None or theirs is None:
        return
    assert ours.config == theirs.config
    assert ours.parent_config == theirs.parent_config
    assert ours.metadata == theirs.metadata
    assert ours.checkpoint == theirs.checkpoint
    assert typed(ours.checkpoint["channel_values"]) == typed(theirs.checkpoint["channel_values"])
    assert ours.pending_writes == theirs.pending_writes
    assert typed(ours.pending_writes) == typed(theirs.pending_writes)


def typed(value: Any) -> Any:
    """`value` with each leaf's type beside it (1 == 1.0 == True in Python; the savers must agree exactly)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(v) for v in value])
    return (type(value).__name__, repr(value))


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(data=st.data())
def test_harness_saver_answers_as_postgres_saver_does(live: Live, postgres_saver: PostgresSaver,
                                                      data: st.DataObject) -> None:
    with postgres_saver._cursor() as cur:
        cur.execute("TRUNCATE checkpoints, checkpoint_blobs, checkpoint_writes")
    project = factories.make_project(f"lgdiff-{next(_examples)}")
    _, token = factories.make_agent_token(project, name="lgdiff")
    with HarnessClient(live.url, token, retry=FAST_RETRY) as client:
        sequence = CallSequence(HarnessSaver(client=client), postgres_saver, data)
        calls = {"put": sequence.put, "put_writes": sequence.put_writes, "get_tuple": sequence.get_tuple,
                 "list": sequence.list, "delete_thread": sequence.delete_thread}
        weights = ["put"] * 5 + ["put_writes"] * 3 + ["get_tuple"] * 3 + ["list"] * 3 + ["delete_thread"]
        for name in data.draw(st.lists(st.sampled_from(weights), min_size=4, max_size=25), label="calls"):
            calls[name]()
        # Whatever the sequence, the end states agree in full.
        everything = list(sequence.ours.list(None)), list(postgres_saver.list(None))
        assert len(everything[0]) == len(everything[1])
        for a, b in zip(*everything, strict=True):
            same(a, b)
