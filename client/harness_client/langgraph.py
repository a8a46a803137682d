"""LangGraph on Harness Console: a checkpointer, and interrupts decided in the console's approval inbox.

    from harness_client.langgraph import HarnessSaver
    graph = builder.compile(checkpointer=HarnessSaver())   # HARNESS_URL and HARNESS_TOKEN from the environment

`HarnessSaver` is a `BaseCheckpointSaver`: a thread is a run of the token's project (its `ref` is the thread id,
at most 64 characters; created on the thread's first checkpoint), each checkpoint one of the run's checkpoints
(namespace, id, parent, metadata), so the console shows a thread's lineage, forks and diffs. What it stores and
returns is what LangGraph's own `PostgresSaver` does, call by call (tests/client/test_langgraph_differential.py),
with one difference: a checkpoint is immutable, so writing an id again with other content is a ConflictError
`checkpoint_exists` (LangGraph never does; PostgresSaver would overwrite).

A channel's value is stored as JSON when it is JSON and reads back exactly the same (the console's diff shows
it as it is), and as the serializer's typed bytes otherwise (`{"__lg_type__": "msgpack", "b64": "..."}`).

`request_approval` turns an `interrupt()` into an approval request the console's reviewers decide; the graph
resumes with `Command(resume=<the decision>)` (see `approval_decision`).

`HarnessSaver(end_user="u-17")` serves one end user: every call it makes (and `request_approval`'s, and a
`HarnessUsageCallback` given the saver) carries a token narrowed to that user, minted with the saver's token through
the client's `for_user` and minted again before it expires. Its threads are created tagged with the user, and
another user's thread is not its to read (absent) or write (ConflictError `thread_ref_taken`).

`HarnessUsageCallback` (a LangChain callback handler: `graph.invoke(input, {"callbacks": [it], ...})`) reports
each model call's tokens and cost to the thread's run and stops the graph (RunStopped) at its budget or deadline.

Needs the `langgraph` extra: `pip install "harness-console-client[langgraph]"`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from harness_client.client import AsyncHarnessClient, HarnessClient, counterpart
from harness_client.errors import HarnessError
from harness_client.models import Approval, Risk, Run
from harness_client.threads import ThreadCheckpoint, ThreadPruned, ThreadTtl
from harness_client.usage import ModelPrice, RunStopped, call_cost, stop_if_blocked, usage_request_key

__all__ = ["TYPED", "ApprovalNotResumed", "HarnessSaver", "HarnessUsageCallback", "KeptThreadsWarning", "ModelPrice",
           "RunStopped",
           "approval_ids", "decode_value", "encode_value", "register_tool_schemas", "request_approval",
           "tool_json_schema"]

_C = TypeVar("_C", HarnessClient, AsyncHarnessClient)

TYPED = "__lg_type__"  # the key that marks a value stored as the serializer's typed bytes
_MAX_INT_BITS = 4096  # Python's json refuses integers of more than 4,300 digits
_MAX_DEPTH = 16  # deeper JSON is stored typed: the API refuses bodies nested deeper than 32


def _json_text(value: str) -> bool:
    """A string PostgreSQL's jsonb keeps as it is: no NUL, no lone surrogate."""
    if "\x00" in value:
        return False
    if value.isascii():
        return True
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _is_json(value: Any, depth: int = 0) -> bool:
    """Whether `value` survives JSON (and jsonb) unchanged: the same types and values back."""
    kind = type(value)
    if value is None or kind is bool:
        return True
    if kind is str:
        return _json_text(value)
    if kind is int:  # any size: jsonb keeps it, where the serializer stops at 64 bits
        return bool(value.bit_length() < _MAX_INT_BITS)
    if kind is float:
        # jsonb keeps a number's digits: 1e+16 would come back as the integer 10000000000000000, and -0.0 as 0.0.
        return math.isfinite(value) and not (value == 0 and math.copysign(1, value) < 0) and "e+" not in repr(value)
    if depth >= _MAX_DEPTH:
        return False
    if kind is list:
        return all(_is_json(v, depth + 1) for v in value)
    if kind is dict:
        return all(type(k) is str and _json_text(k) and _is_json(v, depth + 1) for k, v in value.items())
    return False


def encode_value(serde: SerializerProtocol, value: Any) -> Any:
    """A channel's (or a write's) value as stored: itself when it is JSON, else the serializer's typed bytes."""
    if _is_json(value) and not (type(value) is dict and TYPED in value):
        return value
    kind, data = serde.dumps_typed(value)
    return {TYPED: kind, "b64": base64.b64encode(data).decode("ascii")}


def decode_value(serde: SerializerProtocol, stored: Any) -> Any:
    if type(stored) is dict and TYPED in stored:
        return serde.loads_typed((stored[TYPED], base64.b64decode(stored["b64"])))
    return stored


class HarnessSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer backed by Harness Console (see the module's docstring).

    `HarnessSaver()` reads `HARNESS_URL` and `HARNESS_TOKEN`; `HarnessSaver(client=HarnessClient(...))` or
    `HarnessSaver(client=AsyncHarnessClient(...))` uses yours (the other kind is made from its URL and token
    when a graph calls the other kind of method: `invoke` the sync ones, `ainvoke` the async ones).
    `lease_owner`: the owner the thread's run is leased to (the saver sends it with every checkpoint and
    approval request; None, the default, says the graph holds no lease). While the run holds a lease, a write
    naming no owner or another one is refused (ConflictError `lease_lost`), fencing off a stale process.
    `end_user`: the end user the graph serves. Every call then carries a token narrowed to that user
    (`client.for_user(end_user)`: minted with the saver's token on first use and again before it expires, for the
    sync and the async client alike), so the saver creates its threads tagged with the user and reaches no other
    user's thread, run or approval. A client made by `for_user` may be passed as `client=` instead (without
    `end_user`); the other kind is then made bound to the same user.
    """

    def __init__(
        self, client: HarnessClient | AsyncHarnessClient | None = None, *, base_url: str | None = None,
        token: str | None = None, serde: SerializerProtocol | None = None, lease_owner: str | None = None,
        end_user: str | None = None,
    ) -> None:
        super().__init__(serde=serde)
        if end_user is not None and not end_user:
            raise ValueError("end_user is the end user's id (or None: the saver's token serves every user)")
        self._sync: HarnessClient | None = None
        self._async: AsyncHarnessClient | None = None
        # The clients made here for the other kind of method, kept so that their connections live as long as the
        # saver (a `for_user` client shares its parent's).
        self._made: list[HarnessClient | AsyncHarnessClient] = []
        if isinstance(client, AsyncHarnessClient):
            self._async = client.for_user(end_user) if end_user else client
        elif isinstance(client, HarnessClient):
            self._sync = client.for_user(end_user) if end_user else client
        else:
            made = HarnessClient(base_url, token)
            self._sync = made.for_user(end_user) if end_user else made
        self.end_user = end_user
        self.lease_owner = lease_owner

    # --- the clients ---------------------------------------------------------------------------------

    def _counterpart(self, have: HarnessClient | AsyncHarnessClient, kind: type[_C]) -> _C:
        made = counterpart(have, kind)
        self._made.append(made)  # kept alive with this adapter (a narrowed client holds its parent)
        return made

    @property
    def client(self) -> HarnessClient:
        if self._sync is None:
            assert self._async is not None  # noqa: S101 - one is always set
            self._sync = self._counterpart(self._async, HarnessClient)
        return self._sync

    @property
    def aclient(self) -> AsyncHarnessClient:
        if self._async is None:
            assert self._sync is not None  # noqa: S101 - one is always set
            self._async = self._counterpart(self._sync, AsyncHarnessClient)
        return self._async

    # --- encoding --------------------------------------------------------------------------------------

    def _put_body(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                  ) -> dict[str, Any]:
        configurable = config["configurable"]
        versions = checkpoint["channel_versions"]
        values: dict[str, Any] = {}
        for channel, value in checkpoint["channel_values"].items():
            # As PostgresSaver: a value of a channel with no version is kept only when it is a primitive.
            if channel in versions or value is None or isinstance(value, str | int | float | bool):
                values[channel] = encode_value(self.serde, value)
        rest = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        return {
            "thread_id": str(configurable["thread_id"]), "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": checkpoint["id"], "parent_checkpoint_id": configurable.get("checkpoint_id"),
            "checkpoint": rest, "channel_values": values,
            "metadata": get_serializable_checkpoint_metadata(config, metadata), "lease_owner": self.lease_owner,
        }

    def _writes_body(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str,
                     ) -> dict[str, Any]:
        configurable = config["configurable"]
        rows = [(WRITES_IDX_MAP.get(channel, idx), channel, encode_value(self.serde, value))
                for idx, (channel, value) in enumerate(writes)]
        return {"thread_id": str(configurable["thread_id"]), "checkpoint_ns": configurable.get("checkpoint_ns", ""),
                "checkpoint_id": configurable["checkpoint_id"], "task_id": task_id, "task_path": task_path,
                "writes": rows}

    def _tuple(self, stored: ThreadCheckpoint) -> CheckpointTuple:
        serde = self.serde
        ns = stored.checkpoint_ns
        values = {k: decode_value(serde, v) for k, v in stored.channel_values.items()}
        checkpoint = cast(Checkpoint, {**stored.checkpoint, "channel_values": values})
        parent = stored.parent_checkpoint_id
        return CheckpointTuple(
            config={"configurable": {"thread_id": stored.thread_id, "checkpoint_ns": ns,
                                     "checkpoint_id": stored.checkpoint_id}},
            checkpoint=checkpoint,
            metadata=cast(CheckpointMetadata, stored.metadata),
            parent_config=({"configurable": {"thread_id": stored.thread_id, "checkpoint_ns": ns,
                                             "checkpoint_id": parent}} if parent else None),
            pending_writes=[(task_id, channel, decode_value(serde, value))
                            for task_id, channel, value, _, _ in stored.pending_writes],
        )

    @staticmethod
    def _next_config(body: Mapping[str, Any]) -> RunnableConfig:
        return {"configurable": {"thread_id": body["thread_id"], "checkpoint_ns": body["checkpoint_ns"],
                                 "checkpoint_id": body["checkpoint_id"]}}

    @staticmethod
    def _get_args(config: RunnableConfig) -> dict[str, Any]:
        configurable = config["configurable"]
        return {"thread_id": str(configurable["thread_id"]), "checkpoint_ns": configurable.get("checkpoint_ns", ""),
                "checkpoint_id": get_checkpoint_id(config)}

    @staticmethod
    def _list_args(config: RunnableConfig | None, filter: dict[str, Any] | None,
                   before: RunnableConfig | None, limit: int | None) -> dict[str, Any] | None:
        """The list request's arguments, or None when nothing can match (a `before` without a checkpoint id:
        PostgresSaver compares with NULL)."""
        args: dict[str, Any] = {"thread_id": None, "filter": filter or None,
                                "limit": None if limit is None else int(limit)}
        if config:
            configurable = config["configurable"]
            args["thread_id"] = str(configurable["thread_id"])
            args["checkpoint_ns"] = configurable.get("checkpoint_ns")
            args["checkpoint_id"] = get_checkpoint_id(config)
        if before is not None:
            before_id = get_checkpoint_id(before)
            if not before_id:
                return None
            args["before"] = before_id
        return args

    # --- BaseCheckpointSaver, synchronously -------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        stored = self.client.get_thread_checkpoint(**self._get_args(config))
        return None if stored is None else self._tuple(stored)

    def list(
        self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None, limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        args = self._list_args(config, filter, before, limit)
        if args is None:
            return
        for stored in self.client.thread_checkpoints(**args):
            yield self._tuple(stored)

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        body = self._put_body(config, checkpoint, metadata)
        self.client.put_thread_checkpoint(**body)
        return self._next_config(body)

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        if writes:
            self.client.put_thread_writes(**self._writes_body(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self.client.delete_thread(str(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.client.copy_thread(str(source_thread_id), str(target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        _warn_kept(self.client.prune_threads([str(t) for t in thread_ids], strategy=_strategy(strategy)))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        if run_ids:
            _warn_kept(self.client.delete_thread_runs([str(r) for r in run_ids]))

    def set_ttl(self, thread_id: str, ttl_days: int | None) -> ThreadTtl:
        """Set a thread's own time to live in days since its last change (None: its project's default)."""
        return self.client.set_thread_ttl(str(thread_id), ttl_days)

    # --- and asynchronously -----------------------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        stored = await self.aclient.get_thread_checkpoint(**self._get_args(config))
        return None if stored is None else self._tuple(stored)

    async def alist(
        self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None, limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        args = self._list_args(config, filter, before, limit)
        if args is None:
            return
        for stored in await self.aclient.thread_checkpoints(**args):
            yield self._tuple(stored)

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        body = self._put_body(config, checkpoint, metadata)
        await self.aclient.put_thread_checkpoint(**body)
        return self._next_config(body)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        if writes:
            await self.aclient.put_thread_writes(**self._writes_body(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self.aclient.delete_thread(str(thread_id))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self.aclient.copy_thread(str(source_thread_id), str(target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        _warn_kept(await self.aclient.prune_threads([str(t) for t in thread_ids], strategy=_strategy(strategy)))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        if run_ids:
            _warn_kept(await self.aclient.delete_thread_runs([str(r) for r in run_ids]))

    async def aset_ttl(self, thread_id: str, ttl_days: int | None) -> ThreadTtl:
        """`set_ttl`, awaited."""
        return await self.aclient.set_thread_ttl(str(thread_id), ttl_days)

    # --- versions, as PostgresSaver makes them -----------------------------------------------------------

    def get_next_version(self, current: str | None, channel: None) -> str:
        # `current` may be an int too (a thread started by a saver with int versions).
        value: object = current
        if value is None:
            current_v = 0
        elif isinstance(value, int):
            current_v = value
        else:
            current_v = int(str(value).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"  # noqa: S311 - a tie-breaker, not a secret

    # --- interrupts decided in the console -------------------------------------------------------------

    def wait_for_decision(self, approval_id: int, *, timeout: float = 600.0, poll_interval: float = 1.0,
                          max_poll_interval: float = 10.0) -> dict[str, Any]:
        """Wait until a reviewer has decided the approval `request_approval` asked for and the resume worker has
        bound the decision to the thread's run; return it, for `graph.invoke(Command(resume=<it>), config)`.

        The decision is the run's `bound_result`: `{"decision": "approved", "arguments": <the approved ones,
        edited or not>, "by": ..., "fingerprint": ..., ...}` or `{"decision": "rejected" | "expired",
        "reason": ..., ...}`. ApprovalNotResumed if the resume's re-validation blocked the run instead. It waits on
        the push's long poll when the client has one (docs/agents/push.md), else polls from `poll_interval`.
        """
        approval = self.client.wait_for_approval(approval_id, until_resumed=True, timeout=timeout,
                                                 poll_interval=poll_interval, max_poll_interval=max_poll_interval)
        return _bound_decision(approval, self.client.get_run(approval.run))

    async def await_decision(self, approval_id: int, *, timeout: float = 600.0, poll_interval: float = 1.0,
                             max_poll_interval: float = 10.0) -> dict[str, Any]:
        """`wait_for_decision`, awaited."""
        approval = await self.aclient.wait_for_approval(
            approval_id, until_resumed=True, timeout=timeout, poll_interval=poll_interval,
            max_poll_interval=max_poll_interval)
        return _bound_decision(approval, await self.aclient.get_run(approval.run))

    def report_outcome(self, approval_id: int, outcome: Literal["ran", "not_run"], *, reason: str | None = None
                       ) -> Approval:
        """Say what the graph did with an approved action it runs itself: `"ran"`, or `"not_run"` with the
        `reason` (until then the console shows it "approved, waiting for the agent"); the approval as the harness
        answered (`outcome_state`). Sent as the saver's `lease_owner`."""
        return self.client.report_approval_outcome(approval_id, outcome, reason=reason, lease_owner=self.lease_owner)


def _strategy(strategy: str) -> Literal["keep_latest", "delete"]:
    if strategy not in ("keep_latest", "delete"):
        raise ValueError(f"prune's strategy is 'keep_latest' or 'delete', not {strategy!r}")
    return cast(Literal["keep_latest", "delete"], strategy)


def _warn_kept(pruned: ThreadPruned) -> None:
    """A thread a pending approval or an unconsumed effect needs is left whole by a prune (the retention keep
    rules): said as a warning, since LangGraph's `prune` answers nothing."""
    if pruned.kept:
        kept = ", ".join(f"{k['thread_id']} ({k['rule']})" for k in pruned.kept)
        warnings.warn(f"Harness kept thread(s) a retention rule needs: {kept}", KeptThreadsWarning, stacklevel=3)


class KeptThreadsWarning(UserWarning):
    """A prune or a deletion by run left threads whole: a pending approval or an unconsumed effect needs them."""


class ApprovalNotResumed(HarnessError):
    """The approval was decided, but the resume's re-validation left the thread's run blocked (`run`)."""

    def __init__(self, detail: str, *, run: Run) -> None:
        super().__init__(detail, code="approval_not_resumed", body={"run": run.id, "status": run.status,
                                                                     "blocked_step": run.blocked_step})
        self.run = run


def _bound_decision(approval: Approval, run: Run) -> dict[str, Any]:
    bound = run.bound_result
    if run.status != "running" or not isinstance(bound, dict) or bound.get("approval") != approval.id:
        raise ApprovalNotResumed(
            f"Approval {approval.id} is {approval.status} but run {run.id} is {run.status}"
            f"{f' (blocked at {run.blocked_step})' if run.blocked_step else ''}.", run=run)
    return dict(bound)


def tool_json_schema(tool: BaseTool) -> dict[str, Any] | None:
    """The JSON Schema of a LangChain tool's arguments, as the model is told them (`tool_call_schema`, the
    arguments without injected ones; `args_schema` when it has none), or None when the tool declares none.
    A pydantic model's schema (`@tool`, StructuredTool) says nothing of `additionalProperties`: an unknown
    argument passes the check, and pydantic drops it when the tool runs."""
    for declared in (getattr(tool, "tool_call_schema", None), getattr(tool, "args_schema", None)):
        if isinstance(declared, dict):
            return dict(declared)
        if declared is not None and hasattr(declared, "model_json_schema"):
            return cast(dict[str, Any], declared.model_json_schema())
    return None


def register_tool_schemas(client: HarnessClient, tools: Sequence[BaseTool]) -> dict[str, int]:
    """Declare each tool's argument schema in the token's project (the tool registry): the approvals asked for it
    are then validated against it, and the console's edit form is typed from it. A tool with no schema is left
    out; registering the schema a tool has already is a no-op. Returns each registered tool's schema version."""
    versions: dict[str, int] = {}
    for tool in tools:
        schema = tool_json_schema(tool)
        if schema is not None:
            versions[tool.name] = client.register_tool_schema(
                tool.name, schema, request_key=_schema_request_key(tool.name, schema)).version
    return versions


def _schema_request_key(tool: str, schema: Mapping[str, Any]) -> str:
    text = json.dumps([tool, schema], sort_keys=True, default=str)
    return "tool-schema-" + hashlib.sha256(text.encode()).hexdigest()[:48]


def request_approval(
    tool: str | BaseTool, arguments: Mapping[str, Any], *, reason: str = "", risk: Risk = "high",
    client: HarnessClient | None = None,
) -> Any:
    """Inside a graph node: ask the console's reviewers to approve `tool(arguments)`, and interrupt the graph
    until they have decided. Returns what the graph is resumed with: `Command(resume=...)`, normally the
    decision `HarnessSaver.wait_for_decision` returns.

    The approval request (`executor="agent"`: this graph runs the tool itself once approved) is posted on the
    thread's run under a key derived from the thread, the task and the action, so the node, run again when
    the graph resumes, finds the same request instead of asking twice. The interrupt's value carries
    `approval_id`, `tool`, `arguments` and `reason` (`approval_ids(result["__interrupt__"])` reads the ids).
    The client is the graph's HarnessSaver's (`client=` for another checkpointer). `tool` may be the LangChain
    tool itself: its argument schema is registered first (`register_tool_schemas`), so the request is validated
    against it.
    """
    from langgraph.config import get_config
    from langgraph.types import interrupt

    configurable = get_config()["configurable"]
    saver = configurable.get("__pregel_checkpointer")  # langgraph._internal._constants.CONFIG_KEY_CHECKPOINTER
    hc = client or (saver.client if isinstance(saver, HarnessSaver) else None)
    if hc is None:
        raise ValueError("request_approval needs a graph compiled with HarnessSaver, or client=.")
    if not isinstance(tool, str):
        register_tool_schemas(hc, [tool])
        tool = tool.name
    thread_id = str(configurable["thread_id"])
    action = json.dumps([thread_id, configurable.get("checkpoint_ns", ""), tool, arguments], sort_keys=True,
                        default=str)
    key = "langgraph-" + hashlib.sha256(action.encode()).hexdigest()[:48]
    run = hc.ensure_thread(thread_id).run  # its checkpoints may still be on their way (saved in the background)
    asked = next((a for a in hc.list_approvals(run=run) if a.idempotency_key == key), None)
    if asked is None:
        # Fenced as the saver's checkpoints are (its lease owner, sent always); the run's version is optional at
        # this door: the graph's background checkpoint writes move it.
        owner = saver.lease_owner if isinstance(saver, HarnessSaver) else None
        asked = hc.request_approval(run, tool=tool, arguments=dict(arguments), idempotency_key=key,
                                    risk=risk, reason=reason or None, executor="agent", lease_owner=owner,
                                    request_key=key)
    return interrupt({"approval_id": asked.id, "tool": tool, "arguments": dict(arguments), "reason": reason})


def approval_ids(interrupts: Sequence[Any]) -> list[int]:
    """The approval ids in a graph's interrupts (`result["__interrupt__"]`, or `graph.get_state(config).interrupts`)
    that `request_approval` raised."""
    ids: list[int] = []
    for item in interrupts:
        value = getattr(item, "value", None)
        if isinstance(value, dict) and isinstance(value.get("approval_id"), int):
            ids.append(value["approval_id"])
    return ids


# --- usage: each model call's tokens and cost, reported to the thread's run --------------------------------


class HarnessUsageCallback(BaseCallbackHandler):
    """A LangChain callback handler that reports each model call's usage to a harness run, and stops the graph
    at the run's limits.

        usage = HarnessUsageCallback.for_thread(saver, "thread-7", prices={"gpt-4.1": ModelPrice(...)})
        graph.invoke(inputs, {"configurable": {"thread_id": "thread-7"}, "callbacks": [usage]})

    After every model call (`on_llm_end`) it reports the call's input + output tokens (the generations'
    `usage_metadata`, else `llm_output["token_usage"]`'s prompt and completion tokens), the cost by `prices`
    (per million tokens, keyed by model name; a model it does not name costs 0), and the model's name. The
    report's Idempotency-Key is derived from the run and the response's id (the provider's, else the message's),
    so a report sent again for the same response is counted once. When the answer is a blocked run (its token
    or cost budget reached, its deadline passed), the handler raises RunStopped (`raise_error`: LangChain would
    otherwise log and swallow it), which ends the graph's step before any tool the model asked for runs; model
    and tool calls made later through the same handler are refused too, without a request. `reports` keeps
    every answer, in order.
    """

    raise_error = True  # a stop must stop the graph, not become a log line

    def __init__(self, client: HarnessClient | HarnessSaver, run_id: int, *,
                 prices: Mapping[str, ModelPrice] | None = None, model: str | None = None,
                 lease_owner: str | None = None) -> None:
        self.client = client.client if isinstance(client, HarnessSaver) else client
        self.run_id, self.prices, self.model, self.lease_owner = run_id, prices, model, lease_owner
        self.reports: list[Run] = []
        self._models: dict[UUID, str] = {}  # the model each call in flight named when it started

    @classmethod
    def for_thread(cls, client: HarnessClient | HarnessSaver, thread_id: str, *,
                   prices: Mapping[str, ModelPrice] | None = None, model: str | None = None,
                   lease_owner: str | None = None) -> HarnessUsageCallback:
        """The handler for a LangGraph thread's run (created now if the thread has none yet)."""
        hc = client.client if isinstance(client, HarnessSaver) else client
        return cls(hc, hc.ensure_thread(str(thread_id)).run, prices=prices, model=model, lease_owner=lease_owner)

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID,
                     metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._started(run_id, metadata)

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], *, run_id: UUID,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._started(run_id, metadata)

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kwargs: Any) -> None:
        self._refuse_when_stopped()

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        input_tokens, output_tokens = _tokens(response)
        model = self.model or _model_of(response) or self._models.get(run_id, "")
        self._models.pop(run_id, None)
        call_id = _response_id(response) or str(run_id)
        run = self.client.report_usage(
            self.run_id, tokens=input_tokens + output_tokens,
            cost=call_cost(self.prices, model, input_tokens, output_tokens), model=model or None, call_id=call_id,
            lease_owner=self.lease_owner, request_key=usage_request_key(self.run_id, call_id),
        )
        self.reports.append(run)
        stop_if_blocked(run)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._models.pop(run_id, None)

    def _started(self, run_id: UUID, metadata: dict[str, Any] | None) -> None:
        self._refuse_when_stopped()
        name = (metadata or {}).get("ls_model_name")  # what LangChain's chat models name themselves for tracing
        if isinstance(name, str):
            self._models[run_id] = name

    def _refuse_when_stopped(self) -> None:
        if self.reports:
            stop_if_blocked(self.reports[-1])


def _generation_messages(response: LLMResult) -> list[Any]:
    return [g.message for batch in response.generations for g in batch if isinstance(g, ChatGeneration)]


def _tokens(response: LLMResult) -> tuple[int, int]:
    """The call's (input, output) tokens: the messages' usage_metadata, else the provider's llm_output."""
    metered = [m.usage_metadata for m in _generation_messages(response) if getattr(m, "usage_metadata", None)]
    if metered:
        return (sum(int(u.get("input_tokens", 0)) for u in metered),
                sum(int(u.get("output_tokens", 0)) for u in metered))
    usage = (response.llm_output or {}).get("token_usage") or {}
    return int(usage.get("prompt_tokens", 0) or 0), int(usage.get("completion_tokens", 0) or 0)


def _model_of(response: LLMResult) -> str:
    named = (response.llm_output or {}).get("model_name")
    if not named:
        for message in _generation_messages(response):
            meta = message.response_metadata or {}
            named = meta.get("model_name") or meta.get("model")
            if named:
                break
    return named if isinstance(named, str) else ""


def _response_id(response: LLMResult) -> str:
    """The provider's id of the response, else the first message's id (LangChain gives every message one)."""
    given = (response.llm_output or {}).get("id")
    if isinstance(given, str) and given:
        return given
    for message in _generation_messages(response):
        meta_id = (message.response_metadata or {}).get("id")
        if isinstance(meta_id, str) and meta_id:
            return meta_id
        if isinstance(message.id, str) and message.id:
            return message.id
    return ""


# --- a graph invocation that ends its thread's run -------------------------------------------------------------


def invoke_and_finish(graph: Any, input: Any, config: RunnableConfig, *, client: HarnessClient | HarnessSaver,
                      **kwargs: Any) -> Any:
    """`graph.invoke(input, config, **kwargs)`, then end the thread's run (issue 32: threads were left `running`
    after the script ended): `succeeded` when the graph reached its end, `failed` with the error's type and
    message when it raised (the error is raised on). A graph that stopped at an interrupt (an approval waits)
    or has nodes left to run is left as it is: the thread goes on. The run's ref is the thread id; its
    `active_agent` the graph's name (`graph.name`), set before the graph runs."""
    harness = client.client if isinstance(client, HarnessSaver) else client
    thread_id = str(config["configurable"]["thread_id"])
    name = getattr(graph, "name", "") or ""
    harness.ensure_thread(thread_id, agent=name if isinstance(name, str) else "")
    try:
        result = graph.invoke(input, config, **kwargs)
    except BaseException as exc:
        finish_thread_run(harness, thread_id, error=exc)
        raise
    if not graph.get_state(config).next:
        finish_thread_run(harness, thread_id)
    return result


def finish_thread_run(client: HarnessClient, thread_id: str, *, error: BaseException | None = None) -> Run:
    """End a thread's run: `succeeded`, or `failed` with `error`. A run already ended, or moved on by someone
    else meanwhile, is left as it is and returned."""
    from harness_client.errors import ConflictError

    run = client.get_run(client.ensure_thread(thread_id).run)
    if run.status in ("succeeded", "failed", "cancelled"):
        return run
    body = None if error is None else {"type": type(error).__name__, "message": str(error)[:1000]}
    try:
        return client.transition_run(run.id, "failed" if error is not None else "succeeded",
                                     expected_version=run.version, error=body)
    except ConflictError:
        return client.get_run(run.id)
