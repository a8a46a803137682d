"""LangGraph's `BaseStore` on Harness Console's memory: long-term memory a graph's nodes read and write.

    from harness_client.langgraph_store import HarnessStore
    graph = builder.compile(store=HarnessStore())   # HARNESS_URL and HARNESS_TOKEN from the environment

A namespace starts with its memory scope: `("project", ...)`, `("user", "<end user>", ...)`,
`("agent", "<agent key>", ...)` or `("session", "<session id>", ...)`; the labels after it are yours. Each item is a
memory record with that namespace and key, its value kept as JSON, so everything memory does applies:

- `put` goes through the scope's write policy. A rejected put raises `ValidationError` (422, its `code` says why:
  `too_long`, `blocked_pattern`, `provenance_required`, `session_keeps_no_memory`, ...). A held put raises
  `MemoryHeld` (after the rest of the batch ran) unless `raise_on_held=False`: the record waits in the operators'
  queue in the console, and the key's old value stands until it is approved. A put of a new value supersedes the
  key's old record (the chain keeps it); the same value again only confirms it.
- `delete` (and a put of None) tombstones the key's records; erasing a person scrubs them.
- `search` is full text, not semantic: there are no embeddings. `query` is PostgreSQL websearch syntax over the
  value's JSON text (every word must match; "quoted phrases", `or`, `-word`), ranked best first with `score`;
  without a query, items come newest first. `filter` compares value fields (equality, nested objects,
  `$eq $ne $gt $gte $lt $lte`; the orders compare numbers), `limit` / `offset` page.
- `ttl` (minutes) is the record's expiry: an expired item is no longer read. A read that refreshes
  (`refresh_ttl`, by default as LangGraph's contract says: `ttl_config["refresh_on_read"]`, True) moves it on.
- The token decides what is reachable: an agent token's `agent` scope is its own identity, a token narrowed to an
  end user reads that user's and the shared scopes and writes only its user's (PermissionDenied otherwise).
- Inside a graph run, each put records where it was made: the thread, checkpoint and node
  (`langgraph.config.get_config()`), and the thread's run when the graph checkpoints with `HarnessSaver` (once the
  thread's first checkpoint is stored: `durability="sync"` stores it before the first node runs). A thread
  HarnessSaver creates keeps no memory (its session's memory policy is `checkpoint_only`), so such a put is
  refused `session_keeps_no_memory`: give the graph a session whose policy keeps memory (a `for_user` client
  naming that session), or use the store with another checkpointer.

Each operation is one HTTP request; `batch` sends its operations one after another, in order. `index` (the vector
fields to embed) has no effect: there is no vector index.

Needs the `langgraph` extra: `pip install "harness-console-client[langgraph]"`.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from harness_client.client import AsyncHarnessClient, HarnessClient, counterpart
from harness_client.errors import NotFoundError

__all__ = ["HarnessStore", "MemoryHeld", "graph_provenance"]

_C = TypeVar("_C", HarnessClient, AsyncHarnessClient)


class MemoryHeld(Exception):
    """A put the scope's write policy held for review: stored, waiting in the operators' queue; the key's old value
    (if any) stands until it is approved. `held` lists each held put of the batch as (namespace, key, record id,
    reason); `results` is what the batch returned."""

    def __init__(self, held: list[tuple[tuple[str, ...], str, int, str]], results: list[Result]) -> None:
        self.held, self.results = held, results
        namespace, key, record_id, reason = held[0]
        more = f" (and {len(held) - 1} more)" if len(held) > 1 else ""
        super().__init__(f"Memory put {namespace!r}/{key!r} was held for review as record {record_id}: {reason}{more}")

    @property
    def record_id(self) -> int:
        return self.held[0][2]

    @property
    def reason(self) -> str:
        return self.held[0][3]


def graph_provenance() -> dict[str, str] | None:
    """Where in a graph run this call is made (thread, checkpoint namespace and id, node), or None outside one."""
    try:
        from langgraph.config import get_config

        config = get_config()
    except (ImportError, RuntimeError):
        return None
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    thread_id = configurable.get("thread_id", metadata.get("thread_id"))
    if thread_id is None:
        return None
    # Inside a node, checkpoint_ns is the task's ("node:<task id>", under its parents' for a subgraph) and the
    # checkpoint the step runs from is its graph's entry in checkpoint_map.
    task_ns = str(configurable.get("checkpoint_ns") or metadata.get("langgraph_checkpoint_ns") or "")
    graph_ns = "|".join(task_ns.split("|")[:-1]) if metadata.get("langgraph_node") else task_ns
    checkpoint_map = configurable.get("checkpoint_map") or {}
    found = {
        "thread_id": thread_id,
        "checkpoint_ns": graph_ns,
        "checkpoint_id": configurable.get("checkpoint_id") or checkpoint_map.get(graph_ns) or "",
        "node": metadata.get("langgraph_node", ""),
    }
    return {name: str(value) for name, value in found.items() if value is not None}


def _time(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value)


def _item(body: Mapping[str, Any]) -> Item:
    return Item(value=body["value"], key=body["key"], namespace=tuple(body["namespace"]),
                created_at=_time(body["created_at"]), updated_at=_time(body["updated_at"]))


def _search_item(body: Mapping[str, Any]) -> SearchItem:
    return SearchItem(namespace=tuple(body["namespace"]), key=body["key"], value=body["value"],
                      created_at=_time(body["created_at"]), updated_at=_time(body["updated_at"]), score=body["score"])


def _ttl_seconds(minutes: float | None) -> int | None:
    return None if minutes is None else max(1, math.ceil(minutes * 60))


class HarnessStore(BaseStore):
    """A LangGraph store backed by Harness Console's memory (see the module's docstring).

    `HarnessStore()` reads `HARNESS_URL` and `HARNESS_TOKEN`; `client=` / `aclient=` use yours (the other kind is
    made from its URL and token when needed, bound to the same end user when yours is a `for_user` client).
    `end_user`: every call carries a token narrowed to that user (`client.for_user(end_user)`), so the store
    reaches that user's namespaces and the shared ones only. `ttl`: LangGraph's TTLConfig (`default_ttl` minutes,
    `refresh_on_read`). `raise_on_held=False`: a held put returns like an accepted one (see `put_result` for the
    outcome of one put). `project`: for an operator's personal token, the project's slug. `source_run_id` /
    `source_session_id`: the provenance of puts made outside a graph run (the default write policy requires one;
    inside a run, the thread and node are recorded by themselves).
    """

    supports_ttl = True

    def __init__(self, client: HarnessClient | None = None, *, aclient: AsyncHarnessClient | None = None,
                 base_url: str | None = None, token: str | None = None, ttl: TTLConfig | None = None,
                 raise_on_held: bool = True, project: str | None = None, source_run_id: int | None = None,
                 source_session_id: int | None = None, end_user: str | None = None) -> None:
        if end_user is not None and not end_user:
            raise ValueError("end_user is the end user's id (or None: the store's token serves every user)")
        if client is None and aclient is None:
            client = HarnessClient(base_url, token)
        self._client = client.for_user(end_user) if client is not None and end_user else client
        self._aclient = aclient.for_user(end_user) if aclient is not None and end_user else aclient
        self._made: list[HarnessClient | AsyncHarnessClient] = []  # the counterparts made here, kept alive
        self.ttl_config = ttl
        self.raise_on_held = raise_on_held
        self.project = project
        self.source_run_id, self.source_session_id = source_run_id, source_session_id

    def _counterpart(self, have: HarnessClient | AsyncHarnessClient, kind: type[_C]) -> _C:
        made = counterpart(have, kind)
        self._made.append(made)  # kept alive with this adapter (a narrowed client holds its parent)
        return made

    @property
    def client(self) -> HarnessClient:
        if self._client is None:
            if self._aclient is None:
                raise RuntimeError("HarnessStore has no client")
            self._client = self._counterpart(self._aclient, HarnessClient)
        return self._client

    @property
    def aclient(self) -> AsyncHarnessClient:
        if self._aclient is None:
            self._aclient = self._counterpart(self.client, AsyncHarnessClient)
        return self._aclient

    # --- one put, with its outcome ---------------------------------------------------------------------------

    def _put_args(self, op: PutOp) -> dict[str, Any]:
        return {"ttl_seconds": _ttl_seconds(op.ttl), "graph": graph_provenance(), "project": self.project,
                "source_run_id": self.source_run_id, "source_session_id": self.source_session_id}

    def put_result(self, namespace: tuple[str, ...], key: str, value: dict[str, Any], *,
                   ttl: float | None = None) -> dict[str, Any]:
        """Put one value and return the API's answer (`outcome`: accepted, held or merged; `reason`; `record`),
        without raising for a held put."""
        op = PutOp(tuple(namespace), str(key), value, ttl=ttl)
        return self.client.store_put(op.namespace, op.key, op.value or {}, **self._put_args(op))

    # --- BaseStore ---------------------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        held: list[tuple[tuple[str, ...], str, int, str]] = []
        for op in ops:
            results.append(self._run(op, held))
        if held and self.raise_on_held:
            raise MemoryHeld(held, results)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        held: list[tuple[tuple[str, ...], str, int, str]] = []
        for op in ops:
            results.append(await self._arun(op, held))
        if held and self.raise_on_held:
            raise MemoryHeld(held, results)
        return results

    def _run(self, op: Op, held: list[tuple[tuple[str, ...], str, int, str]]) -> Result:
        hc = self.client
        if isinstance(op, GetOp):
            try:
                return _item(hc.store_get(op.namespace, op.key, refresh_ttl=op.refresh_ttl, project=self.project))
            except NotFoundError:
                return None
        if isinstance(op, SearchOp):
            return [_search_item(row) for row in hc.store_search(
                op.namespace_prefix, query=op.query, filter=op.filter, limit=op.limit, offset=op.offset,
                refresh_ttl=op.refresh_ttl, project=self.project)]
        if isinstance(op, ListNamespacesOp):
            return [tuple(ns) for ns in hc.store_namespaces(**self._namespaces_args(op))]
        if isinstance(op, PutOp):
            if op.value is None:
                hc.store_delete(op.namespace, op.key, project=self.project)
                return None
            self._note(op, hc.store_put(op.namespace, op.key, op.value, **self._put_args(op)), held)
            return None
        raise ValueError(f"Unknown operation type: {type(op)}")

    async def _arun(self, op: Op, held: list[tuple[tuple[str, ...], str, int, str]]) -> Result:
        hc = self.aclient
        if isinstance(op, GetOp):
            try:
                return _item(await hc.store_get(op.namespace, op.key, refresh_ttl=op.refresh_ttl,
                                                project=self.project))
            except NotFoundError:
                return None
        if isinstance(op, SearchOp):
            return [_search_item(row) for row in await hc.store_search(
                op.namespace_prefix, query=op.query, filter=op.filter, limit=op.limit, offset=op.offset,
                refresh_ttl=op.refresh_ttl, project=self.project)]
        if isinstance(op, ListNamespacesOp):
            return [tuple(ns) for ns in await hc.store_namespaces(**self._namespaces_args(op))]
        if isinstance(op, PutOp):
            if op.value is None:
                await hc.store_delete(op.namespace, op.key, project=self.project)
                return None
            self._note(op, await hc.store_put(op.namespace, op.key, op.value, **self._put_args(op)), held)
            return None
        raise ValueError(f"Unknown operation type: {type(op)}")

    def _namespaces_args(self, op: ListNamespacesOp) -> dict[str, Any]:
        args: dict[str, Any] = {"max_depth": op.max_depth, "limit": op.limit, "offset": op.offset,
                                "project": self.project}
        for condition in op.match_conditions or ():
            if condition.match_type not in ("prefix", "suffix") or condition.match_type in args:
                raise ValueError("HarnessStore takes at most one prefix and one suffix condition")
            args[condition.match_type] = list(condition.path)
        return args

    @staticmethod
    def _note(op: PutOp, answer: Mapping[str, Any], held: list[tuple[tuple[str, ...], str, int, str]]) -> None:
        if answer.get("outcome") == "held":
            held.append((op.namespace, op.key, int(answer["record"]["id"]), str(answer.get("reason", ""))))
