"""Forks (issue 20, part 3): a new run that starts from any checkpoint, optionally with edited state.

The fork is a new run (in the source run's session, another session of the project, or a new session made
like the source's) whose first checkpoint copies the source checkpoint (cursor, artifact fingerprints, pending
gate, authority, policy, schema) with the state as given, and whose `parent` is the source checkpoint: the
lineage pages draw the branch, across runs. Who forked, why, and what changed (`state_diff`) are recorded three
times, in the same transaction: a `run.forked` event on the new run, a `run.fork_made` event on the source run
and a `checkpoint.forked` audit entry.

Side effects across forks (docs/concepts/effects.md): an idempotency key names a logical effect, not a
run, so a fork that reaches the same action asks under the same key. Same tool and arguments under a key whose
effect was delivered or consumed: the stored result is bound (the worker's consume-once check), never a second
call. Changed arguments under that key are refused (409 `idempotency_key_reused`, runs_app.services.approvals):
a changed action is a new effect, asked under a new key, and needs a new approval.
"""

from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, NotFoundError, ValidationFailed
from harness.imports import imported_ids
from harness.models import Project
from runs_app.models import Checkpoint, Run
from runs_app.services.checkpoints import APPROVAL_AUTHORITY, checkpoint_create
from runs_app.services.runs import run_create, run_event_append

MAX_REASON_CHARS = 2000
# A LangGraph thread is a run found by its ref (runs_app.services.threads); a fork is the service's own run.
_THREAD_MODE = "langgraph"


@dataclass(frozen=True)
class Fork:
    run: Run
    checkpoint: Checkpoint
    source: Checkpoint
    diff: dict[str, Any]


def state_diff(old: Any, new: Any) -> dict[str, Any]:
    """What changed from `old` to `new`: {"added": {path: value}, "removed": {path: value}, "changed": {path:
    {"from", "to"}}}, paths as "a/b" (objects are walked key by key; any other value is compared whole)."""
    diff: dict[str, dict[str, Any]] = {"added": {}, "removed": {}, "changed": {}}

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                sub = f"{path}/{key}" if path else str(key)
                if key not in b:
                    diff["removed"][sub] = a[key]
                elif key not in a:
                    diff["added"][sub] = b[key]
                else:
                    walk(a[key], b[key], sub)
        elif a != b or type(a) is not type(b):
            diff["changed"][path or "/"] = {"from": a, "to": b}

    walk(old, new, "")
    return diff


def diff_is_empty(diff: dict[str, Any]) -> bool:
    return not (diff["added"] or diff["removed"] or diff["changed"])


def checkpoint_fork(
    *,
    project: Project,
    checkpoint_id: int,
    actor: Actor,
    reason: str,
    state: dict[str, Any] | None = None,
    session_id: int | None = None,
    new_session: bool = False,
    ref: str = "",
) -> Fork:
    """Fork a new run from checkpoint `checkpoint_id`.

    1. The source is a checkpoint of this project that belongs to a run (404 otherwise; 409
       `checkpoint_has_no_run` for a task's own checkpoint). A reason is required.
    2. The session: `session_id`, or a new one made like the source run's session (`new_session`), or the
       source run's own.
    3. Create the run (its task, agent, node and cursor from the source), then its first checkpoint: the
       source's content with `state` (when given) in place of the source's state, parent = the source.
    4. Record who, why and the diff: `run.forked` on the new run, `run.fork_made` on the source run, and the
       audit entry `checkpoint.forked`. All in one transaction.
    """
    reason = reason.strip()
    if not reason or len(reason) > MAX_REASON_CHARS:
        raise ValidationFailed(f"A fork says why (1 to {MAX_REASON_CHARS} characters).", code="reason_required")
    if state is not None and not isinstance(state, dict):
        raise ValidationFailed("The edited state is a JSON object.", code="invalid_state")
    if new_session and session_id is not None:
        raise ValidationFailed("Name a session or ask for a new one, not both.", code="invalid")
    with transaction.atomic():
        source = (Checkpoint.objects.filter(project=project, pk=checkpoint_id)
                  .select_related("run", "run__session").first())
        if source is None:
            raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
        if source.run is None:
            raise ConflictError("Only a run's checkpoint can be forked into a new run.",
                                code="checkpoint_has_no_run")
        origin: Run = source.run
        if new_session:
            from sessions_app.services import session_create

            model = origin.session
            session_id = session_create(
                project=project, role=model.role, memory_policy=model.memory_policy,
                context_budget_chars=model.context_budget_chars, context_items=model.context_items,
                metadata={"forked_from_checkpoint": source.pk, "forked_from_session": model.pk},
            ).pk
        target_session = session_id if session_id is not None else origin.session_id
        task_id = source.task_id or origin.task_id
        if task_id is not None and imported_ids("task").filter(local_id=task_id).exists():
            task_id = None  # an imported task is read-only (bundles_app): the fork is a run of its own
        edited = state is not None
        new_state = state if edited else source.state
        diff = state_diff(source.state, new_state)
        run = run_create(
            project=project, session_id=target_session, task_id=task_id, ref=ref,
            task_mode="" if origin.task_mode == _THREAD_MODE else origin.task_mode,
            active_agent=origin.active_agent, current_node=origin.current_node,
            cursor=source.cursor,
        )
        checkpoint = checkpoint_create(
            project=project, run_id=run.pk, parent_id=source.pk, label=f"fork of {source}"[:120],
            cursor=source.cursor, state=new_state, artifact_fingerprints=source.artifact_fingerprints,
            # An approval's authority is its run's: the fork does not claim it (worker.checks.check_checkpoint).
            authority_ref="" if source.authority_ref.startswith(APPROVAL_AUTHORITY) else source.authority_ref,
            pending_gate=source.pending_gate,
            resume_policy=source.resume_policy, schema_version=source.schema_version, forked=True,
        )
        record = {"from_checkpoint": source.pk, "from_run": origin.pk, "by": actor.label, "reason": reason,
                  "edited": edited and not diff_is_empty(diff), "diff": diff, "session": target_session,
                  "new_session": new_session}
        run_event_append(project=project, run_id=run.pk, kind="run.forked",
                         data={**record, "checkpoint": checkpoint.pk})
        run_event_append(project=project, run_id=origin.pk, kind="run.fork_made",
                         data={"checkpoint": source.pk, "to_run": run.pk, "to_checkpoint": checkpoint.pk,
                               "by": actor.label, "reason": reason})
        audit_record(project=project, actor=actor, action="checkpoint.forked", target=source,
                     data={**record, "to_run": run.pk, "to_checkpoint": checkpoint.pk})
        return Fork(run=Run.objects.get(pk=run.pk), checkpoint=checkpoint, source=source, diff=diff)


# The runs a run was forked from, directly or through other forks, as the audit log records each fork
# (`checkpoint.forked`: from_run -> to_run). The audit log, not the checkpoints' parents: a run of the same task
# continues the task's checkpoint chain without being a fork, and not the run's events: an agent may append
# those. Read only when another run's effect turns up under a key (worker.steps.bind_result): rare.
_FORKED_FROM_SQL = """
WITH RECURSIVE up(run_id) AS (
    SELECT (a.data->>'from_run')::bigint FROM harness_auditentry a
     WHERE a.project_id = %(pid)s AND a.action = 'checkpoint.forked' AND a.data->>'to_run' = %(run)s::text
    UNION
    SELECT (a.data->>'from_run')::bigint FROM harness_auditentry a JOIN up ON a.data->>'to_run' = up.run_id::text
     WHERE a.project_id = %(pid)s AND a.action = 'checkpoint.forked'
)
SELECT EXISTS (SELECT 1 FROM up WHERE run_id = %(ancestor)s)
"""


def run_forked_from(*, project_id: int, run_id: int, ancestor_run_id: int) -> bool:
    """Whether `run_id` was forked (directly or through other forks) from a checkpoint of `ancestor_run_id`."""
    with connection.cursor() as cursor:
        cursor.execute(_FORKED_FROM_SQL, {"run": run_id, "pid": project_id, "ancestor": ancestor_run_id})
        row = cursor.fetchone()
    return bool(row and row[0])
