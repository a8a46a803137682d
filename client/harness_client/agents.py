"""The OpenAI Agents SDK on Harness Console: a `Session` backed by a harness session's items.

    pip install ./client[agents]
    export HARNESS_URL=http://127.0.0.1:8000 HARNESS_TOKEN=hc_...   # manage.py create_agent_token

    from agents import Agent, Runner
    from harness_client.agents import HarnessSession

    result = await Runner.run(agent, "Hello", session=HarnessSession("user-42"))   # the one-line switch

`HarnessSession(session_id)` is the SDK's `Session` protocol (`get_items`, `add_items`, `pop_item`,
`clear_session`): the SDK's session id names one harness session (its `ref`, unique in the token's project),
found or created on first use, and every SDK item is one of its items, stored as the item's `content` exactly
as the SDK hands it over. The conversation then shows in the console's session timeline, beside the runs,
approvals and memory of the same project.

Tool approvals: a function tool with `needs_approval` stops the SDK's run with `result.interruptions`;
`HarnessApprovals(session).decide(result)` posts each one to the console's approval inbox, waits for a
reviewer's decision, and returns the run's state with the decisions applied, for `Runner.run(agent, state,
session=session)` to go on (`run_with_approvals` does the loop).

Usage: `Runner.run(agent, input, hooks=HarnessUsageHooks(client, run_id, prices=...))` reports each model call's
tokens and cost to the harness run, and stops the agent (RunStopped) once the run reaches its budget or deadline.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self, cast

from agents import Agent, RunContextWrapper, RunHooks, Runner, RunResult, RunResultStreaming, RunState, Tool
from agents.items import ModelResponse, ToolApprovalItem, TResponseInputItem
from agents.memory.session_settings import SessionSettings, resolve_session_limit

from harness_client.client import AsyncHarnessClient
from harness_client.errors import ConflictError, HarnessError
from harness_client.models import Approval, ItemRole, MemoryPolicy, NewItem, Risk, Run, SessionRole
from harness_client.operations import MAX_LATEST_ITEMS
from harness_client.usage import ModelPrice, RunStopped, call_cost, stop_if_blocked, usage_request_key

__all__ = ["ApprovalNotApplied", "HarnessApprovals", "HarnessSession", "HarnessUsageHooks", "ModelPrice", "RunStopped",
           "item_role", "register_tool_schema_of", "run_with_approvals"]

# The harness's item roles (sessions_app.models.ItemRole) an SDK item may carry as its own `role`.
_HARNESS_ROLES: frozenset[str] = frozenset({"user", "assistant", "system", "tool"})
MAX_ITEMS_PER_APPEND = 500  # sessions_app.services.MAX_ITEMS_PER_APPEND
MAX_REF_LENGTH = 64  # sessions_app.models.Session.ref


def item_role(item: Mapping[str, Any]) -> ItemRole:
    """The harness item role an SDK item is filed under (the console shows it; the content is kept whole).

    A message's own role when it is one of the harness's (`user`, `assistant`, `system`, `tool`); `developer`
    instructions are `system`. Otherwise by the item's `type`: a tool's output (`function_call_output`,
    `computer_call_output`, ... every `*_output`) is `tool`; what the model produced (`function_call` and the
    other `*_call`s, `reasoning`, `compaction`, a `message` with no role) is `assistant`; anything else `event`.
    """
    role = item.get("role")
    if isinstance(role, str) and role in _HARNESS_ROLES:
        return cast(ItemRole, role)
    if role == "developer":
        return "system"
    kind = item.get("type")
    if isinstance(kind, str):
        if kind.endswith("_output"):
            return "tool"
        if kind.endswith("_call") or kind in {"reasoning", "compaction", "message"}:
            return "assistant"
    return "event"


class HarnessSession:
    """An OpenAI Agents SDK session whose history is a Harness Console session's items.

    `HarnessSession("user-42")` builds its own `AsyncHarnessClient` from `HARNESS_URL` and `HARNESS_TOKEN`
    (or `base_url=`/`token=`); `client=` shares one you made (several sessions, one connection pool; it is then
    yours to close). `session_id` (1..64 characters) is the harness session's `ref`: the first call finds that
    session in the token's project or creates it (`role`, `memory_policy`, `metadata` apply only then).
    `end_user="u-17"` binds it to the end user it serves: its calls carry a token narrowed to that user (minted
    and renewed with yours), so it finds and reads only that user's sessions and creates its session tagged
    with the user (a ref another user's session holds is then a conflict, not a way in).

    What each SDK call does, over HTTP:

    - `get_items(limit)`: the newest `limit` items, oldest first, in one request (`GET .../items/latest/`, up to
      500; more read further pages); no limit (and no `session_settings.limit`): every item, 200 a page.
    - `add_items(items)`: one append per 500 items, each atomic and retried under one Idempotency-Key, so a
      lost reply never stores an item twice.
    - `pop_item()`: removes and returns the newest item (None when there is none).
    - `clear_session()`: removes every item; the harness session itself, its runs and checkpoints stay.

    Items are stored as given (a JSON object each) and come back equal. PostgreSQL's jsonb keeps them, so
    they cannot hold a NUL character (`\\u0000`) and their keys come back in jsonb's order. A removed item's seq
    is never reused. The harness session is found once per `HarnessSession` and remembered (`harness_id`).
    """

    session_settings: SessionSettings | None

    def __init__(
        self, session_id: str, client: AsyncHarnessClient | None = None, *, base_url: str | None = None,
        token: str | None = None, role: SessionRole | None = None, memory_policy: MemoryPolicy | None = None,
        metadata: Mapping[str, Any] | None = None, session_settings: SessionSettings | None = None,
        end_user: str | None = None,
    ) -> None:
        if not session_id or len(session_id) > MAX_REF_LENGTH:
            raise ValueError(f"session_id is 1 to {MAX_REF_LENGTH} characters (it is the harness session's ref)")
        if client is not None and (base_url is not None or token is not None):
            raise ValueError("pass client= or base_url=/token=, not both")
        self.session_id = session_id
        self.session_settings = session_settings if session_settings is not None else SessionSettings()
        self._owns_client = client is None
        self._base_client = client if client is not None else AsyncHarnessClient(
            base_url or os.environ.get("HARNESS_URL"), token or os.environ.get("HARNESS_TOKEN"))
        # With an end user, every call goes through a token narrowed to that user (AsyncHarnessClient.for_user):
        # the session is found among that user's only, and created tagged with it.
        self.end_user = end_user
        self.client = self._base_client.for_user(end_user) if end_user else self._base_client
        self._role, self._memory_policy = role, memory_policy
        self._metadata = {"agents_sdk_session_id": session_id, **(metadata or {})}
        self._harness_id: int | None = None

    def __repr__(self) -> str:
        return f"HarnessSession({self.session_id!r}, harness_id={self._harness_id})"

    # --- the harness session behind it ---------------------------------------------------------------------

    async def harness_id(self) -> int:
        """The id of the harness session this SDK session is (found by `ref`, or created, on first use)."""
        if self._harness_id is None:
            found = await self.client.session_by_ref(self.session_id)
            if found is None:
                try:
                    found = await self.client.create_session(
                        ref=self.session_id, role=self._role, memory_policy=self._memory_policy,
                        metadata=self._metadata)
                except ConflictError as exc:
                    if exc.code != "already_exists":
                        raise
                    # Another process created it between our look-up and our create: it is the same one, and the
                    # 409 names it (`existing_id`; a server before that is asked by ref).
                    existing = exc.existing_id
                    if existing is not None:
                        self._harness_id = existing
                        return existing
                    found = await self.client.session_by_ref(self.session_id)
                    if found is None:
                        raise
            self._harness_id = found.id
        return self._harness_id

    # --- the Session protocol ------------------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history, oldest first: the newest `limit` items (`session_settings.limit` when None), or all."""
        session = await self.harness_id()
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted is None:
            return [cast(TResponseInputItem, item.content) async for item in self.client.list_items(session,
                                                                                                    page_size=200)]
        if wanted <= 0:
            return []
        if wanted <= MAX_LATEST_ITEMS:
            latest = await self.client.latest_items(session, wanted)
            return [cast(TResponseInputItem, item.content) for item in latest.items]
        return [cast(TResponseInputItem, item.content) for item in await self.client.recent_items(session, wanted)]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append the items in order (one request per 500; each atomic, retried without duplicates)."""
        if not items:
            return
        session = await self.harness_id()
        rows: list[NewItem] = [_new_item(item) for item in items]
        for start in range(0, len(rows), MAX_ITEMS_PER_APPEND):
            await self.client.append_items(session, rows[start:start + MAX_ITEMS_PER_APPEND])

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item; None when the session has none."""
        popped = await self.client.pop_item(await self.harness_id())
        return None if popped.item is None else cast(TResponseInputItem, popped.item.content)

    async def clear_session(self) -> None:
        """Remove every item (the harness session, its runs and checkpoints stay)."""
        await self.client.clear_items(await self.harness_id())

    # --- closing -------------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the client if this session made it (a client passed in is left open)."""
        if self._owns_client:
            await self._base_client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


if TYPE_CHECKING:  # mypy holds HarnessSession to the SDK's Session protocol
    from agents.memory import Session

    _IS_A_SESSION: type[Session] = HarnessSession


def _new_item(item: TResponseInputItem) -> NewItem:
    if not isinstance(item, Mapping):
        raise TypeError(f"an Agents SDK session item is a JSON object (a dict), not {type(item).__name__}")
    return {"role": item_role(item), "content": dict(item)}


# --- tool approvals: the SDK's run interruptions, decided in the console -----------------------------------


class ApprovalNotApplied(HarnessError):
    """The decision could not be handed back: the harness run did not come back `running` after the resume
    (a failed re-validation leaves it `blocked`, naming the check), so the tool call is neither approved nor
    rejected. `run` is the run as last read."""

    def __init__(self, detail: str, *, run: Run) -> None:
        super().__init__(detail, code="approval_not_applied")
        self.run = run


class HarnessApprovals:
    """Routes an Agents SDK run's tool approvals (`needs_approval` tools) to the console's approval inbox.

        approvals = HarnessApprovals(session)
        result = await Runner.run(agent, "Publish chapter 3", session=session)
        while result.interruptions:
            state = await approvals.decide(result)      # a reviewer decides each in the console
            result = await Runner.run(agent, state, session=session)
            await approvals.report_ran(result)          # the approved calls that ran are reported `ran`

    Each interruption becomes an ApprovalRequest on one harness run of the session (created and started on
    first use, or `run_id=` yours): the tool's name and its arguments (the call's JSON object), `risk`, and
    an idempotency key derived from the SDK's call id (`agents-sdk:<run>:<call id>`), with
    `executor="agent"`: the SDK runs the tool itself once approved, nothing runs in the resume worker. The
    request is posted under an Idempotency-Key derived from the same key, so a process that restarts and
    asks again gets the same approval back. `decide` then waits (`timeout`) until the approval is decided and
    the worker has bound the decision to the run (on the push's long poll when the client has one,
    docs/agents/push.md; else polling from `poll_interval` up to `max_poll_interval` seconds), and applies it:
    `state.approve(item)`; or `state.reject(item)` with the reviewer's reason as the message the model reads
    (also for an expired approval, and for arguments a reviewer edited: the SDK can only run the call it made,
    so the model is told which arguments were approved and may call again).
    A run the resume left `blocked` raises ApprovalNotApplied. `lease_owner`: the owner you leased the run
    with, if you claim it (sent with every request; None says you hold no lease). `on_request(approval)` is
    called when a request is posted (say where the reviewer finds it); `decisions` keeps every decided
    approval, in order, as last known.

    The harness is told what became of each approved call (`report_approval_outcome`), so the console never
    shows an approved call as done when it was not: a call approved with edited arguments is reported `not_run`
    at once (with the reason above); a call approved as asked is reported `ran` when the SDK's next run returns
    its tool output (`report_ran(result)`; `run_with_approvals` calls it after every `Runner.run`; call it
    yourself after yours). `outcomes` maps each decided call id to what it came to (`Approval.outcome_state`:
    `approved_ran`, `approved_not_run`, `approved_waiting_agent` until the tool ran, `rejected`, `expired`).
    """

    def __init__(
        self, session: HarnessSession, *, run_id: int | None = None, risk: Risk = "high",
        timeout: float = 3600.0, poll_interval: float = 1.0, max_poll_interval: float = 10.0,
        active_agent: str | None = None, on_request: Callable[[Approval], object] | None = None,
        lease_owner: str | None = None, ref: str | None = None,
    ) -> None:
        self.session = session
        self.lease_owner = lease_owner
        self.client = session.client
        self.risk: Risk = risk
        self.timeout, self.poll_interval, self.max_poll_interval = timeout, poll_interval, max_poll_interval
        self.active_agent = active_agent
        self.on_request = on_request
        self.decisions: list[Approval] = []
        self.outcomes: dict[str, str] = {}  # call id -> Approval.outcome_state
        self._awaiting_run: dict[str, Approval] = {}  # approved as asked, tool output not seen yet
        self._run_id = run_id
        self.ref = ref

    async def run_id(self) -> int:
        """The harness run the approvals are asked on (created in the session and moved to `running`)."""
        if self._run_id is None:
            run = await self.client.create_run(session=await self.session.harness_id(),
                                               active_agent=self.active_agent, ref=self.ref)
            await self.client.transition_run(run.id, "running", expected_version=run.version)
            self._run_id = run.id
        return self._run_id

    async def decide(self, result: RunResult | RunResultStreaming | RunState[Any]) -> RunState[Any]:
        """Ask for each interruption of `result` in turn, wait for its decision, and apply it to the state."""
        state = result if isinstance(result, RunState) else result.to_state()
        for item in state.get_interruptions():
            approval = await self.ask(item)
            call_id = item.call_id or ""
            if approval.approved and approval.approved_fingerprint == approval.action_fingerprint:
                state.approve(item)
                self._awaiting_run[call_id] = approval  # ran once the SDK's next run returns its output
            else:
                message = _rejection_message(approval)
                state.reject(item, rejection_message=message)
                if approval.approved:  # approved with edits the SDK cannot run: say so, or it reads as done
                    approval = await self._report(approval, "not_run", reason=message)
            self.outcomes[call_id] = approval.outcome_state
        return state

    async def report_ran(self, result: RunResult | RunResultStreaming) -> list[Approval]:
        """Report `ran` for each approved call whose tool output `result` holds (the SDK ran it); the approvals
        reported, as the harness answered."""
        reported = []
        for item in result.new_items:
            call_id = getattr(item, "call_id", None) if getattr(item, "type", "") == "tool_call_output_item" else None
            approval = self._awaiting_run.pop(call_id, None) if call_id else None
            if approval is not None and call_id is not None:
                approval = await self._report(approval, "ran")
                self.outcomes[call_id] = approval.outcome_state
                reported.append(approval)
        return reported

    async def _report(self, approval: Approval, outcome: Literal["ran", "not_run"], reason: str = "") -> Approval:
        reported = await self.client.report_approval_outcome(
            approval.id, outcome, reason=reason or None, lease_owner=self.lease_owner,
            request_key=f"approval-outcome:{approval.id}")
        self.decisions = [reported if d.id == reported.id else d for d in self.decisions]
        return reported

    async def ask(self, item: ToolApprovalItem) -> Approval:
        """Post one interruption as an approval request and wait until it is decided and bound to the run."""
        run_id = await self.run_id()
        call_id = item.call_id or ""
        key = f"agents-sdk:{run_id}:{call_id}"[:200]
        # Fenced on the lease (the owner sent always; None: this session holds none). No run version: a process
        # that restarts asks again with the same body under the same key and gets the same approval back, and
        # the run's version has moved with the first request by then.
        await register_tool_schema_of(self.client, item)
        approval = await self.client.request_approval(
            run_id, tool=item.name or "tool", arguments=_arguments(item.arguments), idempotency_key=key,
            risk=self.risk, reason=f"Agents SDK tool call {call_id} in session {self.session.session_id!r}",
            executor="agent", lease_owner=self.lease_owner,
            request_key=f"approval-request:{key}"[:200],
        )
        if self.on_request is not None:
            self.on_request(approval)
        decided = await self.client.wait_for_approval(
            approval.id, timeout=self.timeout, poll_interval=self.poll_interval,
            max_poll_interval=self.max_poll_interval, until_resumed=True,
        )
        run = await self.client.get_run(run_id)
        if run.status != "running":
            raise ApprovalNotApplied(
                f"Approval {approval.id} is {decided.status}, but run {run_id} is {run.status}"
                f" (blocked at {run.raw.get('blocked_step') or '?'}), not running.", run=run)
        self.decisions.append(decided)
        return decided


async def register_tool_schema_of(client: AsyncHarnessClient, item: ToolApprovalItem) -> int | None:
    """Declare the interrupted call's function tool's argument schema (its `params_json_schema`, which with the
    SDK's default `strict_json_schema` says `additionalProperties: false`) in the tool registry, so the approval
    is validated against it and the console's edit form is typed from it. None when the agent's tool is not
    found or declares no schema; registering the same schema again is a no-op (its version)."""
    name = item.name or ""
    agent = getattr(item, "agent", None)
    tools = [t for t in (getattr(agent, "tools", None) or []) if getattr(t, "name", None) == name]
    schema = getattr(tools[0], "params_json_schema", None) if tools else None
    if not name or not isinstance(schema, dict):
        return None
    text = json.dumps([name, schema], sort_keys=True, default=str)
    key = "tool-schema-" + hashlib.sha256(text.encode()).hexdigest()[:48]
    return (await client.register_tool_schema(name, schema, request_key=key)).version


async def run_with_approvals(
    agent: Agent[Any], input: str | list[TResponseInputItem], *, session: HarnessSession,
    approvals: HarnessApprovals | None = None, **kwargs: Any,
) -> RunResult:
    """`Runner.run(agent, input, session=session, **kwargs)`, going on after each round of tool approvals
    (decided in the console through `approvals`, a HarnessApprovals of the session by default)."""
    approvals = approvals or HarnessApprovals(session, active_agent=agent.name)
    if approvals.active_agent is None:
        approvals.active_agent = agent.name
    run_id = await approvals.run_id()
    try:
        result = await Runner.run(agent, input, session=session, **kwargs)
        while result.interruptions:
            result = await Runner.run(agent, await approvals.decide(result), session=session, **kwargs)
            await approvals.report_ran(result)
    except BaseException as exc:
        await finish_run(approvals.client, run_id, error=exc, lease_owner=approvals.lease_owner)
        raise
    await finish_run(approvals.client, run_id, lease_owner=approvals.lease_owner)
    return result


async def finish_run(client: AsyncHarnessClient, run_id: int, *, error: BaseException | None = None,
                     lease_owner: str | None = None) -> Run:
    """End the harness run when Runner.run has ended (issue 32: runs were left `running` after the script ended):
    `succeeded`, or `failed` with the error's type and message when it raised. A run already ended (a reviewer
    cancelled it) or moved on by someone else is left as it is and returned."""
    run = await client.get_run(run_id)
    if run.status in ("succeeded", "failed", "cancelled"):
        return run
    body = None if error is None else {"type": type(error).__name__, "message": str(error)[:1000]}
    try:
        return await client.transition_run(run_id, "failed" if error is not None else "succeeded",
                                           expected_version=run.version, lease_owner=lease_owner, error=body)
    except ConflictError:
        return await client.get_run(run_id)


def _arguments(text: str | None) -> dict[str, Any]:
    """The tool call's arguments as the approval's JSON object (a call's arguments are a JSON object's text)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"arguments": text}
    return value if isinstance(value, dict) else {"arguments": value}


def _rejection_message(approval: Approval) -> str:
    by = approval.decided_by or "nobody"
    if approval.status == "approved":
        return (f"A reviewer ({by}) approved this tool only with other arguments: "
                f"{json.dumps(approval.approved_arguments, sort_keys=True)}. It was not run.")
    if approval.status == "rejected":
        said = f"A reviewer ({by}) rejected this tool call: {approval.decision_reason or 'no reason given'}"
        if approval.reject_option:  # the policy's option: what the agent should do instead
            said += f" [{approval.reject_option}] {approval.reject_agent_text}".rstrip()
        return said
    return f"This tool call was not approved ({approval.status}); it was not run."


# --- usage: each model call's tokens and cost, reported to the harness run ---------------------------------


class HarnessUsageHooks(RunHooks[Any]):
    """Run hooks that report each model call's usage to a harness run, and stop the agent at its limits.

        hooks = HarnessUsageHooks(client, run.id, prices={"gpt-4.1": ModelPrice(Decimal("2"), Decimal("8"))})
        result = await Runner.run(agent, "Summarise the thread", hooks=hooks)   # RunStopped at the budget

    After every model call (`on_llm_end`) the response's input + output tokens are reported (`report_usage`),
    with the cost by `prices` (per million tokens, keyed by model name; a model it does not name costs 0), the
    model's name (`model=`, else the agent's model's) and the response id as the call's id. The report's
    Idempotency-Key is derived from the run and the response id, so a report sent again for the same response
    (the client's retry after a lost reply, a process that restarts) is counted once; a response with no id is
    counted once per hook call. When the answer is a blocked run (its token or cost budget reached, its
    deadline passed: `blocked_step` `budget` or `deadline`), the hook raises RunStopped: the SDK stops the run
    before it calls any tool the response asked for, or the model again. Later model and tool calls through the
    same hooks are refused too, without a request. `lease_owner` fences the reports to a lease you hold;
    `reports` keeps every answer, in order.
    """

    def __init__(self, client: AsyncHarnessClient, run_id: int, *, prices: Mapping[str, ModelPrice] | None = None,
                 model: str | None = None, lease_owner: str | None = None) -> None:
        self.client, self.run_id = client, run_id
        self.prices, self.model, self.lease_owner = prices, model, lease_owner
        self.reports: list[Run] = []

    async def on_llm_start(self, context: RunContextWrapper[Any], agent: Agent[Any], system_prompt: str | None,
                           input_items: list[TResponseInputItem]) -> None:
        self._refuse_when_stopped()

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse) -> None:
        usage = response.usage
        model = self.model or _model_name(agent)
        call_id = response.response_id or response.request_id or ""
        run = await self.client.report_usage(
            self.run_id, tokens=usage.input_tokens + usage.output_tokens,
            cost=call_cost(self.prices, model, usage.input_tokens, usage.output_tokens), model=model or None,
            call_id=call_id or None, lease_owner=self.lease_owner,
            request_key=usage_request_key(self.run_id, call_id) if call_id else None,
        )
        self.reports.append(run)
        stop_if_blocked(run)

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        self._refuse_when_stopped()

    def _refuse_when_stopped(self) -> None:
        if self.reports:
            stop_if_blocked(self.reports[-1])


def _model_name(agent: Agent[Any]) -> str:
    """The agent's model as a price table names it: its name, or a Model object's `model` (the OpenAI ones')."""
    model = agent.model
    if isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else ""
