"""Every operation of the agent API, once: each function builds its request (a `Call`, `Paged` or `Steps`).

`HarnessClient` and `AsyncHarnessClient` expose each of these as a method of the same name, signature and
docstring (sync, or async), so this module is the whole API surface. Arguments named like the API's fields
are sent as those fields; an argument left None is left out (the server's default applies). Every POST
takes `request_key`, its Idempotency-Key (default: a fresh uuid4 per call, reused on the client's retries;
pass your own to make a retry *across processes* safe, e.g. one derived from your step's identity).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal

from harness_client.errors import (
    ApprovalWaitTimeout,
    HarnessError,
    NotFoundError,
    PushUnavailable,
    QuestionWaitTimeout,
)
from harness_client.models import (
    Approval,
    ApprovalExecutor,
    ApprovalOutcome,
    ApprovalPolicy,
    ApprovalStatus,
    BulkResult,
    Checkpoint,
    ContextSnapshot,
    Decision,
    Effect,
    EffectDelivery,
    EffectStatus,
    ErasureReport,
    Fork,
    Handoff,
    HandoffStatus,
    Item,
    ItemPopped,
    ItemRole,
    ItemsAppended,
    ItemsCleared,
    ItemsLatest,
    ItemsTrimmed,
    MemoryChain,
    MemoryConflict,
    MemoryPolicy,
    MemoryRecord,
    MemoryScope,
    MemoryStatus,
    MemoryWrite,
    NarrowedToken,
    NewItem,
    Page,
    ProvenanceKind,
    Question,
    ResumePolicy,
    Retention,
    RetentionDryRun,
    ReviewerGroup,
    Risk,
    Run,
    RunEvent,
    RunStatus,
    Session,
    SessionRole,
    SessionStatus,
    StandingApproval,
    Task,
    TaskStatus,
    ToolSchema,
    Webhook,
    WebhookEvent,
)
from harness_client.protocol import Call, Paged, Sleep, Steps, _id, fields, list_of, route
from harness_client.threads import (
    ThreadCheckpoint,
    ThreadCheckpointStored,
    ThreadCopied,
    ThreadDeleted,
    ThreadPruned,
    ThreadRun,
    ThreadTtl,
    thread_checkpoints_from_json,
)

# The list endpoints' largest page (harness.http.api_base.NewestFirstPagination.max_page_size).
MAX_PAGE_SIZE = 200


def _position_cursor(position: int, *, reverse: bool = False) -> str:
    """A cursor that starts a list right past `position` in its order (`reverse`: reads backwards from it).

    The API has no `after_seq`, `before` or newest-first parameter on its lists yet, so this builds the cursor
    its CursorPagination would hand out itself (base64 of `r`everse and `p`osition). Each list it is used on
    is ordered by one unique column (items and events by seq, checkpoints by -id), so a position is exactly
    "the rows after it": items after seq N, items before seq N read backwards, checkpoints older than id N.
    """
    text = f"r=1&p={position}" if reverse else f"p={position}"
    return base64.b64encode(text.encode("ascii")).decode("ascii")


def _page_size(value: int | None) -> int | None:
    if value is not None and not 1 <= value <= MAX_PAGE_SIZE:
        raise ValueError(f"page_size is between 1 and {MAX_PAGE_SIZE}")
    return value


# --- sessions and items -------------------------------------------------------------------------------

_SESSIONS_LIST = route("GET", "sessions/", "sessions_list")
_SESSIONS_CREATE = route("POST", "sessions/", "sessions_create")
_SESSIONS_READ = route("GET", "sessions/{id}/", "sessions_read")
_SESSIONS_TRANSITION = route("POST", "sessions/{id}/transition/", "sessions_transition")
_ITEMS_LIST = route("GET", "sessions/{id}/items/", "session_items_list")
_ITEMS_APPEND = route("POST", "sessions/{id}/items/", "session_items_append")


def create_session(
    *, role: SessionRole | None = None, memory_policy: MemoryPolicy | None = None,
    metadata: Mapping[str, Any] | None = None, ref: str | None = None, end_user: str | None = None,
    request_key: str | None = None,
) -> Call[Session]:
    """Start a session in the token's project (`ref` is your own unique reference, optional; `end_user` tags it
    with the end user it serves, for good: a client made by `for_user` tags it with its own)."""
    body = fields(role=role, memory_policy=memory_policy, metadata=metadata, ref=ref, end_user=end_user)
    return _SESSIONS_CREATE.call(parse=Session.from_json, json=body, request_key=request_key)


def get_session(session_id: int) -> Call[Session]:
    """Read one session (its `last_seq` is the seq of its newest item, 0 when it has none)."""
    return _SESSIONS_READ.call(parse=Session.from_json, id=session_id)


def list_sessions(
    *, status: SessionStatus | None = None, role: SessionRole | None = None,
    updated_since: dt.datetime | None = None, end_user: str | None = None, page_size: int | None = None,
) -> Paged[Session]:
    """Every session of the project (of its end user, for a client made by `for_user`), newest first, following
    the pages."""
    params = {"status": status, "role": role, "updated_since": updated_since, "end_user": end_user}
    return _SESSIONS_LIST.paged(Session.from_json, params=params, page_size=_page_size(page_size))


def transition_session(
    session_id: int, to: SessionStatus, *, expected_version: int, request_key: str | None = None,
) -> Call[Session]:
    """Move a session to another status: a compare-and-set on `expected_version`, the version you read (409
    `version_conflict` when it moved on)."""
    body = fields(to=to, expected_version=expected_version)
    return _SESSIONS_TRANSITION.call(parse=Session.from_json, id=session_id, json=body, request_key=request_key)


def append_items(
    session_id: int, items: Sequence[NewItem | Mapping[str, Any]], *, expected_last_seq: int | None = None,
    request_key: str | None = None,
) -> Call[ItemsAppended]:
    """Append items to a session; they get the next gap-free seqs, in order.

    With `expected_last_seq`, the append happens only if the session's newest item is still that seq (0: no
    items yet); otherwise ConflictError `seq_conflict`, whose `body["last_seq"]` is the actual last seq. This
    is how two writers to one session avoid interleaving.
    """
    rows = [dict(item) for item in items]
    body = fields(items=rows, expected_last_seq=expected_last_seq)
    return _ITEMS_APPEND.call(parse=ItemsAppended.from_json, id=session_id, json=body, request_key=request_key)


def list_items(session_id: int, *, after_seq: int | None = None, page_size: int | None = None) -> Paged[Item]:
    """A session's items in seq order, from the first (or from the one after `after_seq`), following the pages."""
    params = {"cursor": _position_cursor(after_seq) if after_seq is not None else None}
    return _ITEMS_LIST.paged(Item.from_json, id=session_id, params=params, page_size=_page_size(page_size))


def recent_items(session_id: int, limit: int = 50) -> Steps[list[Item]]:
    """The session's newest `limit` items, oldest first (what an agent hands its model).

    One request (`latest_items`) for up to 500 items; beyond that, one more request per 200 older items.
    """
    if limit < 1:
        raise ValueError("limit is at least 1")
    latest: ItemsLatest = yield latest_items(session_id, min(limit, MAX_LATEST_ITEMS))
    newest = list(latest.items)
    if len(newest) < MAX_LATEST_ITEMS or limit <= MAX_LATEST_ITEMS:
        return newest
    # Older than the oldest one read: the list endpoint, read backwards from its seq.
    params = {"cursor": _position_cursor(newest[0].seq, reverse=True)}
    size = min(limit - len(newest), MAX_PAGE_SIZE)
    call: Call[Page[Item]] = _ITEMS_LIST.paged(Item.from_json, id=session_id, params=params, page_size=size).first
    while True:
        page: Page[Item] = yield call
        newest[:0] = page.results
        if len(newest) >= limit or page.previous is None:
            return newest[-limit:]
        call = Paged(call).follow(page.previous)


# --- sessions and items: the newest-N read, removing items, finding a session by its ref -------------------
# (what the Agents SDK session, harness_client.agents.HarnessSession, is built on)

MAX_LATEST_ITEMS = 500  # sessions_app.selectors.MAX_LATEST_ITEMS
_ITEMS_LATEST = route("GET", "sessions/{id}/items/latest/", "session_items_latest")
_ITEMS_POP = route("POST", "sessions/{id}/items/pop/", "session_items_pop")
_ITEMS_CLEAR = route("POST", "sessions/{id}/items/clear/", "session_items_clear")
_ITEMS_TRIM = route("POST", "sessions/{id}/items/trim/", "session_items_trim")
_ITEMS_COMPACT = route("POST", "sessions/{id}/items/compact/", "session_items_compact")


def latest_items(session_id: int, limit: int = 50) -> Call[ItemsLatest]:
    """The session's newest `limit` items (1..500) in seq order, oldest first, with its `last_seq`: one request,
    whose answer the server writes in one statement."""
    if not 1 <= limit <= MAX_LATEST_ITEMS:
        raise ValueError(f"limit is between 1 and {MAX_LATEST_ITEMS}")
    return _ITEMS_LATEST.call(parse=ItemsLatest.from_json, id=session_id, params={"limit": limit})


def pop_item(session_id: int, *, expected_last_seq: int | None = None, request_key: str | None = None
             ) -> Call[ItemPopped]:
    """Remove the session's newest item and return it (`item` None when the session has none).

    The removed seq is never reused (`last_seq` stays; the next append continues after it). With
    `expected_last_seq`, only while the session's `last_seq` is still that (else ConflictError `seq_conflict`);
    a terminated session refuses (ConflictError `session_terminated`). Retries replay the first answer: one pop.
    """
    body = fields(expected_last_seq=expected_last_seq)
    return _ITEMS_POP.call(parse=ItemPopped.from_json, id=session_id, json=body, request_key=request_key)


def clear_items(session_id: int, *, expected_last_seq: int | None = None, request_key: str | None = None
                ) -> Call[ItemsCleared]:
    """Remove every item of the session; `removed` says how many. The session, its runs and checkpoints stay,
    and so does `last_seq` (seqs are never reused). A terminated session refuses (`session_terminated`)."""
    body = fields(expected_last_seq=expected_last_seq)
    return _ITEMS_CLEAR.call(parse=ItemsCleared.from_json, id=session_id, json=body, request_key=request_key)


def trim_items(session_id: int, *, keep_last: int, expected_last_seq: int | None = None,
               request_key: str | None = None) -> Call[ItemsTrimmed]:
    """Keep the newest `keep_last` items and remove the rest, as one audited event (the removed range and the hash
    of what went). 409 `item_shown_by_pending_approval` when a pending approval shows an item that would go."""
    body = fields(keep_last=keep_last, expected_last_seq=expected_last_seq)
    return _ITEMS_TRIM.call(parse=ItemsTrimmed.from_json, id=session_id, json=body, request_key=request_key)


def compact_items(session_id: int, *, first_seq: int, last_seq: int, summary: Any, role: ItemRole | None = None,
                  expected_last_seq: int | None = None, request_key: str | None = None) -> Call[ItemsTrimmed]:
    """Replace the items with seq in [first_seq, last_seq] by one summary item (`summary` is its content; the role
    defaults to system), which takes the seq of the newest item it replaced; one audited event."""
    body = fields(first_seq=first_seq, last_seq=last_seq, summary=fields(role=role, content=summary),
                  expected_last_seq=expected_last_seq)
    return _ITEMS_COMPACT.call(parse=ItemsTrimmed.from_json, id=session_id, json=body, request_key=request_key)


def session_by_ref(ref: str) -> Call[Session | None]:
    """The project's session whose `ref` is this (refs are unique in a project), or None."""
    if not ref:
        raise ValueError("ref is not empty")

    def first(body: Any) -> Session | None:
        rows = body["results"]
        return Session.from_json(rows[0]) if rows else None

    return _SESSIONS_LIST.call(parse=first, params={"ref": ref, "limit": 1})


# --- tokens narrowed to one end user ---------------------------------------------------------------------

_TOKENS_NARROW = route("POST", "tokens/narrow/", "tokens_narrow")


def narrow_token(
    end_user: str, *, session: int | None = None, agent: str | None = None, expires_in: int | None = None,
) -> Call[NarrowedToken]:
    """Mint a short-lived token narrowed to one end user (and optionally one of its sessions and an agent identity
    under this token's). `HarnessClient.for_user` does this for you, and mints again before it expires. The server
    records no reply under the Idempotency-Key (the answer holds a secret it keeps nowhere): a retry mints another
    token, and the first expires unused."""
    body = fields(end_user=end_user, session=session, agent=agent, expires_in=expires_in)
    return _TOKENS_NARROW.call(parse=NarrowedToken.from_json, json=body)


# --- runs and their events ------------------------------------------------------------------------------

_RUNS_LIST = route("GET", "runs/", "runs_list")
_RUNS_CREATE = route("POST", "runs/", "runs_create")
_RUNS_READ = route("GET", "runs/{id}/", "runs_read")
_RUNS_CLAIM = route("POST", "runs/{id}/claim/", "runs_claim")
_RUNS_HEARTBEAT = route("POST", "runs/{id}/heartbeat/", "runs_heartbeat")
_RUNS_TRANSITION = route("POST", "runs/{id}/transition/", "runs_transition")
_RUNS_USAGE = route("POST", "runs/{id}/usage/", "runs_usage_report")
_EVENTS_LIST = route("GET", "runs/{id}/events/", "run_events_list")
_EVENTS_APPEND = route("POST", "runs/{id}/events/", "run_events_append")


def create_run(
    *, session: int, task: int | None = None, ref: str | None = None, task_mode: str | None = None,
    active_agent: str | None = None, cursor: Mapping[str, Any] | None = None, deadline: dt.datetime | None = None,
    token_budget: int | None = None, cost_budget: Decimal | None = None, request_key: str | None = None,
) -> Call[Run]:
    """Create a run (status `created`) in a session, optionally working on a task."""
    body = fields(session=session, task=task, ref=ref, task_mode=task_mode, active_agent=active_agent, cursor=cursor,
                  deadline=deadline, token_budget=token_budget, cost_budget=cost_budget)
    return _RUNS_CREATE.call(parse=Run.from_json, json=body, request_key=request_key)


def get_run(run_id: int) -> Call[Run]:
    """Read one run."""
    return _RUNS_READ.call(parse=Run.from_json, id=run_id)


def list_runs(
    *, status: RunStatus | None = None, session: int | None = None, task: int | None = None,
    updated_since: dt.datetime | None = None, page_size: int | None = None,
) -> Paged[Run]:
    """The project's runs, newest first, following the pages."""
    params = {"status": status, "session": session, "task": task, "updated_since": updated_since}
    return _RUNS_LIST.paged(Run.from_json, params=params, page_size=_page_size(page_size))


def claim_run(run_id: int, *, owner: str, lease_seconds: int | None = None, request_key: str | None = None
              ) -> Call[Run]:
    """Take the run's lease for `owner` if it is free, expired, or already `owner`'s; 409 `lease_held` if not."""
    body = fields(owner=owner, lease_seconds=lease_seconds)
    return _RUNS_CLAIM.call(parse=Run.from_json, id=run_id, json=body, request_key=request_key)


def heartbeat_run(run_id: int, *, owner: str, lease_seconds: int | None = None, request_key: str | None = None
                  ) -> Call[Run]:
    """Extend a lease `owner` still holds; 409 `lease_lost` once it expired or was taken.

    There is no release endpoint: a terminal transition frees the lease, and so does letting it expire
    (a heartbeat with `lease_seconds=1` shortens it to a second).
    """
    body = fields(owner=owner, lease_seconds=lease_seconds)
    return _RUNS_HEARTBEAT.call(parse=Run.from_json, id=run_id, json=body, request_key=request_key)


def transition_run(
    run_id: int, to: RunStatus, *, expected_version: int, lease_owner: str | None = None,
    error: Mapping[str, Any] | None = None, blocked_step: str | None = None, request_key: str | None = None,
) -> Call[Run]:
    """Move a run to another status: a compare-and-set on `expected_version` (409 with the current status and
    version when it moved on). `lease_owner`: the owner you claimed the run with (sent always; None says you
    hold no lease). A run that holds a lease (claimed and not released, even expired) refuses a write naming no
    owner or a stale one: ConflictError `lease_lost`, nothing written."""
    body = fields(to=to, expected_version=expected_version, error=error, blocked_step=blocked_step)
    body["lease_owner"] = lease_owner
    return _RUNS_TRANSITION.call(parse=Run.from_json, id=run_id, json=body, request_key=request_key)


def report_usage(
    run_id: int, *, tokens: int, cost: Decimal | None = None, model: str | None = None, call_id: str | None = None,
    lease_owner: str | None = None, request_key: str | None = None,
) -> Call[Run]:
    """Report one model call's `tokens` and `cost` (after the call): the run's `tokens_used` and `cost_used`
    advance atomically. The answer is the run: `status == "blocked"` (`blocked_step` `budget` or `deadline`)
    means it reached its budget or deadline, so make no further model or tool call. `lease_owner` as for
    `transition_run`."""
    body = fields(tokens=tokens, cost=cost, model=model, call_id=call_id)
    body["lease_owner"] = lease_owner
    return _RUNS_USAGE.call(parse=Run.from_json, id=run_id, json=body, request_key=request_key)


def append_event(run_id: int, kind: str, data: Mapping[str, Any] | None = None, *, lease_owner: str | None = None,
                 request_key: str | None = None) -> Call[RunEvent]:
    """Append an event (`kind`, free-form `data`) to the run's log; its `seq` (the next, gap-free) orders it, so
    it takes no version. `lease_owner` as for `transition_run`."""
    body = fields(kind=kind, data=data)
    body["lease_owner"] = lease_owner
    return _EVENTS_APPEND.call(parse=RunEvent.from_json, id=run_id, json=body, request_key=request_key)


def list_events(
    run_id: int, *, kind: str | None = None, after_seq: int | None = None, page_size: int | None = None,
) -> Paged[RunEvent]:
    """The run's events in seq order (from the one after `after_seq`), following the pages."""
    params = {"kind": kind, "cursor": _position_cursor(after_seq) if after_seq is not None else None}
    return _EVENTS_LIST.paged(RunEvent.from_json, id=run_id, params=params, page_size=_page_size(page_size))


# --- tasks ------------------------------------------------------------------------------------------------

_TASKS_LIST = route("GET", "tasks/", "tasks_list")
_TASKS_CREATE = route("POST", "tasks/", "tasks_create")
_TASKS_READ = route("GET", "tasks/{id}/", "tasks_read")
_TASKS_SAVE = route("PATCH", "tasks/{id}/", "tasks_save")
_TASKS_TRANSITION = route("POST", "tasks/{id}/transition/", "tasks_transition")


def create_task(
    *, objective: str, ref: str | None = None, constraints: Sequence[Any] | None = None,
    plan: Sequence[str] | None = None, plan_version: int | None = None, completed_nodes: Sequence[Any] | None = None,
    pending_nodes: Sequence[Any] | None = None, artifact_refs: Mapping[str, Any] | None = None,
    schema_version: int | None = None, request_key: str | None = None,
) -> Call[Task]:
    """Create a task: multi-day work with an objective, a plan and its progress."""
    body = fields(objective=objective, ref=ref, constraints=constraints, plan=plan, plan_version=plan_version,
                  completed_nodes=completed_nodes, pending_nodes=pending_nodes, artifact_refs=artifact_refs,
                  schema_version=schema_version)
    return _TASKS_CREATE.call(parse=Task.from_json, json=body, request_key=request_key)


def get_task(task_id: int) -> Call[Task]:
    """Load a task (its `version` is what `save_task` compares against)."""
    return _TASKS_READ.call(parse=Task.from_json, id=task_id)


def save_task(
    task_id: int, *, expected_version: int, objective: str | None = None, constraints: Sequence[Any] | None = None,
    plan: Sequence[str] | None = None, plan_version: int | None = None, completed_nodes: Sequence[Any] | None = None,
    pending_nodes: Sequence[Any] | None = None, artifact_refs: Mapping[str, Any] | None = None,
    schema_version: int | None = None,
) -> Call[Task]:
    """Save the fields given: a compare-and-set on `expected_version` (409 with `current_version` if the task
    moved on; load it again and redo the change).

    A PATCH, which the server's Idempotency-Key replay does not cover: the client retries it only when the
    request surely never left (a refused connection), never after a lost reply.
    """
    body = fields(expected_version=expected_version, objective=objective, constraints=constraints, plan=plan,
                  plan_version=plan_version, completed_nodes=completed_nodes, pending_nodes=pending_nodes,
                  artifact_refs=artifact_refs, schema_version=schema_version)
    return _TASKS_SAVE.call(parse=Task.from_json, id=task_id, json=body)


def transition_task(
    task_id: int, to: TaskStatus, *, expected_version: int, request_key: str | None = None,
) -> Call[Task]:
    """Move a task to another status: a compare-and-set on `expected_version`, the version you read (409
    `version_conflict` when it moved on)."""
    body = fields(to=to, expected_version=expected_version)
    return _TASKS_TRANSITION.call(parse=Task.from_json, id=task_id, json=body, request_key=request_key)


def list_tasks(*, status: TaskStatus | None = None, page_size: int | None = None) -> Paged[Task]:
    """The project's tasks, newest first, following the pages."""
    return _TASKS_LIST.paged(Task.from_json, params={"status": status}, page_size=_page_size(page_size))


# --- checkpoints ------------------------------------------------------------------------------------------

_CHECKPOINTS_LIST = route("GET", "checkpoints/", "checkpoints_list")
_CHECKPOINTS_CREATE = route("POST", "checkpoints/", "checkpoints_create")
_CHECKPOINTS_READ = route("GET", "checkpoints/{id}/", "checkpoints_read")
_CHECKPOINTS_LINEAGE = route("GET", "checkpoints/{id}/lineage/", "checkpoints_lineage")


def create_checkpoint(
    *, run: int | None = None, task: int | None = None, parent: int | None = None, label: str | None = None,
    cursor: Mapping[str, Any] | None = None, state: Mapping[str, Any] | None = None,
    artifact_fingerprints: Mapping[str, Any] | None = None, authority_ref: str | None = None,
    pending_gate: Any = None, approval: int | None = None, resume_policy: ResumePolicy | None = None,
    schema_version: int | None = None, lease_owner: str | None = None, request_key: str | None = None,
) -> Call[Checkpoint]:
    """Write an immutable checkpoint of a run and/or task; it becomes their latest.

    `parent` links it into the lineage (a parent that already has a child makes a fork); `lease_owner` as for
    `transition_run` (a stale worker cannot fork the chain, whether it names its old owner or none).
    """
    body = fields(run=run, task=task, parent=parent, label=label, cursor=cursor, state=state,
                  artifact_fingerprints=artifact_fingerprints, authority_ref=authority_ref, pending_gate=pending_gate,
                  approval=approval, resume_policy=resume_policy, schema_version=schema_version)
    body["lease_owner"] = lease_owner
    return _CHECKPOINTS_CREATE.call(parse=Checkpoint.from_json, json=body, request_key=request_key)


def get_checkpoint(checkpoint_id: int) -> Call[Checkpoint]:
    """Read one checkpoint."""
    return _CHECKPOINTS_READ.call(parse=Checkpoint.from_json, id=checkpoint_id)


def list_checkpoints(
    *, run: int | None = None, task: int | None = None, before: int | None = None, page_size: int | None = None,
) -> Paged[Checkpoint]:
    """Checkpoints (of a run, of a task), newest first (older than checkpoint id `before`), following the pages."""
    params = {"run": run, "task": task, "cursor": _position_cursor(before) if before is not None else None}
    return _CHECKPOINTS_LIST.paged(Checkpoint.from_json, params=params, page_size=_page_size(page_size))


def latest_checkpoint(*, run: int | None = None, task: int | None = None) -> Call[Checkpoint | None]:
    """The newest checkpoint of a run or task (None if it has none): one request."""
    if run is None and task is None:
        raise ValueError("name a run or a task")

    def first(body: Any) -> Checkpoint | None:
        rows = body["results"]
        return Checkpoint.from_json(rows[0]) if rows else None

    return _CHECKPOINTS_LIST.call(parse=first, params={"run": run, "task": task, "limit": 1})


def checkpoint_lineage(checkpoint_id: int) -> Call[list[Checkpoint]]:
    """The checkpoint and its ancestors, newest first (the checkpoint itself, its parent, ..., the root)."""
    return _CHECKPOINTS_LINEAGE.call(parse=list_of(Checkpoint.from_json), id=checkpoint_id)


# --- approvals --------------------------------------------------------------------------------------------

_APPROVALS_REQUEST = route("POST", "runs/{id}/approvals/", "approvals_request")
_APPROVALS_LIST = route("GET", "approvals/", "approvals_list")
_APPROVALS_READ = route("GET", "approvals/{id}/", "approvals_read")
_APPROVALS_DECIDE = route("POST", "approvals/{id}/decision/", "approvals_decide")
_APPROVALS_OUTCOME = route("POST", "approvals/{id}/outcome/", "approvals_report_outcome")


def request_approval(
    run_id: int, *, tool: str, idempotency_key: str, arguments: Mapping[str, Any] | None = None,
    risk: Risk | None = None, reason: str | None = None, expected_version: int | None = None,
    expires_at: dt.datetime | None = None, executor: ApprovalExecutor | None = None, lease_owner: str | None = None,
    request_key: str | None = None,
) -> Call[Approval]:
    """Ask a human to approve a tool call; the run moves to `waiting_approval` and its lease is released, in the
    same transaction.

    `idempotency_key` is the *action's* identity (the effect it would have), not the HTTP request's; a run
    has at most one pending approval (409 `approval_pending`). `executor="agent"`: you run the tool yourself
    once it is approved; the worker re-validates the decision, binds it to the run's `bound_result`
    (`decision`, `arguments`, `fingerprint`, `idempotency_key`, or the `reason` of a rejection or expiry) and
    leaves the run `running` with no lease, for you to claim. The default, "worker", has the resume worker
    call the tool through its adapter. Wait with `wait_for_approval(..., until_resumed=True)`.

    `lease_owner` as for `transition_run`; `expected_version`, the run's version you read, is optional here
    (the lease orders a lease holder's writes, and a checkpoint moves the run's version without answering it).
    """
    body = fields(tool=tool, idempotency_key=idempotency_key, arguments=arguments, risk=risk, reason=reason,
                  expected_version=expected_version, expires_at=expires_at, executor=executor)
    body["lease_owner"] = lease_owner
    return _APPROVALS_REQUEST.call(parse=Approval.from_json, id=run_id, json=body, request_key=request_key)


def get_approval(approval_id: int) -> Call[Approval]:
    """Read one approval request."""
    return _APPROVALS_READ.call(parse=Approval.from_json, id=approval_id)


def list_approvals(*, status: ApprovalStatus | None = None, run: int | None = None, page_size: int | None = None
                   ) -> Paged[Approval]:
    """Approval requests, newest first, following the pages."""
    return _APPROVALS_LIST.paged(Approval.from_json, params={"status": status, "run": run},
                                 page_size=_page_size(page_size))


def decide_approval(
    approval_id: int, decision: Decision, *, reason: str | None = None,
    edited_arguments: Mapping[str, Any] | None = None, expected_version: int, reject_option: str | None = None,
    request_key: str | None = None,
) -> Call[Approval]:
    """Approve or reject (a reviewer's personal token; agent tokens get 403). A rejection needs a `reason`, and
    may name one of the request's policy's `reject_option`s (the agent reads its text: `reject_agent_text`);
    `edited_arguments` approves changed arguments (a new fingerprint). `expected_version` is the approval's
    version you read (`get_approval(...).version`): one that changed since is refused `version_conflict`."""
    body = fields(decision=decision, reason=reason, edited_arguments=edited_arguments,
                  expected_version=expected_version, reject_option=reject_option)
    return _APPROVALS_DECIDE.call(parse=Approval.from_json, id=approval_id, json=body, request_key=request_key)


def report_approval_outcome(
    approval_id: int, outcome: ApprovalOutcome, *, reason: str | None = None, lease_owner: str | None = None,
    request_key: str | None = None,
) -> Call[Approval]:
    """Say whether you ran an approved action you execute yourself (`executor="agent"`): `"ran"`, or `"not_run"`
    with the `reason`. Until you do, the console shows it "approved, waiting for the agent". Once only: the same
    report again answers the same approval, another is 409 `outcome_reported`; a worker-executed or unapproved
    approval is 409 `not_agent_executed` / `not_approved`. Fenced on the run's lease (`lease_owner` as for
    `transition_run`)."""
    body = fields(outcome=outcome, reason=reason)
    body["lease_owner"] = lease_owner
    return _APPROVALS_OUTCOME.call(parse=Approval.from_json, id=approval_id, json=body, request_key=request_key)
_TOOL_SCHEMAS_LIST = route("GET", "tools/schemas/", "tool_schemas_list")
_TOOL_SCHEMAS_REGISTER = route("POST", "tools/schemas/", "tool_schemas_register")
_TOOL_SCHEMAS_READ = route("GET", "tools/schemas/{id}/", "tool_schemas_read")


def register_tool_schema(tool: str, schema: Mapping[str, Any], *, request_key: str | None = None
                         ) -> Call[ToolSchema]:
    """Declare the JSON Schema of `tool`'s arguments in the token's project: the project's approval requests for
    the tool are then validated against it (400 `arguments_invalid` naming the `field`), and so are a reviewer's
    edits and the resume. The same schema as the tool's current one answers that version (nothing written);
    another schema is the next version. A schema that is not a JSON Schema of an object: 400 `schema_invalid`."""
    return _TOOL_SCHEMAS_REGISTER.call(parse=ToolSchema.from_json, json={"tool": tool, "schema": dict(schema)},
                                       request_key=request_key)


def list_tool_schemas(*, tool: str | None = None, page_size: int | None = None) -> Paged[ToolSchema]:
    """Every version of the project's tools' schemas (`tool`: of one tool), newest first, following the pages."""
    return _TOOL_SCHEMAS_LIST.paged(ToolSchema.from_json, params={"tool": tool}, page_size=_page_size(page_size))


def get_tool_schema(schema_id: int) -> Call[ToolSchema]:
    """Read one version of a tool's schema (an approval's `tool_schema` names the one it was validated against)."""
    return _TOOL_SCHEMAS_READ.call(parse=ToolSchema.from_json, id=schema_id)


PUSH_WAIT = 25.0  # s: each long poll's own timeout (the server's default; at most 60)
PUSH_MARGIN = 10.0  # s: how much longer than its timeout a long poll's answer may take to arrive
NO_PUSH_ROUTE = (404, 405, 501, 502, 503, 504)


def _approval_waited(body: Any) -> tuple[bool, Approval]:
    return bool(body["done"]), Approval.from_json(body["approval"])


def wait_for_approval(
    approval_id: int, *, timeout: float = 600.0, poll_interval: float = 1.0, max_poll_interval: float = 10.0,
    until_resumed: bool = False, push: bool = True,
) -> Steps[Approval]:
    """Wait until the approval is decided (approved, rejected, expired or cancelled) and return it.

    `until_resumed`: then also until the worker has resumed its run (the run left `waiting_approval` for this
    approval: `running` with the decision in `bound_result`, or `blocked` naming the check that failed), so
    that `claim_run` can take it right away. Raises `ApprovalWaitTimeout` (a `TimeoutError`, carrying the last
    seen approval) after `timeout` seconds in all.

    With `push` (the default) it long-polls the server's push (`GET approvals/{id}/wait/` on the client's
    `push_url`): the answer comes when the decision commits, not at the next poll, and a waiting agent costs one
    open request, not one request per interval. A server without the push (no such route there, or nothing
    answering at `push_url`) makes it poll instead: every `poll_interval` seconds, growing by half each time up
    to `max_poll_interval`.
    """
    if timeout < 0 or poll_interval <= 0 or max_poll_interval < poll_interval:
        raise ValueError("timeout >= 0 and 0 < poll_interval <= max_poll_interval")
    deadline = time.monotonic() + timeout
    interval = poll_interval
    approval: Approval = yield get_approval(approval_id)
    while True:
        if approval.decided:
            if not until_resumed:
                return approval
            run: Run = yield get_run(approval.run)
            if run.status != "waiting_approval" or run.pending_approval != approval_id:
                return approval
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            waited = f"still {approval.status}" if not approval.decided else f"{approval.status}, its run not resumed"
            raise ApprovalWaitTimeout(f"Approval {approval_id} is {waited} after {timeout:g} s.", approval=approval)
        if push:
            wait = min(PUSH_WAIT, remaining)
            try:
                done, approval = yield Call(
                    "GET", f"approvals/{_id(approval_id)}/wait/", _approval_waited, push=True,
                    params={"until": "resumed" if until_resumed else "decided", "timeout": f"{wait:.3f}"},
                    timeout=wait + PUSH_MARGIN)
            except HarnessError as exc:
                # No push on this server: nothing at push_url, no such route (a 404 once the approval was found,
                # a 405), or a proxy whose push upstream is down. Poll, as a client without push does.
                if not isinstance(exc, PushUnavailable) and exc.status not in NO_PUSH_ROUTE:
                    raise
                push = False
                continue
            if done:
                return approval
            continue
        yield Sleep(min(interval, remaining))
        interval = min(interval * 1.5, max_poll_interval)
        if not approval.decided:
            approval = yield get_approval(approval_id)


# --- external effects -----------------------------------------------------------------------------------

_EFFECTS_LIST = route("GET", "effects/", "effects_list")
_EFFECTS_INTEND = route("POST", "effects/", "effects_intend")
_EFFECTS_READ = route("GET", "effects/{id}/", "effects_read")
_EFFECTS_DELIVER = route("POST", "effects/deliver/", "effects_deliver")


def intend_effect(
    *, idempotency_key: str, tool: str, arguments: Any = None, run: int | None = None, approval: int | None = None,
    request_key: str | None = None,
) -> Call[Effect]:
    """Record the intent to call `tool` under the action's `idempotency_key`, before calling it.

    The same key and action again answers the first record (check its `status`: an effect already
    `consumed` must not be executed again).
    """
    body = fields(idempotency_key=idempotency_key, tool=tool, arguments=arguments, run=run, approval=approval)
    return _EFFECTS_INTEND.call(parse=Effect.from_json, json=body, request_key=request_key)


def deliver_effect(
    *, idempotency_key: str, result: Any, result_hash: str | None = None, request_key: str | None = None,
) -> Call[EffectDelivery]:
    """Deliver the tool's result once: `consumed`, or `already_consumed` with the original receipt for the same
    result again. A *different* result under the key is a hard stop: ConflictError `effect_conflict` (its
    body has `result_hash`, `conflicting_hash`, `run`, `run_status`) and the run is blocked."""
    body = {"idempotency_key": idempotency_key, "result": result, **fields(result_hash=result_hash)}
    return _EFFECTS_DELIVER.call(parse=EffectDelivery.from_json, json=body, request_key=request_key)


def get_effect(effect_id: int) -> Call[Effect]:
    """Read one external effect."""
    return _EFFECTS_READ.call(parse=Effect.from_json, id=effect_id)


def list_effects(*, status: EffectStatus | None = None, run: int | None = None, page_size: int | None = None
                 ) -> Paged[Effect]:
    """External effects, newest first, following the pages."""
    return _EFFECTS_LIST.paged(Effect.from_json, params={"status": status, "run": run},
                               page_size=_page_size(page_size))


# --- handoffs ---------------------------------------------------------------------------------------------

_HANDOFFS_ISSUE = route("POST", "runs/{id}/handoffs/", "handoffs_issue")
_HANDOFFS_LIST = route("GET", "handoffs/", "handoffs_list")
_HANDOFFS_READ = route("GET", "handoffs/{id}/", "handoffs_read")
_HANDOFFS_ACCEPT = route("POST", "handoffs/{id}/accept/", "handoffs_accept")
_HANDOFFS_RETURN = route("POST", "handoffs/{id}/return/", "handoffs_return")
_HANDOFFS_CANCEL = route("POST", "handoffs/{id}/cancel/", "handoffs_cancel")


def issue_handoff(
    run_id: int, *, receiver_session: int, objective: str, output_schema: Mapping[str, Any], deadline: dt.datetime,
    inputs: Sequence[Mapping[str, Any]] | None = None, allowed_capabilities: Sequence[str] | None = None,
    cursor: Mapping[str, Any] | None = None, expected_version: int | None = None, lease_owner: str | None = None,
    request_key: str | None = None,
) -> Call[Handoff]:
    """Hand a bounded, blind job to another session. Each input is `{"name", "fingerprint"}` plus its `value`
    or the origin task's `artifact`; the packet is frozen and fingerprinted, and the run waits
    (`waiting_external`) until the result returns and the worker resumes it. `lease_owner` and `expected_version`
    as for `request_approval`."""
    body = fields(receiver_session=receiver_session, objective=objective, output_schema=dict(output_schema),
                  deadline=deadline.isoformat(), inputs=None if inputs is None else [dict(i) for i in inputs],
                  allowed_capabilities=None if allowed_capabilities is None else list(allowed_capabilities),
                  cursor=None if cursor is None else dict(cursor), expected_version=expected_version)
    body["lease_owner"] = lease_owner
    return _HANDOFFS_ISSUE.call(parse=Handoff.from_json, json=body, request_key=request_key, id=run_id)


def list_handoffs(
    *, status: HandoffStatus | None = None, origin_run: int | None = None, receiver_session: int | None = None,
    page_size: int | None = None,
) -> Paged[Handoff]:
    """Handoffs, newest first, following the pages."""
    return _HANDOFFS_LIST.paged(Handoff.from_json, params={"status": status, "origin_run": origin_run,
                                                           "receiver_session": receiver_session},
                                page_size=_page_size(page_size))


def get_handoff(handoff_id: int) -> Call[Handoff]:
    """Read one handoff: the packet is all a receiver sees of its origin."""
    return _HANDOFFS_READ.call(parse=Handoff.from_json, id=handoff_id)


def accept_handoff(handoff_id: int, *, expected_version: int, run: int | None = None,
                   request_key: str | None = None) -> Call[Handoff]:
    """The receiver takes the job with its own run (a run of the receiver session; without one, a new run of
    that session is made for it: what a receiver holding only the handoff's `receiver_token` does), at the
    handoff's version it read (`get_handoff(...).version`)."""
    return _HANDOFFS_ACCEPT.call(parse=Handoff.from_json, json=fields(run=run, expected_version=expected_version),
                                 request_key=request_key, id=handoff_id)


def return_handoff(handoff_id: int, *, packet_fingerprint: str, result: Any, expected_version: int,
                   result_hash: str | None = None, request_key: str | None = None) -> Call[Handoff]:
    """Return the one result, bound to the fingerprint of the packet it answers, at the handoff's version read
    (the accepted handoff's: `accept_handoff(...).version`)."""
    body = fields(packet_fingerprint=packet_fingerprint, result_hash=result_hash, expected_version=expected_version)
    body["result"] = result
    return _HANDOFFS_RETURN.call(parse=Handoff.from_json, json=body, request_key=request_key, id=handoff_id)


def cancel_handoff(handoff_id: int, *, reason: str, expected_version: int,
                   request_key: str | None = None) -> Call[Handoff]:
    """Cancel an open handoff; the origin run goes back to running with the cancellation bound."""
    return _HANDOFFS_CANCEL.call(parse=Handoff.from_json, json=fields(reason=reason, expected_version=expected_version),
                                 request_key=request_key, id=handoff_id)


# --- forks and webhooks -----------------------------------------------------------------------------------

_CHECKPOINTS_FORK = route("POST", "checkpoints/{id}/fork/", "checkpoints_fork")
_WEBHOOKS_LIST = route("GET", "webhooks/", "webhooks_list")
_WEBHOOKS_REGISTER = route("POST", "webhooks/", "webhooks_register")
_WEBHOOKS_DEACTIVATE = route("POST", "webhooks/{id}/deactivate/", "webhooks_deactivate")


def fork_checkpoint(
    checkpoint_id: int, *, reason: str, state: Mapping[str, Any] | None = None, session: int | None = None,
    new_session: bool | None = None, ref: str | None = None, request_key: str | None = None,
) -> Call[Fork]:
    """Fork a new run from a checkpoint, optionally with edited `state`, in the source run's session, `session`,
    or a new one (`new_session=True`); who, why and the diff are recorded. Across the fork, an action under a
    key its origin consumed gets the stored result bound; changed arguments need a new key and approval."""
    body = fields(reason=reason, state=None if state is None else dict(state), session=session,
                  new_session=new_session, ref=ref)
    return _CHECKPOINTS_FORK.call(parse=Fork.from_json, id=checkpoint_id, json=body, request_key=request_key)


def register_webhook(url: str, events: Sequence[WebhookEvent], *, request_key: str | None = None) -> Call[Webhook]:
    """Register a webhook; keep the answer's `secret` (shown this once) to verify each delivery's signature."""
    return _WEBHOOKS_REGISTER.call(parse=Webhook.from_json, json={"url": url, "events": list(events)},
                                   request_key=request_key)


def list_webhooks(*, page_size: int | None = None) -> Paged[Webhook]:
    """The project's webhooks (without their secrets), following the pages."""
    return _WEBHOOKS_LIST.paged(Webhook.from_json, page_size=_page_size(page_size))


def deactivate_webhook(webhook_id: int, *, request_key: str | None = None) -> Call[Webhook]:
    """No more deliveries to it (audited)."""
    return _WEBHOOKS_DEACTIVATE.call(parse=Webhook.from_json, id=webhook_id, request_key=request_key)


# --- retention --------------------------------------------------------------------------------------------

_RETENTION_READ = route("GET", "projects/{id}/retention/", "retention_read")
_RETENTION_SET = route("PUT", "projects/{id}/retention/", "retention_set")
_RETENTION_DRY_RUN = route("GET", "projects/{id}/retention/dry-run/", "retention_dry_run")


def get_retention(project_id: int) -> Call[Retention]:
    """The project's retention policy (every setting None: it keeps everything)."""
    return _RETENTION_READ.call(parse=Retention.from_json, id=project_id)


def set_retention(project_id: int, **settings: int | None) -> Call[Retention]:
    """Replace the project's retention policy: `items_max_age_days=30, runs_keep_last=1000, ...` (a setting
    left out has no limit). What a resume or an audit still needs is kept whatever it says. Audited."""
    return _RETENTION_SET.call(parse=Retention.from_json, id=project_id, json=settings)


def retention_dry_run(project_id: int) -> Call[RetentionDryRun]:
    """What a retention pass would remove now, per kind, and how many rows each keep rule keeps."""
    return _RETENTION_DRY_RUN.call(parse=RetentionDryRun.from_json, id=project_id)


# --- approval policies ------------------------------------------------------------------------------------
_POLICIES_LIST = route("GET", "approval-policies/", "approval_policies_list")
_POLICIES_PUBLISH = route("POST", "approval-policies/", "approval_policies_publish")
_GROUPS_LIST = route("GET", "reviewer-groups/", "reviewer_groups_list")


def list_reviewer_groups(*, page_size: int | None = None) -> Paged[ReviewerGroup]:
    """The caller's projects' reviewer groups and their members (what a policy's `eligible_groups` name)."""
    return _GROUPS_LIST.paged(ReviewerGroup.from_json, page_size=_page_size(page_size))


def list_approval_policies(*, page_size: int | None = None) -> Paged[ApprovalPolicy]:
    """Every version of the caller's projects' approval policies, newest first (an agent may read what its
    requests will need; only an operator's personal token publishes)."""
    return _POLICIES_LIST.paged(ApprovalPolicy.from_json, page_size=_page_size(page_size))


def publish_approval_policy(project: str, tool: str = "", *, required_approvals: int = 1,
                            eligible_groups: Sequence[int] = (), expires_after: str | None = None,
                            on_expiry: str = "reject", escalate_to: int | None = None,
                            escalation_expires_after: str | None = None, always_ask: bool = False,
                            reject_options: Sequence[Mapping[str, str]] = (),
                            request_key: str | None = None) -> Call[ApprovalPolicy]:
    """Publish the next version of `tool`'s policy in the project (slug; `tool` "": the default), with a person's
    token holding the operator role there (an agent token: 403 `not_an_operator`). Durations as "HH:MM:SS"."""
    body = {"project": project, "tool": tool, "required_approvals": required_approvals,
            "eligible_groups": list(eligible_groups), "expires_after": expires_after, "on_expiry": on_expiry,
            "escalate_to": escalate_to, "escalation_expires_after": escalation_expires_after,
            "always_ask": always_ask, "reject_options": [dict(option) for option in reject_options]}
    return _POLICIES_PUBLISH.call(parse=ApprovalPolicy.from_json, json=body, request_key=request_key)


# --- questions to people --------------------------------------------------------------------------------
_QUESTIONS_LIST = route("GET", "questions/", "questions_list")
_QUESTIONS_ASK = route("POST", "questions/", "questions_ask")
_QUESTIONS_READ = route("GET", "questions/{id}/", "questions_read")
_QUESTIONS_ANSWER = route("POST", "questions/{id}/answer/", "questions_answer")
_QUESTIONS_CANCEL = route("POST", "questions/{id}/cancel/", "questions_cancel")


def ask_question(question: str, *, idempotency_key: str, answer_schema: Mapping[str, Any] | None = None,
                 context: Mapping[str, Any] | None = None, run: int | None = None,
                 expires_at: dt.datetime | None = None, group: int | None = None,
                 request_key: str | None = None) -> Call[Question]:
    """Ask a person (the console's inbox, Questions): `answer_schema` a JSON Schema of the answer, free text by
    default, `{"type": "string", "enum": [...]}` for a choice, `{"type": "object", "properties": {...}}` for a small
    form. The same `idempotency_key` and question again is the question asked already (maybe answered by now)."""
    body = {"question": question, "idempotency_key": idempotency_key,
            "answer_schema": dict(answer_schema) if answer_schema is not None else None,
            "context": dict(context) if context is not None else None, "run": run,
            "expires_at": expires_at.isoformat() if expires_at else None, "group": group}
    return _QUESTIONS_ASK.call(parse=Question.from_json, json=body, request_key=request_key or idempotency_key)


def get_question(question_id: int) -> Call[Question]:
    """Read one question (its `answer` once a person answered it)."""
    return _QUESTIONS_READ.call(parse=Question.from_json, id=question_id)


def list_questions(*, status: str | None = None, run: int | None = None,
                   page_size: int | None = None) -> Paged[Question]:
    """The caller's projects' questions, newest first (`status="pending"`, `run=` narrow them)."""
    return _QUESTIONS_LIST.paged(Question.from_json, params={"status": status, "run": run},
                                 page_size=_page_size(page_size))


def answer_question(question_id: int, answer: Any, *, expected_version: int | None = None,
                    expected_fingerprint: str | None = None, request_key: str | None = None) -> Call[Question]:
    """Answer once (a reviewer's personal token; an agent's is 403): a second answer is 409 `already_answered`."""
    return _QUESTIONS_ANSWER.call(parse=Question.from_json, id=question_id, request_key=request_key, json={
        "answer": answer, "expected_version": expected_version, "expected_fingerprint": expected_fingerprint})


def cancel_question(question_id: int, *, request_key: str | None = None) -> Call[Question]:
    """Withdraw a pending question this agent asked (409 `question_not_pending` otherwise)."""
    return _QUESTIONS_CANCEL.call(parse=Question.from_json, id=question_id, json={}, request_key=request_key)


def wait_for_question(question_id: int, *, timeout: float = 600.0, poll_interval: float = 1.0,
                      max_poll_interval: float = 10.0) -> Steps[Question]:
    """Poll the question until it is answered, expired or cancelled, and return it (`.answer` once answered).
    Polls every `poll_interval` seconds, growing by half each time up to `max_poll_interval`; raises
    `QuestionWaitTimeout` (a `TimeoutError`, carrying the last seen question) after `timeout` seconds."""
    if timeout < 0 or poll_interval <= 0 or max_poll_interval < poll_interval:
        raise ValueError("timeout >= 0 and 0 < poll_interval <= max_poll_interval")
    deadline = time.monotonic() + timeout
    interval = poll_interval
    question: Question = yield get_question(question_id)
    while not question.settled:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise QuestionWaitTimeout(f"Question {question_id} is still pending after {timeout:g} s.",
                                      question=question)
        yield Sleep(min(interval, remaining))
        interval = min(interval * 1.5, max_poll_interval)
        question = yield get_question(question_id)
    return question


def ask(question: str, *, idempotency_key: str, answer_schema: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None, run: int | None = None, group: int | None = None,
        timeout: float = 600.0, poll_interval: float = 1.0, max_poll_interval: float = 10.0) -> Steps[Question]:
    """`ask_question`, then `wait_for_question`: the question as it was settled (`.answer` when answered). Asking
    again with the same key after a crash finds the same question, answered or not."""
    asked: Question = yield ask_question(question, idempotency_key=idempotency_key, answer_schema=answer_schema,
                                         context=context, run=run, group=group)
    if asked.settled:
        return asked
    settled: Question = yield from wait_for_question(asked.id, timeout=timeout, poll_interval=poll_interval,
                                                     max_poll_interval=max_poll_interval)
    return settled


# --- standing approvals -----------------------------------------------------------------------------------
_RULES_LIST = route("GET", "standing-approvals/", "standing_approvals_list")
_RULES_CREATE = route("POST", "standing-approvals/", "standing_approvals_create")
_RULES_READ = route("GET", "standing-approvals/{id}/", "standing_approvals_read")
_RULES_REVOKE = route("POST", "standing-approvals/{id}/revoke/", "standing_approvals_revoke")


def list_standing_approvals(*, live: bool | None = None, tool: str | None = None,
                            page_size: int | None = None) -> Paged[StandingApproval]:
    """The caller's projects' standing approvals, newest first; `live=True` only those that could approve now,
    `False` only revoked, expired or used-up ones."""
    return _RULES_LIST.paged(StandingApproval.from_json, params={"live": live, "tool": tool},
                             page_size=_page_size(page_size))


def get_standing_approval(rule_id: int) -> Call[StandingApproval]:
    """Read one standing approval (its `uses` so far, `revoked_at`)."""
    return _RULES_READ.call(parse=StandingApproval.from_json, id=rule_id)


def create_standing_approval(project: str, tool: str, *, max_uses: int, expires_in: str | None = None,
                             expires_at: dt.datetime | None = None, agent: str = "", session: int | None = None,
                             run: int | None = None, match_arguments: Mapping[str, Any] | None = None,
                             match_schema: Mapping[str, Any] | None = None, reason: str = "",
                             request_key: str | None = None) -> Call[StandingApproval]:
    """Approve `tool`'s matching requests in the project (slug) without asking, until `expires_at` or for
    `expires_in` ("HH:MM:SS", at most 30 days), at most `max_uses` times: a person's token with the reviewer role
    (an agent's: 403 `not_a_person`); never for an always-ask tool (409 `always_ask`) or a quorum (409
    `quorum_policy`). Audited."""
    body = {"project": project, "tool": tool, "max_uses": max_uses, "expires_in": expires_in,
            "expires_at": expires_at.isoformat() if expires_at else None, "agent": agent, "session": session,
            "run": run, "match_arguments": dict(match_arguments or {}),
            "match_schema": dict(match_schema) if match_schema is not None else None, "reason": reason}
    return _RULES_CREATE.call(parse=StandingApproval.from_json, json=body, request_key=request_key)


def revoke_standing_approval(rule_id: int, *, request_key: str | None = None) -> Call[StandingApproval]:
    """Revoke the rule at once (409 `already_revoked` the second time). An approval it made whose run has not
    resumed yet is asked of a person again. Audited."""
    return _RULES_REVOKE.call(parse=StandingApproval.from_json, id=rule_id, json={}, request_key=request_key)


# --- memory -----------------------------------------------------------------------------------------------

_MEMORY_LIST = route("GET", "memory/records/", "memory_records_list")
_MEMORY_WRITE = route("POST", "memory/records/", "memory_records_write")
_MEMORY_READ = route("GET", "memory/records/{id}/", "memory_records_read")
_MEMORY_CHAIN = route("GET", "memory/records/{id}/chain/", "memory_records_chain")
_MEMORY_SUPERSEDE = route("POST", "memory/records/{id}/supersede/", "memory_records_supersede")
_MEMORY_REVIEW = route("POST", "memory/records/{id}/review/", "memory_records_review")
_MEMORY_EXPIRE = route("POST", "memory/records/{id}/expire/", "memory_records_expire")
_MEMORY_DELETE = route("POST", "memory/records/{id}/delete/", "memory_records_delete")
_MEMORY_ERASE = route("POST", "memory/records/{id}/erase/", "memory_records_erase")
_PERSON_ERASE = route("POST", "memory/erasures/", "memory_person_erase")
_MEMORY_BULK_DELETE = route("POST", "memory/records/bulk-delete/", "memory_records_bulk_delete")
_MEMORY_BULK_EXPIRE = route("POST", "memory/records/bulk-expire/", "memory_records_bulk_expire")
_MEMORY_RETRIEVE = route("GET", "memory/retrieve/", "memory_retrieve")
_MEMORY_HELD = route("GET", "memory/held/", "memory_held_list")
_MEMORY_CONFLICTS = route("GET", "memory/conflicts/", "memory_conflicts_list")
_CONTEXT_CREATE = route("POST", "memory/context/", "memory_context_create")
_CONTEXT_READ = route("GET", "memory/context/{id}/", "memory_context_read")
_BUNDLE_EXPORT = route("POST", "bundles/export/", "bundle_export")
_BUNDLE_IMPORT = route("POST", "bundles/import/", "bundle_import")


def propose_memory(
    *, scope: MemoryScope, content: str, scope_key: str | None = None, subject: str | None = None,
    provenance_kind: ProvenanceKind | None = None, source_run_id: int | None = None,
    source_session_id: int | None = None, source_item_seq: int | None = None, valid_until: dt.datetime | None = None,
    expires_at: dt.datetime | None = None, project: str | None = None, request_key: str | None = None,
) -> Call[MemoryWrite]:
    """Propose a long-term memory write; the project's write policy decides.

    Returns the decision: `accepted` or `held` (a new record) or `merged` (the same content is already in that
    scope). A rejection is a ValidationError (422) whose `code` says why (`too_long`, `blocked_pattern`,
    `provenance_required`, ...). Provenance (`source_run_id`, or `source_session_id` + `source_item_seq`) is
    required unless the policy says otherwise.
    """
    body = fields(scope=scope, content=content, scope_key=scope_key, subject=subject,
                  provenance_kind=provenance_kind, source_run_id=source_run_id, source_session_id=source_session_id,
                  source_item_seq=source_item_seq, valid_until=valid_until, expires_at=expires_at, project=project)
    return _MEMORY_WRITE.call(parse=MemoryWrite.from_json, json=body, request_key=request_key)


def get_memory(record_id: int) -> Call[MemoryRecord]:
    """Read one memory record (in any status)."""
    return _MEMORY_READ.call(parse=MemoryRecord.from_json, id=record_id)


def memory_chain(record_id: int) -> Call[MemoryChain]:
    """The record's version chain: the versions it replaced and the ones that replaced it."""
    return _MEMORY_CHAIN.call(parse=MemoryChain.from_json, id=record_id)


def list_memory(
    *, scope: MemoryScope | None = None, scope_key: str | None = None, status: MemoryStatus | None = None,
    subject: str | None = None, text: str | None = None, fresh: bool | None = None, project: str | None = None,
    page_size: int | None = None,
) -> Paged[MemoryRecord]:
    """The project's memory records in every status (filters narrow it), newest first, following the pages."""
    params = {"scope": scope, "scope_key": scope_key, "status": status, "subject": subject, "text": text,
              "fresh": fresh, "project": project}
    return _MEMORY_LIST.paged(MemoryRecord.from_json, params=params, page_size=_page_size(page_size))


def retrieve_memory(
    *, scope: MemoryScope, scope_key: str | None = None, q: str | None = None, k: int | None = None,
    project: str | None = None,
) -> Call[list[MemoryRecord]]:
    """The top `k` active, fresh records of one scope, ranked by full-text relevance to `q` (websearch syntax)."""
    params = {"scope": scope, "scope_key": scope_key, "q": q, "k": k, "project": project}
    return _MEMORY_RETRIEVE.call(parse=list_of(MemoryRecord.from_json), params=params)


def supersede_memory(
    record_id: int, *, content: str | None = None, replacement_id: int | None = None, subject: str | None = None,
    provenance_kind: ProvenanceKind | None = None, source_run_id: int | None = None,
    source_session_id: int | None = None, source_item_seq: int | None = None, valid_until: dt.datetime | None = None,
    expires_at: dt.datetime | None = None, expected_version: int, reason: str | None = None,
    request_key: str | None = None,
) -> Call[MemoryRecord]:
    """Replace a record with a new version (`content`), or let another live record stand instead
    (`replacement_id`, resolving a conflict). Agents supersede only what they wrote. `expected_version` is the
    record's version you read; `reason` (why) is required of a person with new `content`. Returns the standing
    record."""
    body = fields(content=content, replacement_id=replacement_id, subject=subject, provenance_kind=provenance_kind,
                  source_run_id=source_run_id, source_session_id=source_session_id,
                  source_item_seq=source_item_seq, valid_until=valid_until, expires_at=expires_at,
                  expected_version=expected_version, reason=reason)
    return _MEMORY_SUPERSEDE.call(parse=MemoryRecord.from_json, id=record_id, json=body, request_key=request_key)


def memory_conflicts(*, project: str | None = None) -> Call[list[MemoryConflict]]:
    """Groups of live records that disagree about the same subject in the same scope."""
    return _MEMORY_CONFLICTS.call(parse=list_of(MemoryConflict.from_json), params={"project": project})


# The LangGraph store's operations (harness_client.langgraph_store.HarnessStore): one request each.

_STORE_ITEMS = route("GET", "memory/store/items/", "memory_store_get")
_STORE_PUT = route("POST", "memory/store/items/", "memory_store_put")
_STORE_DELETE = route("POST", "memory/store/items/delete/", "memory_store_delete")
_STORE_SEARCH = route("GET", "memory/store/search/", "memory_store_search")
_STORE_NAMESPACES = route("GET", "memory/store/namespaces/", "memory_store_namespaces")


def _raw(body: Any) -> Any:
    return body


def store_get(namespace: Sequence[str], key: str, *, refresh_ttl: bool | None = None, project: str | None = None,
              ) -> Call[dict[str, Any]]:
    """The active, fresh store item under (namespace, key), as the API's JSON; NotFoundError when there is none.
    A namespace starts with its scope (`project`, or `user` / `agent` / `session` and the scope key)."""
    params = {"namespace": list(namespace), "key": key, "refresh_ttl": refresh_ttl, "project": project}
    return _STORE_ITEMS.call(parse=_raw, params=params)


def store_put(
    namespace: Sequence[str], key: str, value: Mapping[str, Any], *, ttl_seconds: int | None = None,
    graph: Mapping[str, str] | None = None, source_run_id: int | None = None, source_session_id: int | None = None,
    project: str | None = None, request_key: str | None = None,
) -> Call[dict[str, Any]]:
    """Put a value under (namespace, key) through the scope's write policy: `{"outcome": "accepted" | "held" |
    "merged", "code", "reason", "record"}`; a rejection is a ValidationError (422). `graph`: the thread, checkpoint
    and node the put was made in (the thread's run becomes its source run)."""
    body = fields(namespace=list(namespace), key=key, value=dict(value), ttl_seconds=ttl_seconds,
                  graph=dict(graph) if graph else None, source_run_id=source_run_id,
                  source_session_id=source_session_id, project=project)
    return _STORE_PUT.call(parse=_raw, json=body, request_key=request_key)


def store_delete(namespace: Sequence[str], key: str, *, project: str | None = None,
                 request_key: str | None = None) -> Call[list[int]]:
    """Tombstone the key's live records; returns their ids (none for an absent key)."""
    body = fields(namespace=list(namespace), key=key, project=project)
    return _STORE_DELETE.call(parse=lambda b: list(b["deleted"]), json=body, request_key=request_key)


def store_search(
    namespace_prefix: Sequence[str] = (), *, query: str | None = None, filter: Mapping[str, Any] | None = None,
    limit: int | None = None, offset: int | None = None, refresh_ttl: bool | None = None, project: str | None = None,
) -> Call[list[dict[str, Any]]]:
    """Active, fresh store items under a namespace prefix: `filter` on value fields, `query` full text over the
    value's JSON (websearch syntax; best first, with a `score`), else newest first. One page."""
    params = {"namespace_prefix": list(namespace_prefix), "query": query,
              "filter": json.dumps(dict(filter)) if filter else None, "limit": limit, "offset": offset,
              "refresh_ttl": refresh_ttl, "project": project}
    return _STORE_SEARCH.call(parse=_raw, params=params)


def store_namespaces(
    *, prefix: Sequence[str] = (), suffix: Sequence[str] = (), max_depth: int | None = None,
    limit: int | None = None, offset: int | None = None, project: str | None = None,
) -> Call[list[list[str]]]:
    """The namespaces holding items this token can read, in order ("*" in `prefix` / `suffix`: any one label)."""
    params = {"prefix": list(prefix), "suffix": list(suffix), "max_depth": max_depth, "limit": limit,
              "offset": offset, "project": project}
    return _STORE_NAMESPACES.call(parse=lambda body: [list(ns) for ns in body["namespaces"]], params=params)


def build_context(run_id: int, *, budget_chars: int, query: str | None = None, request_key: str | None = None
                  ) -> Call[ContextSnapshot]:
    """Build and record the run's bounded context: recent session items within `budget_chars` plus memory
    relevant to `query`. The snapshot is exactly what the model is given; the run inspector shows it."""
    body = fields(run_id=run_id, budget_chars=budget_chars, query=query)
    return _CONTEXT_CREATE.call(parse=ContextSnapshot.from_json, json=body, request_key=request_key)


def get_context(snapshot_id: int) -> Call[ContextSnapshot]:
    """Read a recorded context snapshot."""
    return _CONTEXT_READ.call(parse=ContextSnapshot.from_json, id=snapshot_id)


# Operators' memory curation (a console user's personal token in the operator group; agent tokens get 403).


def review_memory(record_id: int, decision: Decision, *, expected_version: int,
                  request_key: str | None = None) -> Call[MemoryRecord]:
    """Approve or reject a held record (operators)."""
    body = fields(decision=decision, expected_version=expected_version)
    return _MEMORY_REVIEW.call(parse=MemoryRecord.from_json, id=record_id, json=body, request_key=request_key)


def expire_memory(record_id: int, *, expected_version: int, at: dt.datetime | None = None,
                  request_key: str | None = None) -> Call[MemoryRecord]:
    """Make a record expire at `at` (now by default) (operators)."""
    body = fields(at=at, expected_version=expected_version)
    return _MEMORY_EXPIRE.call(parse=MemoryRecord.from_json, id=record_id, json=body, request_key=request_key)


def delete_memory(record_id: int, *, expected_version: int, reason: str, request_key: str | None = None
                  ) -> Call[MemoryRecord]:
    """Delete a record (a tombstone keeps who and when; `reason`, why, goes in the audit entry) (operators)."""
    body = fields(expected_version=expected_version, reason=reason)
    return _MEMORY_DELETE.call(parse=MemoryRecord.from_json, id=record_id, json=body, request_key=request_key)


def erase_memory(record_id: int, *, include_history: bool | None = None, request_key: str | None = None
                 ) -> Call[list[int]]:
    """Erase a record's content (and its earlier versions' by default) everywhere; returns the erased ids
    (operators)."""
    body = fields(include_history=include_history)
    return _MEMORY_ERASE.call(parse=lambda b: [int(i) for i in b["erased"]], id=record_id, json=body,
                              request_key=request_key)


def erase_person(*, project: str, subject: str, reason: str | None = None, dry_run: bool | None = None,
                 request_key: str | None = None) -> Call[ErasureReport]:
    """Erase a person's user-scope memory, the session items they wrote and the replies that copied them; the
    report says per store what was erased and what was kept and why (admins; `dry_run`: change nothing)."""
    body = {"project": project, "subject": subject, **fields(reason=reason, dry_run=dry_run)}
    return _PERSON_ERASE.call(parse=ErasureReport.from_json, json=body, request_key=request_key)


def bulk_delete_memory(*, project: str, ids: Iterable[int], reason: str, request_key: str | None = None
                       ) -> Call[BulkResult]:
    """Delete many records of a project, one `reason` for all (operators)."""
    body = {"project": project, "ids": list(ids), "reason": reason}
    return _MEMORY_BULK_DELETE.call(parse=BulkResult.from_json, json=body, request_key=request_key)


def export_bundle(*, kind: str, id: int, request_key: str | None = None) -> Call[dict[str, Any]]:
    """A run (`kind` "run"), session or task as one hash-checked bundle, as JSON (operators and admins, with a
    personal token; docs/operations/run-bundles.md)."""
    return _BUNDLE_EXPORT.call(parse=dict, json={"kind": kind, "id": id}, request_key=request_key)


def import_bundle(*, project: str, bundle: dict[str, Any], request_key: str | None = None) -> Call[dict[str, Any]]:
    """Import a bundle read-only into `project` (created if missing, by an admin); the answer names the local
    root (`root`: kind, id, source_id). A tampered bundle is refused (`bundle_digest_mismatch`, ...)."""
    return _BUNDLE_IMPORT.call(parse=dict, json={"project": project, "bundle": bundle}, request_key=request_key)


def bulk_expire_memory(*, project: str, ids: Iterable[int], request_key: str | None = None) -> Call[BulkResult]:
    """Expire many records of a project now (operators)."""
    body = {"project": project, "ids": list(ids)}
    return _MEMORY_BULK_EXPIRE.call(parse=BulkResult.from_json, json=body, request_key=request_key)


def list_held_memory(*, project: str | None = None, page_size: int | None = None) -> Paged[MemoryRecord]:
    """Records held for review, newest first, following the pages (operators)."""
    return _MEMORY_HELD.paged(MemoryRecord.from_json, params={"project": project}, page_size=_page_size(page_size))


# --- LangGraph threads (harness_client.langgraph.HarnessSaver is built on these) -------------------------

_THREAD_CHECKPOINTS_LIST = route("GET", "threads/checkpoints/", "threads_checkpoints_list")
_THREAD_CHECKPOINTS_PUT = route("POST", "threads/checkpoints/", "threads_checkpoints_put")
_THREAD_CHECKPOINT_READ = route("GET", "threads/checkpoint/", "threads_checkpoint_read")
_THREAD_WRITES_PUT = route("POST", "threads/writes/", "threads_writes_put")
_THREAD_DELETE = route("POST", "threads/delete/", "threads_delete")
_THREAD_ENSURE = route("POST", "threads/", "threads_ensure")
_THREAD_COPY = route("POST", "threads/copy/", "threads_copy")
_THREAD_PRUNE = route("POST", "threads/prune/", "threads_prune")
_THREAD_DELETE_FOR_RUNS = route("POST", "threads/delete-for-runs/", "threads_delete_for_runs")
_THREAD_TTL_READ = route("GET", "threads/ttl/", "threads_ttl_read")
_THREAD_TTL_SET = route("POST", "threads/ttl/", "threads_ttl_set")


def ensure_thread(thread_id: str, *, end_user: str | None = None, agent: str | None = None,
                  request_key: str | None = None) -> Call[ThreadRun]:
    """The run (and session) of a LangGraph thread, created if the thread is new (its first checkpoint would).

    `end_user`: the end user a new thread's session serves (an existing thread must be that user's: ConflictError
    `thread_ref_taken` otherwise). A client made by `for_user` tags its threads with its user itself."""
    body: dict[str, Any] = {"thread_id": thread_id}
    if agent:
        body["agent"] = agent  # the graph's name, the run's active_agent (set once)
    if end_user is not None:
        body["end_user"] = end_user
    return _THREAD_ENSURE.call(parse=ThreadRun.from_json, json=body, request_key=request_key)


def put_thread_checkpoint(
    *, thread_id: str, checkpoint_id: str, checkpoint: Mapping[str, Any], channel_values: Mapping[str, Any],
    metadata: Mapping[str, Any], checkpoint_ns: str = "", parent_checkpoint_id: str | None = None,
    lease_owner: str | None = None, request_key: str | None = None,
) -> Call[ThreadCheckpointStored]:
    """Store a LangGraph checkpoint of a thread (a run found by its ref `thread_id`, created on its first one).

    `checkpoint` is LangGraph's checkpoint without its channel values, `channel_values` each channel's value as
    JSON (or `{"__lg_type__": type, "b64": bytes}`). The same id again with the same content is answered as
    before; with other content: ConflictError `checkpoint_exists` (checkpoints are immutable). `lease_owner` as
    for `transition_run`.
    """
    body = fields(thread_id=thread_id, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id,
                  parent_checkpoint_id=parent_checkpoint_id, checkpoint=checkpoint, channel_values=channel_values,
                  metadata=metadata)
    body["lease_owner"] = lease_owner
    return _THREAD_CHECKPOINTS_PUT.call(parse=ThreadCheckpointStored.from_json, json=body, request_key=request_key)


def put_thread_writes(
    *, thread_id: str, checkpoint_id: str, task_id: str, writes: Sequence[tuple[int, str, Any]],
    checkpoint_ns: str = "", task_path: str = "", request_key: str | None = None,
) -> Call[int]:
    """Store a task's pending writes `(idx, channel, value)` for a thread's checkpoint; how many were written.

    When every idx is negative (LangGraph's special channels) they replace what is stored under the same key.
    """
    body = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id,
            "task_id": task_id, "task_path": task_path, "writes": [list(w) for w in writes]}
    return _THREAD_WRITES_PUT.call(parse=lambda b: int(b["written"]), json=body, request_key=request_key)


def get_thread_checkpoint(
    *, thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None,
) -> Steps[ThreadCheckpoint | None]:
    """A thread's checkpoint by id (its newest by id when None) with its pending writes; None if there is none."""
    params = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id or None}
    try:
        found: ThreadCheckpoint = yield _THREAD_CHECKPOINT_READ.call(parse=ThreadCheckpoint.from_json, params=params)
    except NotFoundError as exc:
        if exc.code == "checkpoint_not_found":
            return None
        raise
    return found


def thread_checkpoints(
    *, thread_id: str | None, checkpoint_ns: str | None = None, checkpoint_id: str | None = None,
    filter: Mapping[str, Any] | None = None, before: str | None = None, limit: int | None = None,
) -> Call[list[ThreadCheckpoint]]:
    """Checkpoints with their pending writes, newest first by checkpoint id, in one request (what LangGraph's
    `list()` reads): of one thread (every thread when None), one namespace (all when None), one id, whose
    metadata contains `filter`, with ids before `before`, at most `limit`."""
    params = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id or None,
              "filter": json.dumps(dict(filter)) if filter else None, "before": before, "limit": limit}
    return _THREAD_CHECKPOINTS_LIST.call(parse=thread_checkpoints_from_json, params=params)


def delete_thread(thread_id: str, *, request_key: str | None = None) -> Call[ThreadDeleted]:
    """Delete a thread's checkpoints and pending writes (audited); its run, events and approvals stay."""
    return _THREAD_DELETE.call(parse=ThreadDeleted.from_json, json={"thread_id": thread_id}, request_key=request_key)


def copy_thread(source_thread_id: str, target_thread_id: str, *, request_key: str | None = None,
                ) -> Call[ThreadCopied]:
    """Copy a thread to a new thread id (LangGraph's `copy_thread`): a fork, with every checkpoint (every namespace,
    the same ids) and pending write; the console's lineage pages show where it came from. NotFoundError
    `thread_not_found` for an unknown source, ConflictError `thread_exists` for a target id that is taken."""
    body = {"source_thread_id": source_thread_id, "target_thread_id": target_thread_id}
    return _THREAD_COPY.call(parse=ThreadCopied.from_json, json=body, request_key=request_key)


def prune_threads(thread_ids: Sequence[str], *, strategy: Literal["keep_latest", "delete"] = "keep_latest",
                  request_key: str | None = None) -> Call[ThreadPruned]:
    """LangGraph's `prune`: keep each namespace's newest checkpoint and its writes (`keep_latest`) or nothing
    (`delete`). A thread that a pending approval or an unconsumed effect needs is skipped: `kept` says which, and
    the retention rule."""
    body = {"thread_ids": list(thread_ids), "strategy": strategy}
    return _THREAD_PRUNE.call(parse=ThreadPruned.from_json, json=body, request_key=request_key)


def delete_thread_runs(run_ids: Sequence[str], *, request_key: str | None = None) -> Call[ThreadPruned]:
    """LangGraph's `delete_for_runs`: the checkpoints (and their writes) whose metadata names one of these LangGraph
    run ids; a thread the retention keep rules need is skipped (`kept`)."""
    return _THREAD_DELETE_FOR_RUNS.call(parse=ThreadPruned.from_json, json={"run_ids": list(run_ids)},
                                        request_key=request_key)


def get_thread_ttl(thread_id: str) -> Call[ThreadTtl]:
    """A thread's time to live: its own (`ttl_days`), its project's default, and when it expires (None: kept)."""
    return _THREAD_TTL_READ.call(parse=ThreadTtl.from_json, params={"thread_id": thread_id})


def set_thread_ttl(thread_id: str, ttl_days: int | None, *, request_key: str | None = None) -> Call[ThreadTtl]:
    """Set a thread's own time to live in days since its last change (None: its project's retention default). The
    retention pass deletes the checkpoints and writes of a thread past it, unless a keep rule needs the thread."""
    return _THREAD_TTL_SET.call(parse=ThreadTtl.from_json, json={"thread_id": thread_id, "ttl_days": ttl_days},
                                request_key=request_key)
