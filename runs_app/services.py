"""Write operations on runs, events, tasks, checkpoints, approvals and external effects.

Every status change goes through `harness.transitions.cas_transition` with the machine declared in
`runs_app.models`; the API, the console, the admin and the resume worker all call these functions.
"""

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from harness.audit import audit_record
from harness.canonical import action_fingerprint, digest
from harness.db import fetch_instance, prepared_cursor, returning
from harness.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import ApiToken, Project
from harness.tenancy import Role, user_has_role
from harness.transitions import cas_transition, cas_transition_row
from runs_app.checkpoint_facts import Facts, checkpoint_facts, forget, remember_written
from runs_app.models import (
    APPROVAL_MACHINE,
    EFFECT_MACHINE,
    RUN_MACHINE,
    TASK_MACHINE,
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    EffectStatus,
    ExternalEffect,
    NodeExecution,
    Run,
    RunEvent,
    RunStatus,
    Task,
)
from sessions_app.models import Session

# Transitions that only the resume worker may make: a waiting run continues only after the
# worker has re-validated everything (DESIGN.md, "Resume").
WORKER_ONLY_TRANSITIONS = frozenset({(RunStatus.WAITING_APPROVAL, RunStatus.RUNNING)})


def _runs(project: Project | int) -> Any:
    return Run.objects.filter(project=project)


# --- runs ---------------------------------------------------------------------------------


def run_create(
    *,
    project: Project,
    session_id: int,
    task_id: int | None = None,
    ref: str = "",
    task_mode: str = "",
    active_agent: str = "",
    current_node: str = "",
    cursor: dict | None = None,
    deadline: dt.datetime | None = None,
    token_budget: int | None = None,
    cost_budget: Decimal | None = None,
) -> Run:
    with transaction.atomic():
        if not Session.objects.filter(project=project, pk=session_id).exists():
            raise NotFoundError(f"Session {session_id} does not exist.")
        if task_id is not None and not Task.objects.filter(project=project, pk=task_id).exists():
            raise NotFoundError(f"Task {task_id} does not exist.")
        run = Run.objects.create(
            project=project,
            session_id=session_id,
            task_id=task_id,
            ref=ref,
            task_mode=task_mode,
            active_agent=active_agent,
            current_node=current_node,
            cursor=cursor or {},
            deadline=deadline,
            token_budget=token_budget,
            cost_budget=cost_budget,
        )
        run_event_append(project=project, run_id=run.pk, kind="run.created", data={})
        return run


def run_transition(
    *,
    project: Project | int,
    run_id: int,
    to: str,
    expected_version: int | None,
    lease_owner: str | None = None,
    error: dict | None = None,
    blocked_step: str = "",
    by_worker: bool = False,
    updates: dict | None = None,
) -> Run:
    """Move a run through RUN_MACHINE with a compare-and-set on its version.

    1. Refuse worker-only transitions (waiting_approval -> running) unless the worker asks.
    2. One conditional UPDATE (status, version, and the lease owner when one is named).
    3. Append a `status.<to>` event in the same transaction.
    """
    if not by_worker:
        current = _runs(project).filter(pk=run_id).values_list("status", flat=True).first()
        if current is not None and (current, to) in WORKER_ONLY_TRANSITIONS:
            raise ConflictError(
                "A run waiting for approval continues only through the resume worker.",
                code="worker_only_transition",
                current_status=current,
            )
    fields: dict[str, Any] = dict(updates or {})
    if error is not None:
        fields["error"] = error
    if to == RunStatus.BLOCKED:
        fields["blocked_step"] = blocked_step or "unspecified"
    elif "blocked_step" not in fields:
        fields["blocked_step"] = ""
    if to in RUN_MACHINE.terminal:
        fields.update(lease_owner="", lease_expires_at=None)
    lease_guard = None
    if lease_owner is not None:
        lease_guard = Q(lease_owner=lease_owner, lease_expires_at__gt=timezone.now())
    # No savepoint: a refused compare-and-set wrote nothing, so its error leaves the block
    # clean (raised after it) and a caller's transaction goes on; inside one, this saves two round trips.
    refused: ConflictError | NotFoundError | None = None
    with transaction.atomic(savepoint=False):
        try:
            run = cas_transition_row(
                _runs(project),
                pk=run_id,
                machine=RUN_MACHINE,
                to=to,
                expected_version=expected_version,
                extra_filter=lease_guard,
                updates=fields,
            )
        except (ConflictError, NotFoundError) as exc:
            refused = exc
        else:
            data: dict[str, Any] = {}
            if error:
                data["error"] = error
            if to == RunStatus.BLOCKED:
                data["step"] = fields["blocked_step"]
            event = run_event_append(project=project, run_id=run_id, kind=f"status.{to}", data=data)
            run.last_event_seq = event.seq  # the event bumped it after the transition's RETURNING
    if refused is not None:
        raise refused
    return run


def run_claim(*, project: Project | int, run_id: int, owner: str, lease_seconds: int) -> Run:
    """Take the run's lease if it is free, expired, or already ours. Of racing claimers one wins.

    One conditional UPDATE decides; on PostgreSQL it returns the claimed row, so a claim is a single
    statement. Only a refused claim reads the row again, to say who holds it.
    """
    return _run_claim(project, run_id, owner=owner, lease_seconds=lease_seconds, count_attempt=False)


def run_claim_attempt(*, project: Project | int, run_id: int, owner: str, lease_seconds: int) -> Run:
    """`run_claim` for a resume attempt: the same claim, and `metrics.attempts` + 1 in the same write.

    On PostgreSQL the claim and the count are one statement, so an attempt is counted exactly when the
    lease is taken (a refused claim counts nothing).
    """
    return _run_claim(project, run_id, owner=owner, lease_seconds=lease_seconds, count_attempt=True)


def _run_claim(project: Project | int, run_id: int, *, owner: str, lease_seconds: int, count_attempt: bool) -> Run:
    if not owner or len(owner) > 200:
        raise ValidationFailed("A lease needs an owner of 1 to 200 characters.", code="invalid")
    if not 1 <= lease_seconds <= 3600:
        raise ValidationFailed("lease_seconds must be between 1 and 3600.", code="invalid")
    project_id = project if isinstance(project, int) else project.pk
    now = timezone.now()
    expires = now + dt.timedelta(seconds=lease_seconds)
    claimed = fetch_instance(Run, _CLAIM_ATTEMPT_SQL if count_attempt else _CLAIM_SQL, {
        "owner": owner, "expires": expires, "now": now, "rid": run_id, "pid": project_id,
        "terminal": list(RUN_MACHINE.terminal),
    })
    if claimed is not None:
        return claimed
    run = _runs(project_id).filter(pk=run_id).first()
    if run is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    if run.status in RUN_MACHINE.terminal:
        raise ConflictError(
            "A finished run cannot be claimed.", code="run_finished",
            current_status=run.status, current_version=run.version,
        )
    raise ConflictError(
        f"The run is leased by {run.lease_owner} until {run.lease_expires_at.isoformat()}.",
        code="lease_held",
        current_status=run.status,
        current_version=run.version,
        lease_owner=run.lease_owner,
    )


_CLAIM_SQL = """
UPDATE runs_app_run
   SET lease_owner = %(owner)s, lease_expires_at = %(expires)s, version = version + 1, updated_at = %(now)s
 WHERE id = %(rid)s AND project_id = %(pid)s AND status <> ALL(%(terminal)s)
   AND (lease_owner = '' OR lease_expires_at <= %(now)s OR lease_owner = %(owner)s)
""" + returning(Run) + """
"""
_CLAIM_ATTEMPT_SQL = _CLAIM_SQL.replace(
    "updated_at = %(now)s",
    "updated_at = %(now)s,\n       metrics = jsonb_set(metrics, '{attempts}', "
    "to_jsonb(COALESCE((metrics->>'attempts')::numeric::bigint, 0) + 1))",
)


def run_heartbeat(*, project: Project | int, run_id: int, owner: str, lease_seconds: int) -> Run:
    """Extend a lease we still hold; once it is lost (expired or taken) this fails."""
    now = timezone.now()
    expires = now + dt.timedelta(seconds=lease_seconds)
    # One statement: the renewed row comes back with the write; only a lost lease reads it again.
    renewed = fetch_instance(Run, _HEARTBEAT_SQL, {
        "expires": expires, "now": now, "rid": run_id, "owner": owner,
        "pid": project if isinstance(project, int) else project.pk,
    })
    if renewed is not None:
        return renewed
    run = _runs(project).filter(pk=run_id).first()
    if run is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    raise ConflictError(
        "The lease is lost.", code="lease_lost", current_status=run.status, current_version=run.version
    )


_HEARTBEAT_SQL = """
UPDATE runs_app_run SET lease_expires_at = %(expires)s, updated_at = %(now)s
 WHERE id = %(rid)s AND project_id = %(pid)s AND lease_owner = %(owner)s AND lease_expires_at > %(now)s
""" + returning(Run) + """
"""


def run_release(*, project: Project | int, run_id: int, owner: str) -> None:
    # Hand-written: compiling the ORM update was most of a release's CPU on the claim/release path.
    with prepared_cursor() as cursor:
        cursor.execute(_RELEASE_SQL, {"now": timezone.now(), "rid": run_id, "owner": owner,
                                      "pid": project if isinstance(project, int) else project.pk})


_RELEASE_SQL = """
UPDATE runs_app_run SET lease_owner = '', lease_expires_at = NULL, version = version + 1, updated_at = %(now)s
 WHERE id = %(rid)s AND project_id = %(pid)s AND lease_owner = %(owner)s
"""


def run_metrics_merge(
    *, project: Project | int, run_id: int, metrics: dict, increment: dict | None = None
) -> dict:
    """Merge keys into `Run.metrics` (and add to counters); returns the merged metrics."""
    if not increment:
        # A plain merge is one statement: jsonb `||` merges top-level keys as the dict merge below does.
        with prepared_cursor() as cursor:
            cursor.execute(_METRICS_MERGE_SQL, {"metrics": json.dumps(metrics), "now": timezone.now(), "rid": run_id,
                                                "pid": project if isinstance(project, int) else project.pk})
            row = cursor.fetchone()
        if row is None:
            raise NotFoundError(f"Run {run_id} does not exist.")
        return row[0] if isinstance(row[0], dict) else json.loads(row[0])
    with transaction.atomic():
        current = _runs(project).select_for_update().filter(pk=run_id).values_list("metrics", flat=True).first()
        if current is None:
            raise NotFoundError(f"Run {run_id} does not exist.")
        merged = {**(current or {}), **metrics}
        for key, amount in (increment or {}).items():
            merged[key] = int(merged.get(key) or 0) + amount
        _runs(project).filter(pk=run_id).update(metrics=merged, updated_at=timezone.now())
        return merged


_METRICS_MERGE_SQL = """
UPDATE runs_app_run SET metrics = metrics || %(metrics)s::jsonb, updated_at = %(now)s
 WHERE id = %(rid)s AND project_id = %(pid)s
RETURNING metrics
"""


def run_count_start(*, run_id: int, owner: str, statuses: tuple[str, ...]) -> Run | None:
    """Count one resume start (`metrics.starts` + 1) unless the run is not in `statuses` or another
    owner's lease on it is live; return the run (project, status, version, lease, metrics) or None.

    The resume worker knows only the run's id here: this runs before the run is loaded, so that a
    start that dies while loading is still counted. It is one conditional UPDATE.
    """
    now = timezone.now()
    return fetch_instance(Run, _COUNT_START_SQL, {
        "rid": run_id, "owner": owner, "now": now, "statuses": list(statuses),
    })


_COUNT_START_SQL = """
UPDATE runs_app_run
   SET metrics = jsonb_set(metrics, '{starts}', to_jsonb(COALESCE((metrics->>'starts')::numeric::bigint, 0) + 1)),
       updated_at = %(now)s
 WHERE id = %(rid)s AND status = ANY(%(statuses)s)
   AND NOT (lease_owner <> '' AND lease_owner <> %(owner)s AND lease_expires_at IS NOT NULL
            AND lease_expires_at > %(now)s)
RETURNING id, project_id, status, version, lease_owner, lease_expires_at, metrics
"""


def run_set_current_node(*, project: Project | int, run_id: int, owner: str, node: str) -> None:
    """Record the node the lease holder is working on; a lost lease refuses the write."""
    updated = _runs(project).filter(pk=run_id, lease_owner=owner, lease_expires_at__gt=timezone.now()).update(
        current_node=node, updated_at=timezone.now()
    )
    if not updated:
        raise ConflictError("The lease is lost.", code="lease_lost")


def run_record_usage(*, project: Project | int, run_id: int, tokens: int = 0, cost: Decimal = Decimal(0)) -> None:
    _runs(project).filter(pk=run_id).update(
        tokens_used=F("tokens_used") + tokens, cost_used=F("cost_used") + cost, updated_at=timezone.now()
    )


# --- run events ----------------------------------------------------------------------------

_EVENT_SQL = """
WITH bumped AS (
    UPDATE runs_app_run SET last_event_seq = last_event_seq + 1
     WHERE id = %(rid)s AND project_id = %(pid)s
 RETURNING last_event_seq
)
INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
SELECT %(rid)s, bumped.last_event_seq, %(kind)s, %(data)s::jsonb, now() FROM bumped
RETURNING id, seq, created_at
"""


def run_event_append(*, project: Project | int, run_id: int, kind: str, data: dict | None = None) -> RunEvent:
    """Append one event with the next gap-free seq (one statement)."""
    project_id = project if isinstance(project, int) else project.pk
    payload = data or {}
    if not kind or len(kind) > 64:
        raise ValidationFailed("An event kind is 1 to 64 characters.", code="invalid")
    # One statement is atomic by itself: no savepoint round trips when called inside a transaction.
    with prepared_cursor() as cursor:
        cursor.execute(_EVENT_SQL, {"rid": run_id, "pid": project_id, "kind": kind, "data": json.dumps(payload)})
        row = cursor.fetchone()
    if row is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    return RunEvent(id=row[0], run_id=run_id, seq=row[1], kind=kind, data=payload, created_at=row[2])


_EVENTS_SQL = """
WITH bumped AS (
    UPDATE runs_app_run SET last_event_seq = last_event_seq + %(n)s
     WHERE id = %(rid)s AND project_id = %(pid)s
 RETURNING last_event_seq - %(n)s AS base
)
INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
SELECT %(rid)s, bumped.base + e.ord, e.kind, e.data::jsonb, now()
  FROM bumped, unnest(%(kinds)s::text[], %(data)s::text[]) WITH ORDINALITY AS e(kind, data, ord)
RETURNING id, seq, created_at
"""


def run_events_append(
    *, project: Project | int, run_id: int, events: list[tuple[str, dict]]
) -> list[RunEvent]:
    """Append several events in order with the next gap-free seqs (one statement).

    The run's `last_event_seq` moves by n once and the n rows take the seqs after it, so a batch
    is one write where n `run_event_append` calls would be n.
    """
    project_id = project if isinstance(project, int) else project.pk
    if not events:
        return []
    if any(not kind or len(kind) > 64 for kind, _ in events):
        raise ValidationFailed("An event kind is 1 to 64 characters.", code="invalid")
    with prepared_cursor() as cursor:
        cursor.execute(_EVENTS_SQL, {
            "rid": run_id, "pid": project_id, "n": len(events), "kinds": [kind for kind, _ in events],
            "data": [json.dumps(data or {}) for _, data in events],
        })
        rows = sorted(cursor.fetchall(), key=lambda row: row[1])
    if not rows:
        raise NotFoundError(f"Run {run_id} does not exist.")
    return [RunEvent(id=pk, run_id=run_id, seq=seq, kind=kind, data=data or {}, created_at=created)
            for (pk, seq, created), (kind, data) in zip(rows, events, strict=True)]


# --- tasks ---------------------------------------------------------------------------------

TASK_CLIENT_FIELDS = (
    "objective", "constraints", "plan", "plan_version", "completed_nodes", "pending_nodes",
    "artifact_refs", "effect_records", "schema_version",
)


def task_create(*, project: Project, objective: str, ref: str = "", **fields: Any) -> Task:
    unknown = set(fields) - set(TASK_CLIENT_FIELDS)
    if unknown:
        raise ValidationFailed(f"Unknown task fields: {sorted(unknown)}.", code="invalid")
    if "pending_nodes" not in fields and "plan" in fields:
        fields["pending_nodes"] = list(fields["plan"])
    return Task.objects.create(project=project, objective=objective, ref=ref, **fields)


def task_save(*, project: Project | int, task_id: int, expected_version: int, **fields: Any) -> Task:
    """Save a task's durable state with a compare-and-set on its version (one UPDATE)."""
    unknown = set(fields) - set(TASK_CLIENT_FIELDS)
    if unknown:
        raise ValidationFailed(f"Unknown task fields: {sorted(unknown)}.", code="invalid")
    tasks = Task.objects.filter(project=project)
    updated = tasks.filter(pk=task_id, version=expected_version).update(
        **fields, version=F("version") + 1, updated_at=timezone.now()
    )
    if not updated:
        current = tasks.filter(pk=task_id).values("status", "version").first()
        if current is None:
            raise NotFoundError(f"Task {task_id} does not exist.")
        raise ConflictError(
            f"Task {task_id} is at version {current['version']}, not {expected_version}.",
            code="version_conflict",
            current_status=current["status"],
            current_version=current["version"],
        )
    return tasks.get(pk=task_id)


def task_transition(*, project: Project | int, task_id: int, to: str, expected_version: int | None) -> Task:
    return cas_transition_row(Task.objects.filter(project=project), pk=task_id, machine=TASK_MACHINE, to=to,
                              expected_version=expected_version)


# --- checkpoints ---------------------------------------------------------------------------


def checkpoint_create(
    *,
    project: Project | int,
    run_id: int | None = None,
    task_id: int | None = None,
    parent_id: int | None = None,
    label: str = "",
    cursor: dict | None = None,
    state: dict | None = None,
    artifact_fingerprints: dict | None = None,
    authority_ref: str = "",
    pending_gate: Any = None,
    approval_id: int | None = None,
    resume_policy: str = "revalidate",
    schema_version: int = 1,
    lease_owner: str | None = None,
) -> Checkpoint:
    """Write an immutable checkpoint and make it the latest of its run and task.

    1. Resolve the owner(s): a run (its task comes along) and/or a task, all in this project.
    2. The parent must belong to the same run or the same task lineage.
    3. Hash the canonical content, including the parent's hash, so a chain is tamper-evident.
    4. Insert it and point the run's `last_checkpoint` and the task's `latest_checkpoint` at it, in
       one statement. When a lease owner is named, that statement writes only while
       the lease is held (checked on the locked run row); if it is not, nothing is written (a stale
       worker is fenced off and cannot fork the chain).
    """
    project_id = project if isinstance(project, int) else project.pk
    if run_id is None and task_id is None:
        raise ValidationFailed("A checkpoint belongs to a run, a task, or both.", code="checkpoint_owner_required")
    fields: dict[str, Any] = {
        "label": label, "cursor": cursor, "state": state, "artifact_fingerprints": artifact_fingerprints,
        "authority_ref": authority_ref, "pending_gate": pending_gate, "approval_id": approval_id,
        "resume_policy": resume_policy, "schema_version": schema_version, "lease_owner": lease_owner,
    }
    # The write is one statement (atomic by itself, fenced on the lease inside it), and
    # the reads before it see only facts that never change (a run's project and task, an append-only
    # parent checkpoint): no BEGIN/COMMIT round trips around them on the hot path.
    return _checkpoint_create(project_id, run_id, task_id, parent_id, fields)


def _checkpoint_create(
    project_id: int, run_id: int | None, task_id: int | None, parent_id: int | None, fields: dict[str, Any]
) -> Checkpoint:
    """Write with the facts this process remembers (runs_app.checkpoint_facts), or reads them first."""
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
    cursor: dict | None, state: dict | None, artifact_fingerprints: dict | None, authority_ref: str,
    pending_gate: Any, approval_id: int | None, resume_policy: str, schema_version: int, lease_owner: str | None,
) -> Checkpoint:
    run_found, run_task_id, parent_hash, parent_depth, parent_run, parent_task, parent_found = facts
    if run_id is not None:
        if not run_found:
            raise NotFoundError(f"Run {run_id} does not exist.")
        if task_id is None:
            task_id = run_task_id
        elif run_task_id not in (None, task_id):
            raise ValidationFailed("The run belongs to another task.", code="task_mismatch")
    if task_id is not None and (run_id is None or task_id != run_task_id):
        if not Task.objects.filter(project_id=project_id, pk=task_id).exists():
            raise NotFoundError(f"Task {task_id} does not exist.")
    depth = 0
    if parent_id is not None:
        if not parent_found:
            raise NotFoundError(f"Checkpoint {parent_id} does not exist.")
        same_run = run_id is not None and parent_run == run_id
        same_task = task_id is not None and parent_task == task_id
        if not (same_run or same_task):
            raise ValidationFailed(
                "The parent checkpoint is not in this run's or task's lineage.", code="parent_not_in_lineage"
            )
        assert parent_depth is not None
        depth = parent_depth + 1
    if approval_id is not None and not ApprovalRequest.objects.filter(project_id=project_id, pk=approval_id).exists():
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    body = {
        "run": run_id, "task": task_id, "parent_hash": parent_hash,
        "cursor": cursor or {}, "state": state or {}, "artifact_fingerprints": artifact_fingerprints or {},
        "authority_ref": authority_ref, "pending_gate": pending_gate, "approval": approval_id,
        "resume_policy": resume_policy, "schema_version": schema_version,
    }
    checkpoint = Checkpoint(
        project_id=project_id, run_id=run_id, task_id=task_id, parent_id=parent_id, label=label,
        cursor=body["cursor"], state=body["state"], artifact_fingerprints=body["artifact_fingerprints"],
        authority_ref=authority_ref, pending_gate=pending_gate, approval_id=approval_id,
        resume_policy=resume_policy, schema_version=schema_version, depth=depth, content_hash=digest(body),
    )
    run_updated = _checkpoint_insert(checkpoint, lease_owner, parent_hash, run_task_id)
    if run_id is not None and not run_updated:
        current = Run.objects.filter(pk=run_id).values("status", "version").get()
        raise ConflictError(
            "The lease is lost; this checkpoint is refused.", code="lease_lost",
            current_status=current["status"], current_version=current["version"],
        )
    remember_written(checkpoint)
    return checkpoint


_CHECKPOINT_SQL = """
-- One statement: the facts the hash was computed from are checked (the parent is this project's
-- checkpoint with this hash, the run is this project's with this task), the run's row is locked and
-- its lease checked; unless all hold nothing is inserted (no transaction around it has to roll a
-- checkpoint back).
WITH facts AS (
    SELECT (%(parent)s::bigint IS NULL OR EXISTS (
               SELECT 1 FROM runs_app_checkpoint p
                WHERE p.id = %(parent)s AND p.project_id = %(project)s AND p.content_hash = %(parent_hash)s))
       AND (%(run)s::bigint IS NULL OR EXISTS (
               SELECT 1 FROM runs_app_run r
                WHERE r.id = %(run)s AND r.project_id = %(project)s
                  AND r.task_id IS NOT DISTINCT FROM %(run_task)s::bigint)) AS ok
), fence AS (
    SELECT id FROM runs_app_run
     WHERE id = %(run)s
       AND (%(owner)s::text IS NULL OR (lease_owner = %(owner)s::text AND lease_expires_at > now()))
       FOR UPDATE
), ins AS (
    INSERT INTO runs_app_checkpoint (project_id, run_id, task_id, parent_id, label, cursor, state,
        artifact_fingerprints, authority_ref, pending_gate, approval_id, resume_policy, schema_version, depth,
        content_hash, created_at)
    SELECT %(project)s, %(run)s, %(task)s, %(parent)s, %(label)s, %(cursor)s::jsonb, %(state)s::jsonb,
        %(fingerprints)s::jsonb, %(authority)s, %(gate)s::jsonb, %(approval)s, %(policy)s, %(schema)s, %(depth)s,
        %(hash)s, now()
     WHERE (SELECT ok FROM facts) AND (%(run)s::bigint IS NULL OR EXISTS (SELECT 1 FROM fence))
    RETURNING id, created_at
), run_updated AS (
    UPDATE runs_app_run
       SET last_checkpoint_id = (SELECT id FROM ins), cursor = %(cursor)s::jsonb, version = version + 1,
           updated_at = now()
     WHERE id = (SELECT id FROM fence) AND EXISTS (SELECT 1 FROM ins)
 RETURNING id
), task_updated AS (
    UPDATE runs_app_task SET latest_checkpoint_id = (SELECT id FROM ins), version = version + 1, updated_at = now()
     WHERE id = %(task)s AND EXISTS (SELECT 1 FROM ins)
 RETURNING id
)
SELECT facts.ok, ins.id, ins.created_at, (SELECT count(*) FROM run_updated) FROM facts LEFT JOIN ins ON true
"""


def _checkpoint_insert(
    cp: Checkpoint, lease_owner: str | None, parent_hash: str | None, run_task_id: int | None
) -> bool:
    params = {
        "project": cp.project_id, "run": cp.run_id, "task": cp.task_id, "parent": cp.parent_id, "label": cp.label,
        "cursor": json.dumps(cp.cursor), "state": json.dumps(cp.state),
        "fingerprints": json.dumps(cp.artifact_fingerprints), "authority": cp.authority_ref,
        "gate": None if cp.pending_gate is None else json.dumps(cp.pending_gate), "approval": cp.approval_id,
        "policy": cp.resume_policy, "schema": cp.schema_version, "depth": cp.depth, "hash": cp.content_hash,
        "owner": lease_owner, "parent_hash": parent_hash, "run_task": run_task_id,
    }
    with prepared_cursor() as cursor:
        cursor.execute(_CHECKPOINT_SQL, params)
        facts_ok, pk, created_at, run_rows = cursor.fetchone()
    if not facts_ok:
        raise _FactsChanged
    if pk is None:  # the lease was not held: nothing was written
        return False
    cp.pk, cp.created_at = pk, created_at
    cp._state.adding = False
    cp._state.db = "default"
    return run_rows == 1 or cp.run_id is None


# --- approvals -----------------------------------------------------------------------------


def approval_request_create(
    *,
    project: Project,
    run_id: int,
    tool: str,
    arguments: dict,
    idempotency_key: str,
    risk: str = "high",
    reason: str = "",
    requested_by: str,
    requested_by_token: ApiToken | None = None,
    expected_version: int | None = None,
    expires_at: dt.datetime | None = None,
) -> ApprovalRequest:
    """Post a pending action and move its run to waiting_approval in the same transaction."""
    if not tool or not idempotency_key:
        raise ValidationFailed("An approval needs a tool and an idempotency key.", code="invalid")
    with transaction.atomic():
        run = _runs(project).filter(pk=run_id).first()
        if run is None:
            raise NotFoundError(f"Run {run_id} does not exist.")
        try:
            with transaction.atomic():
                approval = ApprovalRequest.objects.create(
                    project=project, run=run, tool=tool, arguments=arguments,
                    action_fingerprint=action_fingerprint(tool, arguments), risk=risk,
                    idempotency_key=idempotency_key, reason=reason, requested_by=requested_by,
                    requested_by_token=requested_by_token, expires_at=expires_at,
                )
        except IntegrityError:
            raise ConflictError(
                "This run already has a pending approval.", code="approval_pending",
                current_status=run.status, current_version=run.version,
            ) from None
        run_transition(
            project=project, run_id=run_id, to=RunStatus.WAITING_APPROVAL, expected_version=expected_version,
            updates={"pending_approval": approval},
        )
        run_event_append(
            project=project, run_id=run_id, kind="approval.requested",
            data={"approval": approval.pk, "tool": tool, "fingerprint": approval.action_fingerprint},
        )
        return approval


@dataclass(frozen=True)
class Decision:
    APPROVE = "approve"
    REJECT = "reject"


def approval_decide(
    *,
    project: Project | int,
    approval_id: int,
    user: AbstractBaseUser | AnonymousUser,
    decision: str,
    reason: str = "",
    edited_arguments: dict | None = None,
    expected_version: int | None = None,
) -> ApprovalRequest:
    """Record a reviewer's final decision and queue the run's resume.

    1. Only a reviewer who can see the project may decide; never the person who asked.
    2. Rejection needs a reason. Edit-and-approve records the edited arguments and their new
       fingerprint; plain approval records the requested action's fingerprint.
    3. One conditional UPDATE from pending: of two reviewers deciding at once, one stands and the
       other gets a conflict that names who decided.
    4. Audit the decision and enqueue the resume after commit (a rejection resumes the run too).
    """
    from harness.tenancy import user_can_see_project

    project_id = project if isinstance(project, int) else project.pk
    approvals = ApprovalRequest.objects.filter(project_id=project_id)
    approval = approvals.filter(pk=approval_id).first()
    if approval is None or not user_can_see_project(user, project_id):
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    if not user_has_role(user, Role.REVIEWER):
        raise Forbidden("Only reviewers decide approvals.", code="not_a_reviewer")
    if approval.requested_by == f"user:{user.pk}":
        raise Forbidden("Nobody approves their own request.", code="self_approval")
    if decision not in (Decision.APPROVE, Decision.REJECT):
        raise ValidationFailed("decision is 'approve' or 'reject'.", code="invalid")
    now = timezone.now()
    updates: dict[str, Any] = {"decided_by": user, "decided_at": now, "decision_reason": reason.strip()}
    if decision == Decision.REJECT:
        if not reason.strip():
            raise ValidationFailed("A rejection needs a reason.", code="reason_required")
        to = ApprovalStatus.REJECTED
    else:
        to = ApprovalStatus.APPROVED
        arguments = approval.arguments if edited_arguments is None else edited_arguments
        updates["approved_arguments"] = arguments
        updates["approved_fingerprint"] = action_fingerprint(approval.tool, arguments)
    if approval.expires_at and approval.expires_at <= now and approval.status == ApprovalStatus.PENDING:
        raise ConflictError("This approval has expired.", code="approval_expired", current_status="pending")
    with transaction.atomic():
        try:
            approval = cas_transition_row(
                approvals, pk=approval_id, machine=APPROVAL_MACHINE, to=to,
                expected_version=expected_version, updates=updates,
            )
        except ConflictError as exc:
            current = approvals.select_related("decided_by").get(pk=approval_id)
            if current.decided_by is not None:
                exc.extra["decided_by"] = current.decided_by.get_username()
                exc.extra["decided_at"] = current.decided_at.isoformat() if current.decided_at else None
                exc.detail = f"Already {current.status} by {current.decided_by.get_username()}."
                exc.code = "already_decided"
            raise
        audit_record(
            project=project_id, actor=f"user:{user.get_username()}", action=f"approval.{to}", target=approval,
            data={
                "reason": approval.decision_reason,
                "requested_fingerprint": approval.action_fingerprint,
                "approved_fingerprint": approval.approved_fingerprint,
                "edited": edited_arguments is not None,
            },
        )
        run_event_append(
            project=project_id, run_id=approval.run_id, kind=f"approval.{to}",
            data={"approval": approval.pk, "by": user.get_username(), "fingerprint": approval.approved_fingerprint},
        )
        _enqueue_resume(approval.run_id)
        return approval


def approval_expire_due(*, now: dt.datetime | None = None) -> list[int]:
    """Expire pending approvals past their deadline; their runs resume into `blocked`/`failed`."""
    now = now or timezone.now()
    expired: list[int] = []
    for approval_id, project_id, run_id in ApprovalRequest.objects.filter(
        status=ApprovalStatus.PENDING, expires_at__lte=now
    ).values_list("pk", "project_id", "run_id"):
        with transaction.atomic():
            try:
                cas_transition(
                    ApprovalRequest.objects.filter(project_id=project_id), pk=approval_id,
                    machine=APPROVAL_MACHINE, to=ApprovalStatus.EXPIRED, expected_version=None,
                )
            except ConflictError:
                continue
            run_event_append(project=project_id, run_id=run_id, kind="approval.expired", data={"approval": approval_id})
            _enqueue_resume(run_id)
            expired.append(approval_id)
    return expired


def _enqueue_resume(run_id: int) -> None:
    """Queue the resume once the transaction commits; the recovery pass catches a lost message."""
    from runs_app import tasks

    transaction.on_commit(lambda: tasks.enqueue_resume(run_id))


# --- external effects ----------------------------------------------------------------------


def effect_intend(
    *,
    project: Project | int,
    idempotency_key: str,
    tool: str,
    arguments: Any = None,
    run_id: int | None = None,
    approval_id: int | None = None,
) -> tuple[ExternalEffect, bool]:
    """Record the intent to cause an effect. The same key again returns the first record."""
    project_id = project if isinstance(project, int) else project.pk
    if not idempotency_key or len(idempotency_key) > 200:
        raise ValidationFailed("An idempotency key is 1 to 200 characters.", code="invalid")
    arguments_digest = digest(arguments) if arguments is not None else ""
    # The first intent is one statement (the run and approval checked in this project inside it);
    # a key seen before, or a missing run or approval, takes the path below to say which.
    created = fetch_instance(ExternalEffect, _INTEND_SQL, {
        "pid": project_id, "key": idempotency_key, "tool": tool, "digest": arguments_digest, "run": run_id,
        "approval": approval_id, "status": EffectStatus.INTENDED, "now": timezone.now(),
    })
    if created is not None:
        return created, True
    if run_id is not None and not _runs(project_id).filter(pk=run_id).exists():
        raise NotFoundError(f"Run {run_id} does not exist.")
    if approval_id is not None and not ApprovalRequest.objects.filter(project_id=project_id, pk=approval_id).exists():
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    effects = ExternalEffect.objects.filter(project_id=project_id)
    try:
        with transaction.atomic():
            effect = ExternalEffect.objects.create(
                project_id=project_id, idempotency_key=idempotency_key, tool=tool,
                arguments_digest=arguments_digest, run_id=run_id, approval_id=approval_id,
            )
            return effect, True
    except IntegrityError:
        effect = effects.get(idempotency_key=idempotency_key)
        if (effect.tool, effect.arguments_digest) != (tool, arguments_digest):
            raise ConflictError(
                "This idempotency key already names a different action.",
                code="idempotency_key_reused", current_status=effect.status, current_version=effect.version,
            ) from None
        return effect, False


_INTEND_SQL = """
INSERT INTO runs_app_externaleffect (project_id, idempotency_key, tool, arguments_digest, run_id, approval_id, status,
    version, attempts, result, result_hash, conflicting_hash, receipt, created_at, updated_at)
SELECT %(pid)s, %(key)s, %(tool)s, %(digest)s, %(run)s, %(approval)s, %(status)s, 1, 0, NULL, '', '', '', %(now)s,
       %(now)s
 WHERE (%(run)s::bigint IS NULL OR EXISTS (SELECT 1 FROM runs_app_run WHERE id = %(run)s AND project_id = %(pid)s))
   AND (%(approval)s::bigint IS NULL
        OR EXISTS (SELECT 1 FROM runs_app_approvalrequest WHERE id = %(approval)s AND project_id = %(pid)s))
ON CONFLICT (project_id, idempotency_key) DO NOTHING
""" + returning(ExternalEffect) + """
"""


def effect_dispatch(*, project: Project | int, effect_id: int) -> ExternalEffect:
    """Mark the call as about to leave (attempts + 1) before it leaves: a crash after this is `unknown`.

    One statement on PostgreSQL: the transition's UPDATE returns the dispatched row.
    """
    return cas_transition_row(
        ExternalEffect.objects.filter(project=project), pk=effect_id, machine=EFFECT_MACHINE,
        to=EffectStatus.DISPATCHED, expected_version=None,
        updates={"attempts": F("attempts") + 1, "dispatched_at": timezone.now()},
    )


def effect_mark_unknown(*, project: Project | int, effect_id: int) -> ExternalEffect:
    return cas_transition_row(ExternalEffect.objects.filter(project=project), pk=effect_id, machine=EFFECT_MACHINE,
                              to=EffectStatus.UNKNOWN, expected_version=None)


@dataclass(frozen=True)
class Delivery:
    """What a delivery came to: `consumed` (first time), `already_consumed`, or `conflict`."""

    outcome: str
    effect: ExternalEffect

    @property
    def receipt(self) -> str:
        return self.effect.receipt


def effect_deliver(
    *,
    project: Project | int,
    idempotency_key: str,
    result: Any,
    result_hash: str | None = None,
    consume: bool = True,
) -> Delivery:
    """Deliver an effect's result, validate it, and (by default) consume it once.

    1. The server hashes the canonical result; a client-sent hash must match it.
    2. First delivery: intended/dispatched/unknown -> delivered, then -> consumed with a receipt.
    3. The same hash again: `already_consumed`, with the original receipt; nothing changes.
    4. A different hash for the same key is a hard stop: the effect becomes `conflict`, its run
       `blocked`, and both stay that way after this returns (committed, not rolled back).
    """
    project_id = project if isinstance(project, int) else project.pk
    computed = digest(result)
    if result_hash is not None and result_hash != computed:
        raise ValidationFailed(
            "result_hash is not the SHA-256 of the result's canonical JSON.", code="result_hash_mismatch",
            expected_hash=computed,
        )
    effects = ExternalEffect.objects.filter(project_id=project_id)
    fast = _effect_deliver_fast(project_id, idempotency_key, result, computed, consume=consume)
    if fast is not None:
        return fast
    with transaction.atomic():
        effect = effects.select_for_update().filter(idempotency_key=idempotency_key).first()
        if effect is None:
            raise NotFoundError(f"No effect has the idempotency key {idempotency_key!r}.")
        if effect.result_hash and effect.result_hash != computed:
            return _effect_conflict(project_id, effect, computed)
        if effect.status == EffectStatus.CONFLICT:
            return Delivery("conflict", effect)
        if effect.status == EffectStatus.CONSUMED or (effect.status == EffectStatus.DELIVERED and not consume):
            outcome = "already_consumed" if effect.status == EffectStatus.CONSUMED else "already_delivered"
            return Delivery(outcome, effect)
        now = timezone.now()
        if effect.status != EffectStatus.DELIVERED:
            if effect.status == EffectStatus.INTENDED:
                effect = cas_transition_row(
                    effects, pk=effect.pk, machine=EFFECT_MACHINE, to=EffectStatus.DISPATCHED,
                    expected_version=effect.version, updates={"dispatched_at": now, "attempts": F("attempts") + 1},
                )
            effect = cas_transition_row(
                effects, pk=effect.pk, machine=EFFECT_MACHINE, to=EffectStatus.DELIVERED,
                expected_version=effect.version,
                updates={"result": result, "result_hash": computed, "delivered_at": now},
            )
        if consume:
            effect = cas_transition_row(
                effects, pk=effect.pk, machine=EFFECT_MACHINE, to=EffectStatus.CONSUMED,
                expected_version=effect.version, updates={"receipt": uuid.uuid4().hex, "consumed_at": now},
            )
        if effect.run_id:
            run_event_append(
                project=project_id, run_id=effect.run_id, kind=f"effect.{effect.status}",
                data={"key": idempotency_key, "result_hash": computed, "receipt": effect.receipt},
            )
        return Delivery("consumed" if consume else "delivered", effect)


_DELIVER_SQL = """
UPDATE runs_app_externaleffect
   SET status = %(delivered)s, version = version + 1, result = %(result)s::jsonb, result_hash = %(hash)s,
       delivered_at = %(now)s, updated_at = %(now)s
 WHERE project_id = %(pid)s AND idempotency_key = %(key)s AND status = ANY(%(sources)s) AND result_hash = ''
""" + returning(ExternalEffect) + """
"""
_CONSUME_SQL = """
UPDATE runs_app_externaleffect
   SET status = %(consumed)s, version = version + 1, receipt = %(receipt)s, consumed_at = %(now)s,
       updated_at = %(now)s
 WHERE project_id = %(pid)s AND idempotency_key = %(key)s AND status = %(delivered)s AND result_hash = %(hash)s
""" + returning(ExternalEffect) + """
"""


def _effect_deliver_fast(
    project_id: int, idempotency_key: str, result: Any, computed: str, *, consume: bool
) -> Delivery | None:
    """The two usual deliveries as one conditional UPDATE each (plus the event), or None for the rest.

    A dispatched (or unknown) effect delivered without consuming, and a delivered effect consumed with
    the result it holds: the row's status and hash are the guard, as `cas_transition`'s sources are.
    Anything else (a first delivery that also consumes, a repeat, a different hash) returns None and
    takes the locked path in `effect_deliver`, which says what it came to.
    """
    now = timezone.now()
    params = {"pid": project_id, "key": idempotency_key, "hash": computed, "now": now,
              "delivered": EffectStatus.DELIVERED, "consumed": EffectStatus.CONSUMED}
    if consume:
        sql, params["receipt"] = _CONSUME_SQL, uuid.uuid4().hex
    else:
        sql, params["result"] = _DELIVER_SQL, json.dumps(result)
        params["sources"] = sorted(EFFECT_MACHINE.sources_of(EffectStatus.DELIVERED) - {EffectStatus.INTENDED})
    # No savepoint: a conditional UPDATE that matches nothing changes nothing, and the fallback says why.
    with transaction.atomic(savepoint=False):
        effect = fetch_instance(ExternalEffect, sql, params)
        if effect is None:
            return None
        if effect.run_id:
            run_event_append(
                project=project_id, run_id=effect.run_id, kind=f"effect.{effect.status}",
                data={"key": idempotency_key, "result_hash": computed, "receipt": effect.receipt},
            )
    return Delivery("consumed" if consume else "delivered", effect)


def _effect_conflict(project_id: int, effect: ExternalEffect, computed: str) -> Delivery:
    effects = ExternalEffect.objects.filter(project_id=project_id)
    if effect.status != EffectStatus.CONFLICT:
        cas_transition(
            effects, pk=effect.pk, machine=EFFECT_MACHINE, to=EffectStatus.CONFLICT,
            expected_version=effect.version, updates={"conflicting_hash": computed},
        )
    if effect.run_id:
        run = Run.objects.filter(pk=effect.run_id).values("status", "version").first()
        if run and RUN_MACHINE.can(run["status"], RunStatus.BLOCKED):
            run_transition(
                project=project_id, run_id=effect.run_id, to=RunStatus.BLOCKED, expected_version=None,
                blocked_step="effect_conflict", by_worker=True,
                error={"step": "effect_conflict", "key": effect.idempotency_key,
                       "result_hash": effect.result_hash, "conflicting_hash": computed},
            )
    return Delivery("conflict", effects.get(pk=effect.pk))


# --- node executions -----------------------------------------------------------------------


def node_execution_start(*, run: Run, node: str) -> NodeExecution:
    attempt = NodeExecution.objects.filter(run=run, node=node).count() + 1
    return NodeExecution.objects.create(run=run, task_id=run.task_id, node=node, attempt=attempt)


def node_execution_finish(
    *, execution: NodeExecution, ok: bool, output: Any = None, error: str = "", checkpoint: Checkpoint | None = None
) -> None:
    NodeExecution.objects.filter(pk=execution.pk).update(
        status=NodeExecution.Status.SUCCEEDED if ok else NodeExecution.Status.FAILED,
        output=output, error=error, checkpoint=checkpoint, finished_at=timezone.now(),
    )
