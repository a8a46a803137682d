"""Checkpoints: immutable, validated resume points, written in one fenced statement."""

import hashlib
import json
from typing import Any, NamedTuple

from harness.canonical import digest
from harness.db import api_time_sql, prepared_cursor
from harness.fields import dumps
from harness.http.auth import CALLER_HOLDS, CALLER_SQL, TokenCheck, caller_params
from harness.http.errors import NotFoundError, ValidationFailed
from harness.http.idempotency import Claim, claim_params, claim_sql, execute_claimed
from harness.models import Project
from runs_app.fencing import UNFENCED, LeaseOwner, lease_fence_params, lease_fence_sql, lease_lost
from runs_app.models import Checkpoint, Run, RunStatus, Task
from runs_app.services.checkpoint_facts import Facts, checkpoint_facts, forget, remember_written

# An `authority_ref` of this form names the approval whose decision the checkpoint's authority rests on: the
# resume verifies it names the approval the checkpoint records, of its own run (worker.checks.check_checkpoint).
APPROVAL_AUTHORITY = "approval:"
LANGGRAPH_THREAD_MODE = "langgraph"  # runs_app.services.threads.THREAD_TASK_MODE (which imports this module)


def checkpoint_create(
    *,
    project: Project | int,
    run_id: int | None = None,
    task_id: int | None = None,
    parent_id: int | None = None,
    label: str = "",
    cursor: dict[str, Any] | None = None,
    state: dict[str, Any] | None = None,
    artifact_fingerprints: dict[str, Any] | None = None,
    authority_ref: str = "",
    pending_gate: Any = None,
    approval_id: int | None = None,
    resume_policy: str = "revalidate",
    schema_version: int = 1,
    lease_owner: LeaseOwner = UNFENCED,
    claim: Claim | None = None,
    forked: bool = False,
    caller: TokenCheck | None = None,
) -> Checkpoint:
    """Write an immutable checkpoint and make it the latest of its run and task.

    1. Resolve the owner(s): a run (its task comes along) and/or a task, all in this project.
    2. The parent must belong to the same run or the same task lineage, unless `forked`: a fork's first
       checkpoint (runs_app.services.forks) has the checkpoint of another run as its parent.
    3. Hash the canonical content, including the parent's hash, so a chain is tamper-evident.
    4. Insert it and point the run's `last_checkpoint` and the task's `latest_checkpoint` at it, in
       one statement, fenced on the run's lease (runs_app.fencing, checked on the locked run row: the
       owner that holds it, or None for a caller that holds none, which a leased run refuses); if the fence
       does not hold, nothing is written (409 lease_lost: a stale worker is fenced off and cannot fork the
       chain, whether it names its old owner or none).
    5. With a `claim` (the API's Idempotency-Key), the same statement records the reply under the key:
       the checkpoint and its stored reply commit together, in one commit (KeyTaken if the key is taken).
       With a `caller` (the plain path's harness.http.auth.TokenCheck), it writes nothing unless the caller's token
       holds (then NotFoundError, as for facts that do not hold: the plain path asks whether the token was why).
    """
    project_id = project if isinstance(project, int) else project.pk
    if run_id is None and task_id is None:
        raise ValidationFailed("A checkpoint belongs to a run, a task, or both.", code="checkpoint_owner_required")
    fields: dict[str, Any] = {
        "label": label, "cursor": cursor, "state": state, "artifact_fingerprints": artifact_fingerprints,
        "authority_ref": authority_ref, "pending_gate": pending_gate, "approval_id": approval_id,
        "resume_policy": resume_policy, "schema_version": schema_version, "lease_owner": lease_owner,
        "claim": claim, "forked": forked, "caller": caller,
    }
    # The write is one statement (atomic by itself, fenced on the lease inside it), and
    # the reads before it see only facts that never change (a run's project and task, an append-only
    # parent checkpoint): no BEGIN/COMMIT round trips around them on the hot path.
    return _checkpoint_create(project_id, run_id, task_id, parent_id, fields)


def checkpoint_waiting(
    *, project: Project | int, run: Run, waits_for: str, pending_gate: Any, approval_id: int | None = None,
) -> Checkpoint | None:
    """Checkpoint a run as it starts waiting (seed 002, section 06: "waiting for a user or an external result",
    and, for an approval the worker then executes, "before a consequential write"): call in the transaction
    that moves it.

    The new checkpoint is a child of the run's latest (or its task's): the run's cursor, the same state and artifact
    fingerprints, so the resume re-validates against exactly what the run had, plus what it waits for
    (`pending_gate`, over the gate the parent named, if any) and the approval it waits on. A run with no
    checkpoint yet gets its first, at its cursor. A LangGraph thread's run gets none: its checkpoints are the
    graph's own (LangGraph saves one at its interrupt), and its reads take the newest of the run as the graph's.
    """
    if run.task_mode == LANGGRAPH_THREAD_MODE:
        return None
    project_id = project if isinstance(project, int) else project.pk
    parent_id = run.last_checkpoint_id
    if parent_id is None and run.task_id is not None:
        parent_id = Task.objects.filter(pk=run.task_id).values_list("latest_checkpoint_id", flat=True).first()
    parent = (Checkpoint.objects.filter(project_id=project_id, pk=parent_id)
              .values("cursor", "state", "artifact_fingerprints", "pending_gate", "run_id", "task_id").first()
              ) if parent_id else None
    if parent is not None and parent["run_id"] != run.pk and parent["task_id"] != run.task_id:
        parent = None  # not in this run's lineage (a fork's): start the run's own
    if parent is not None and isinstance(parent["pending_gate"], dict) and isinstance(pending_gate, dict):
        pending_gate = {**parent["pending_gate"], **pending_gate}  # what the agent said it waits on, kept
    return checkpoint_create(
        project=project_id, run_id=run.pk, parent_id=parent_id if parent is not None else None,
        label=f"waiting for {waits_for}"[:120],
        # The run's cursor is its latest checkpoint's (a checkpoint write sets it), or what the run moved it to.
        cursor=run.cursor or (parent["cursor"] if parent is not None else {}),
        state=parent["state"] if parent is not None else {},
        artifact_fingerprints=parent["artifact_fingerprints"] if parent is not None else {},
        pending_gate=pending_gate, approval_id=approval_id,
        authority_ref=f"{APPROVAL_AUTHORITY}{approval_id}" if approval_id is not None else "",
    )


def checkpoint_session_awaiting_user(*, project: Project | int, session_id: int) -> list[Checkpoint]:
    """Checkpoint the session's running run as the session starts waiting for its user (seed 002 section 06),
    by `checkpoint_waiting`'s rules: a child of the run's latest, its cursor and state, and what it waits for.

    Called in the transaction that moves the session (sessions_app.signals.session_awaiting_user, connected in
    runs_app.apps). The run row is locked first, so a checkpoint the agent writes at the same moment is either
    the parent or a child of this one, never its sibling. A session has one running run as a rule; each one
    gets its checkpoint. A session with none gets nothing.
    """
    project_id = project if isinstance(project, int) else project.pk
    running = (Run.objects.select_for_update().filter(project_id=project_id, session_id=session_id,
                                                      status=RunStatus.RUNNING).order_by("pk"))
    written = []
    for run in running:
        checkpoint = checkpoint_waiting(project=project_id, run=run, waits_for="its user",
                                        pending_gate={"user": True, "session": session_id, "cursor": run.cursor})
        if checkpoint is not None:
            written.append(checkpoint)
    return written


def _checkpoint_create(
    project_id: int, run_id: int | None, task_id: int | None, parent_id: int | None, fields: dict[str, Any]
) -> Checkpoint:
    """Write with the facts this process remembers (runs_app.services.checkpoint_facts), or reads them first."""
    facts, remembered = checkpoint_facts(project_id, run_id, parent_id)
    if remembered:
        try:
            return _checkpoint_write(facts, project_id, run_id, task_id, parent_id, **fields)
        except _FactsChanged:
            # What this process remembered no longer holds (e.g. the database was flushed): read, then write.
            forget(project_id, run_id, parent_id)
            facts, _ = checkpoint_facts(project_id, run_id, parent_id)
    try:
        return _checkpoint_write(facts, project_id, run_id, task_id, parent_id, **fields)
    except _FactsChanged:
        raise NotFoundError("The run or the parent checkpoint does not exist.") from None


class _FactsChanged(Exception):
    """The write statement found the run or the parent not as the facts it was given said."""


def _checkpoint_write(
    facts: Facts, project_id: int, run_id: int | None, task_id: int | None, parent_id: int | None, *, label: str,
    cursor: dict[str, Any] | None, state: dict[str, Any] | None, artifact_fingerprints: dict[str, Any] | None,
    authority_ref: str, pending_gate: Any, approval_id: int | None, resume_policy: str, schema_version: int,
    lease_owner: LeaseOwner, claim: Claim | None, forked: bool, caller: TokenCheck | None,
) -> Checkpoint:
    run_found, run_task_id, parent_hash, parent_depth, parent_run, parent_task, parent_found = facts
    if run_id is not None:
        if not run_found:
            raise NotFoundError(f"Run {run_id} does not exist.")
        if task_id is None:
            task_id = run_task_id
        elif run_task_id not in (None, task_id):
            raise ValidationFailed("The run belongs to another task.", code="task_mismatch")
    if (task_id is not None and (run_id is None or task_id != run_task_id)
            and not Task.objects.filter(project_id=project_id, pk=task_id).exists()):
        raise NotFoundError(f"Task {task_id} does not exist.")
    depth = 0
    if parent_id is not None:
        if not parent_found or parent_depth is None:  # a found parent has its depth (NOT NULL)
            raise NotFoundError(f"Checkpoint {parent_id} does not exist.")
        same_run = run_id is not None and parent_run == run_id
        same_task = task_id is not None and parent_task == task_id
        if not (same_run or same_task or forked):
            raise ValidationFailed(
                "The parent checkpoint is not in this run's or task's lineage.", code="parent_not_in_lineage"
            )
        depth = parent_depth + 1
    checkpoint = Checkpoint(
        project_id=project_id, run_id=run_id, task_id=task_id, parent_id=parent_id, label=label,
        cursor=cursor or {}, state=state or {}, artifact_fingerprints=artifact_fingerprints or {},
        authority_ref=authority_ref, pending_gate=pending_gate, approval_id=approval_id,
        resume_policy=resume_policy, schema_version=schema_version, depth=depth,
    )
    checkpoint.content_hash = checkpoint_hash(checkpoint, parent_hash=parent_hash)
    # The approval named is checked inside the write (it exists in this project, or nothing is written).
    run_updated = _checkpoint_insert(checkpoint, lease_owner, parent_hash, run_task_id, claim, caller)
    if run_id is not None and not run_updated:
        current = Run.objects.filter(pk=run_id).values("status", "version").get()
        raise lease_lost(lease_owner, current_status=current["status"], current_version=current["version"])
    remember_written(checkpoint)
    return checkpoint


def checkpoint_hash(checkpoint: Checkpoint, *, parent_hash: str | None, thread: str = "") -> str:
    """The content hash of a checkpoint as it is (what the write stored, and what the resume recomputes from the
    row it reads: worker.checks.check_checkpoint). It covers the canonical content and the parent's hash, so a
    changed row or a changed ancestor shows. A LangGraph thread's checkpoint (`external_id`; `thread`: its run's
    ref) hashes what the graph stored (runs_app.services.threads.thread_checkpoint_put), chained the same way."""
    if checkpoint.external_id:
        body = {"thread": thread, "ns": checkpoint.ns, "id": checkpoint.external_id,
                "parent": checkpoint.parent_external_id, "checkpoint": checkpoint.cursor,
                "channel_values": checkpoint.state, "metadata": checkpoint.metadata}
        return hashlib.sha256(f"{digest(body)}:{parent_hash or ''}".encode()).hexdigest()
    return digest({
        "run": checkpoint.run_id, "task": checkpoint.task_id, "parent_hash": parent_hash,
        "cursor": checkpoint.cursor, "state": checkpoint.state,
        "artifact_fingerprints": checkpoint.artifact_fingerprints,
        "authority_ref": checkpoint.authority_ref, "pending_gate": checkpoint.pending_gate,
        "approval": checkpoint.approval_id, "resume_policy": checkpoint.resume_policy,
        "schema_version": checkpoint.schema_version,
    })


# The API's reply (runs_app.api.checkpoint_out), recorded under a claimed Idempotency-Key by the statement
# that writes the checkpoint (harness.http.idempotency.claim_sql); NULL when nothing was written.
_CHECKPOINT_REPLY = f"""
SELECT jsonb_build_object(
           'id', ins.id, 'run', %(run)s::bigint, 'task', %(task)s::bigint, 'parent', %(parent)s::bigint,
           'depth', %(depth)s::integer, 'label', %(label)s::text, 'cursor', %(cursor)s::jsonb,
           'state', %(state)s::jsonb, 'artifact_fingerprints', %(fingerprints)s::jsonb,
           'authority_ref', %(authority)s::text, 'pending_gate', %(gate)s::jsonb, 'approval', %(approval)s::bigint,
           'resume_policy', %(policy)s::text, 'schema_version', %(schema)s::integer, 'content_hash', ins.content_hash,
           'created_at', ({api_time_sql("ins.created_at")})::jsonb)
  FROM ins"""  # noqa: S608 - the text put in is harness.db's own SQL; every value is a bound parameter
_CHECKPOINT_SQL = """
-- One statement: the facts the hash was computed from are checked (the parent is this project's
-- checkpoint with this hash, the run is this project's with this task), the run's row is locked and
-- its lease checked; unless all hold nothing is inserted (no transaction around it has to roll a
-- checkpoint back).
WITH """ + CALLER_SQL + """, facts AS (
    SELECT """ + CALLER_HOLDS + """ AND (%(parent)s::bigint IS NULL OR EXISTS (
               SELECT 1 FROM runs_app_checkpoint p
                WHERE p.id = %(parent)s AND p.project_id = %(project)s AND p.content_hash = %(parent_hash)s))
       AND (%(run)s::bigint IS NULL OR EXISTS (
               SELECT 1 FROM runs_app_run r
                WHERE r.id = %(run)s AND r.project_id = %(project)s
                  AND r.task_id IS NOT DISTINCT FROM %(run_task)s::bigint)) AS ok,
           (%(approval)s::bigint IS NULL OR EXISTS (
               SELECT 1 FROM runs_app_approvalrequest a
                WHERE a.id = %(approval)s AND a.project_id = %(project)s)) AS approval_ok
), fence AS (
    SELECT id FROM runs_app_run
     WHERE id = %(run)s AND project_id = %(project)s AND """ + lease_fence_sql() + """
       FOR UPDATE
), ins AS (
    INSERT INTO runs_app_checkpoint (project_id, run_id, task_id, parent_id, label, cursor, state,
        artifact_fingerprints, authority_ref, pending_gate, approval_id, resume_policy, schema_version, depth,
        content_hash, created_at)
    SELECT %(project)s, %(run)s, %(task)s, %(parent)s, %(label)s, %(cursor)s::json, %(state)s::json,
        %(fingerprints)s::json, %(authority)s, %(gate)s::json, %(approval)s, %(policy)s, %(schema)s, %(depth)s,
        %(hash)s, now()
     WHERE (SELECT ok AND approval_ok FROM facts) AND (%(run)s::bigint IS NULL OR EXISTS (SELECT 1 FROM fence))
    RETURNING id, created_at, content_hash
), run_updated AS (
    UPDATE runs_app_run
       SET last_checkpoint_id = (SELECT id FROM ins), cursor = %(cursor)s::jsonb, version = version + 1,
           updated_at = now()
     WHERE id = (SELECT id FROM fence) AND project_id = %(project)s AND EXISTS (SELECT 1 FROM ins)
 RETURNING id
), task_updated AS (
    UPDATE runs_app_task SET latest_checkpoint_id = (SELECT id FROM ins), version = version + 1, updated_at = now()
     WHERE id = %(task)s AND project_id = %(project)s AND EXISTS (SELECT 1 FROM ins)
 RETURNING id
), claim AS (""" + claim_sql(_CHECKPOINT_REPLY) + """)
SELECT facts.ok, facts.approval_ok, ins.id, ins.created_at, (SELECT count(*) FROM run_updated)
  FROM facts LEFT JOIN ins ON true
"""  # noqa: S608 - the text put in is harness.http.idempotency's and this module's own SQL


def _checkpoint_insert(
    cp: Checkpoint, lease_owner: LeaseOwner, parent_hash: str | None, run_task_id: int | None, claim: Claim | None,
    caller: TokenCheck | None = None,
) -> bool:
    params = {
        "project": cp.project_id, "run": cp.run_id, "task": cp.task_id, "parent": cp.parent_id, "label": cp.label,
        "cursor": dumps(cp.cursor), "state": dumps(cp.state),
        "fingerprints": dumps(cp.artifact_fingerprints), "authority": cp.authority_ref,
        "gate": None if cp.pending_gate is None else dumps(cp.pending_gate), "approval": cp.approval_id,
        "policy": cp.resume_policy, "schema": cp.schema_version, "depth": cp.depth, "hash": cp.content_hash,
        **lease_fence_params(lease_owner), "parent_hash": parent_hash, "run_task": run_task_id,
        **claim_params(claim),
        **caller_params(caller),
    }
    with prepared_cursor() as cursor:
        execute_claimed(cursor, _CHECKPOINT_SQL, params, claim)
        facts_ok, approval_ok, pk, created_at, run_rows = cursor.fetchone()
    if not approval_ok:
        raise NotFoundError(f"Approval {cp.approval_id} does not exist.")
    if not facts_ok:
        raise _FactsChanged
    if pk is None:  # the lease was not held: nothing was written
        return False
    cp.pk, cp.created_at = pk, created_at
    cp._state.adding = False
    cp._state.db = "default"
    return run_rows == 1 or cp.run_id is None


# --- a LangGraph thread's checkpoint (runs_app.services.threads) ---------------------------------------

# The API's reply to a stored thread checkpoint (runs_app.api.threads), recorded under a claimed
# Idempotency-Key by the statement that writes it (harness.http.idempotency.claim_sql); NULL when nothing was written.
_EXTERNAL_REPLY = """
SELECT jsonb_build_object('id', ins.id, 'run', (SELECT id FROM run), 'thread_id', %(thread)s::text,
                          'checkpoint_ns', %(ns)s::text, 'checkpoint_id', %(external_id)s::text,
                          'content_hash', ins.content_hash)
  FROM ins"""
_EXTERNAL_CHECKPOINT_SQL = """
-- One statement, as _CHECKPOINT_SQL: the thread's run (found by its ref) is locked and its lease checked
-- when an owner is named; the parent is found by its LangGraph id in the same run and namespace; the
-- content hash chains the parent's (sha256 of this checkpoint's canonical digest, ':' and the parent's
-- hash); a checkpoint id already stored in that run and namespace is not written again (ON CONFLICT).
-- The run's and its task's latest-checkpoint pointers follow the root graph (ns '') only.
WITH run AS (
    SELECT id, task_id, task_mode = 'langgraph' AS thread,
           """ + lease_fence_sql() + """ AS leased
      FROM runs_app_run
     WHERE project_id = %(project)s AND ref = %(thread)s::text AND ref <> ''
       FOR UPDATE
), parent AS (
    SELECT p.id, p.content_hash, p.depth FROM runs_app_checkpoint p
     WHERE p.run_id = (SELECT id FROM run) AND p.project_id = %(project)s AND p.ns = %(ns)s::text
       AND p.external_id = %(parent_ext)s::text
       AND p.external_id <> ''
), ins AS (
    INSERT INTO runs_app_checkpoint (project_id, run_id, task_id, parent_id, label, cursor, state,
        artifact_fingerprints, authority_ref, pending_gate, approval_id, resume_policy, schema_version, depth,
        content_hash, created_at, ns, external_id, parent_external_id, metadata)
    SELECT %(project)s, run.id, run.task_id, parent.id, %(label)s, %(cursor)s::json, %(state)s::json,
        '{}'::json, '', NULL, NULL, 'revalidate', 1, coalesce(parent.depth + 1, 0),
        encode(sha256(convert_to(%(digest)s::text || ':' || coalesce(parent.content_hash, ''), 'UTF8')), 'hex'),
        now(), %(ns)s::text, %(external_id)s::text, %(parent_ext)s::text, %(metadata)s::jsonb
      FROM run LEFT JOIN parent ON true
     WHERE run.leased AND run.thread
        ON CONFLICT (run_id, ns, external_id) WHERE external_id <> '' DO NOTHING
    RETURNING id, created_at, content_hash
), run_updated AS (
    UPDATE runs_app_run
       SET last_checkpoint_id = (SELECT id FROM ins), cursor = %(run_cursor)s::jsonb, version = version + 1,
           updated_at = now()
     WHERE id = (SELECT id FROM run) AND project_id = %(project)s AND %(ns)s::text = '' AND EXISTS (SELECT 1 FROM ins)
 RETURNING id
), task_updated AS (
    UPDATE runs_app_task SET latest_checkpoint_id = (SELECT id FROM ins), version = version + 1, updated_at = now()
     WHERE id = (SELECT task_id FROM run) AND project_id = %(project)s AND %(ns)s::text = ''
       AND EXISTS (SELECT 1 FROM ins)
 RETURNING id
), claim AS (""" + claim_sql(_EXTERNAL_REPLY) + """)
SELECT run.id, run.thread, run.leased, ins.id, ins.created_at, ins.content_hash
  FROM (SELECT 1) one LEFT JOIN run ON true LEFT JOIN ins ON true
"""  # noqa: S608 - the text put in is harness.http.idempotency's and this module's; every value is a bound parameter


class ExternalWrite(NamedTuple):
    """What the thread-checkpoint statement found and did."""

    run_id: int | None  # None: no run has this ref (the caller creates the thread, then writes again)
    thread: bool  # the run is a LangGraph thread's (task_mode "langgraph"): nothing is written to another run
    leased: bool
    checkpoint_id: int | None  # None with a leased run: that LangGraph id is already stored
    created_at: Any
    content_hash: str | None


def checkpoint_write_external(
    *, project_id: int, thread: str, ns: str, external_id: str, parent_external_id: str, label: str,
    cursor: dict[str, Any], state: dict[str, Any], metadata: dict[str, Any], body_digest: str,
    run_cursor: dict[str, Any], lease_owner: LeaseOwner = UNFENCED, claim: Claim | None = None,
) -> ExternalWrite:
    """Write one LangGraph checkpoint of the run whose ref is `thread`, in one fenced statement; with a `claim`
    (the API's Idempotency-Key) the same statement records the reply under the key, or raises KeyTaken."""
    params: dict[str, Any] = {
        "project": project_id, "thread": thread, "ns": ns, "external_id": external_id,
        "parent_ext": parent_external_id, "label": label, "cursor": dumps(cursor), "state": dumps(state),
        "metadata": json.dumps(metadata), "digest": body_digest, "run_cursor": json.dumps(run_cursor),
        **lease_fence_params(lease_owner), **claim_params(claim),
    }
    with prepared_cursor() as cur:
        execute_claimed(cur, _EXTERNAL_CHECKPOINT_SQL, params, claim)
        run_id, thread, leased, pk, created_at, content_hash = cur.fetchone()
    return ExternalWrite(run_id, bool(thread), bool(leased), pk, created_at, content_hash)
