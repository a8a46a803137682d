"""The resume pipeline (DESIGN.md "Resume"): a re-validation, never "continue from chat memory".

Each step is a function of one `Resume` state object; `resume_run_by_id` runs them in order and
each leaves a `resume.<step>` trace event on the run. The first failing step (StepFailed) moves the
run to `blocked` naming that step, and nothing is executed after it. `Stop` ends a resume quietly
without blocking: there is nothing to do, or another worker owns the run.

The trace is collected in memory and written in batches (one statement each), always in the
transaction that commits the steps' effects, so an event is never later than what it reports. A
resume of an approval is four transactions: the start count; load to dispatch (committed before the
call); the delivery; the binding (consume, continue, checkpoint, metrics).

Exactly-once of the approved action rests on the ExternalEffect record and the idempotency key:
intend -> dispatch (committed before the call) -> call -> deliver (committed) -> consume, where the
consumption commits in the same transaction that binds the result to the run. A crash at any point
leaves a state the next resume reads: delivered or consumed effects are never called again; an
effect left `dispatched` becomes `unknown` and is retried under the same key (the service dedups).
"""

import logging
import os
import signal
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from harness.canonical import action_fingerprint, digest
from harness.errors import ConflictError, DomainError
from harness.models import AuditEntry
from memory_app.services import context_project
from runs_app.adapters import AdapterConfigError, AdapterError, ToolAdapter, adapter_resolve
from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    EffectStatus,
    ExternalEffect,
    NodeExecution,
    ResumePolicy,
    Run,
    RunStatus,
    Task,
    TaskStatus,
)
from runs_app.nodes import artifact_fingerprint, artifact_fingerprints, node_handler, remaining_nodes
from runs_app.services import (
    checkpoint_create,
    effect_deliver,
    effect_dispatch,
    effect_intend,
    effect_mark_unknown,
    node_execution_finish,
    node_execution_start,
    run_claim_attempt,
    run_count_start,
    run_event_append,
    run_events_append,
    run_heartbeat,
    run_metrics_merge,
    run_release,
    run_set_current_node,
    run_transition,
    task_save,
    task_transition,
)
from sessions_app.models import SessionStatus

log = logging.getLogger(__name__)

SUPPORTED_SCHEMA_VERSIONS = frozenset({1})
WORKER_OWNER_PREFIX = "worker:"
CONTEXT_BUDGET_CHARS = 4000
DECISION_AUDIT_ACTIONS = (f"approval.{ApprovalStatus.APPROVED}", f"approval.{ApprovalStatus.REJECTED}")


class StepFailed(Exception):
    """A re-validation failed: the run goes to `blocked` naming the step."""

    def __init__(self, reason: str, **detail: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


class Stop(Exception):
    """Nothing to do, or someone else owns the run: end without blocking."""


class Retry(Exception):
    """A transient failure (the tool is unreachable): release the lease, the recovery pass retries."""


@dataclass
class Resume:
    run_id: int
    owner: str
    lease_seconds: int
    run: Run = field(default=None)  # type: ignore[assignment]
    task: Task | None = None
    checkpoint: Checkpoint | None = None
    approval: ApprovalRequest | None = None
    mode: str = ""  # "approval": a decided approval to bind; "continue": drive the remaining nodes
    leased: bool = False
    claimed: bool = False
    adapter: ToolAdapter | None = None
    effect: ExternalEffect | None = None
    result: Any = None
    bound: dict | None = None
    context: dict = field(default_factory=dict)
    steps_ok: int = 0
    start_counted: bool = False
    dispatched: ExternalEffect | None = None  # dispatched (committed) and not called yet
    bind_data: dict = field(default_factory=dict)
    events: list[tuple[str, dict]] = field(default_factory=list)  # trace not written yet
    metrics_written: bool = False

    @property
    def project_id(self) -> int:
        return self.run.project_id

    @property
    def approved(self) -> bool:
        return self.approval is not None and self.approval.status == ApprovalStatus.APPROVED

    @property
    def worker_driven(self) -> bool:
        return is_worker_plan(self.task, gate=self.run.current_node if self.mode == "approval" else "")


def worker_owner(hostname: str = "") -> str:
    host = hostname or os.uname().nodename
    return f"{WORKER_OWNER_PREFIX}{host}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def crash_point(name: str) -> None:
    """Test hook: HARNESS_CRASH_AT=<name> kills this process with SIGKILL right here (like `kill -9`)."""
    if os.environ.get("HARNESS_CRASH_AT") == name:
        log.warning("HARNESS_CRASH_AT=%s: killing process %s", name, os.getpid())
        os.kill(os.getpid(), signal.SIGKILL)


def is_worker_plan(task: Task | None, *, gate: str = "") -> bool:
    """A task the worker drives: a plan whose remaining nodes (but the approval gate) all have handlers."""
    if task is None or not task.plan:
        return False
    return all(node_handler(node) is not None for node in remaining_nodes(task.plan, task.completed_nodes)
               if node != gate)


def _trace(r: Resume, step: str, ok: bool, reason: str = "", **data: Any) -> None:
    """Collect a step's trace event; `_flush` writes what was collected, in the step's transaction."""
    payload = {"ok": ok, "owner": r.owner, **data}
    if reason:
        payload["reason"] = reason
    r.events.append((f"resume.{step}", payload))


def _flush(r: Resume) -> None:
    if r.events and r.run is not None:
        run_events_append(project=r.project_id, run_id=r.run_id, events=r.events)
    r.events = []


# --- the steps ------------------------------------------------------------------------------


def _leased_by_another(run: Run, owner: str) -> bool:
    return bool(run.lease_owner) and run.lease_owner != owner and run.lease_expires_at is not None and (
        run.lease_expires_at > timezone.now())


def _count_start(r: Resume) -> None:
    """Count this start before the load (a poisoned run may kill the worker right there) and stop
    a run whose starts keep dying before the claim, where `attempts` is counted.

    A duplicate message, while another worker's lease is live, is not a start. A start that dies
    before the claim leaves the lease free, so the broker's redelivery and the recovery pass would
    start it again forever; once more starts than the attempt limit never became an attempt
    (a claim), the run is blocked instead.
    """
    run = run_count_start(run_id=r.run_id, owner=r.owner, statuses=(RunStatus.WAITING_APPROVAL, RunStatus.RUNNING))
    r.start_counted = True
    if run is None:
        return
    metrics = run.metrics or {}
    unclaimed = int(metrics.get("starts") or 0) - int(metrics.get("attempts") or 0) - 1  # before this start
    if unclaimed >= settings.HARNESS_RESUME_MAX_ATTEMPTS:
        r.run = run
        raise StepFailed(f"the resume started {unclaimed} times without reaching its claim (the worker died "
                         f"before it each time)", starts=metrics["starts"])


def step_load(r: Resume) -> dict:
    """Load the durable run, its task, latest checkpoint and pending approval; decide what to resume."""
    if not r.start_counted:  # the orchestrator counts it before its transaction, so that it commits first
        _count_start(r)
    crash_point("load")
    run = Run.objects.select_related(
        "task", "last_checkpoint", "pending_approval__decided_by", "session").filter(pk=r.run_id).first()
    if run is None:
        raise Stop(f"run {r.run_id} does not exist")
    r.run, r.task, r.approval = run, run.task, run.pending_approval
    if run.status == RunStatus.WAITING_APPROVAL:
        approval = run.pending_approval
        if approval is not None and approval.status == ApprovalStatus.PENDING and not (
            approval.expires_at and approval.expires_at <= timezone.now()
        ):
            raise Stop("the approval is not decided yet")
        r.mode = "approval"
    elif run.status == RunStatus.RUNNING and (
        run.lease_owner.startswith(WORKER_OWNER_PREFIX) or is_worker_plan(run.task)
    ):
        r.mode = "continue"
    else:
        raise Stop(f"nothing to resume in a {run.status} run")
    checkpoint = run.last_checkpoint
    if checkpoint is None and run.task is not None:
        checkpoint = run.task.latest_checkpoint
    if checkpoint is not None and checkpoint.run_id not in (None, run.pk) and checkpoint.task_id != run.task_id:
        raise StepFailed(f"checkpoint {checkpoint.pk} is not in this run's lineage")
    r.checkpoint = checkpoint
    return {"mode": r.mode, "status": run.status, "version": run.version,
            "checkpoint": checkpoint.pk if checkpoint else None, "approval": r.approval.pk if r.approval else None}


def step_compatibility(r: Resume) -> dict:
    """The checkpoint and task were written in a schema this worker understands, for the current plan."""
    checkpoint, task = r.checkpoint, r.task
    if checkpoint is not None:
        if checkpoint.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
            raise StepFailed(f"checkpoint schema_version {checkpoint.schema_version} is not supported "
                             f"(supported: {sorted(SUPPORTED_SCHEMA_VERSIONS)})")
        if checkpoint.resume_policy == ResumePolicy.MANUAL:
            raise StepFailed("the checkpoint's resume policy is manual: a person decides")
    if task is not None:
        if task.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
            raise StepFailed(f"task schema_version {task.schema_version} is not supported")
        recorded = (checkpoint.state or {}).get("plan_version") if checkpoint is not None else None
        if recorded is not None and recorded != task.plan_version:
            raise StepFailed(f"stale checkpoint: it was taken at plan_version {recorded}, "
                             f"the task is at plan_version {task.plan_version}")
    return {"checkpoint_schema": checkpoint.schema_version if checkpoint else None,
            "task_schema": task.schema_version if task else None}


def step_authority_and_lease(r: Resume) -> dict:
    """The records agree on who they belong to; then take the run's lease (one owner at a time)."""
    run = r.run
    if r.approval is not None and (r.approval.run_id != run.pk or r.approval.project_id != run.project_id):
        raise StepFailed("the pending approval belongs to another run")
    if r.checkpoint is not None and r.checkpoint.project_id != run.project_id:
        raise StepFailed("the checkpoint belongs to another project")
    if run.session.status == SessionStatus.TERMINATED:
        raise StepFailed("the run's session is terminated")
    max_attempts = settings.HARNESS_RESUME_MAX_ATTEMPTS
    if int((run.metrics or {}).get("attempts") or 0) >= max_attempts:
        if _leased_by_another(run, r.owner):
            # A duplicate message while the last allowed attempt runs elsewhere: that one decides.
            raise Stop("the run is owned by its last allowed attempt")
        raise StepFailed(f"the resume was attempted {max_attempts} times without finishing")
    try:
        # The claim counts the attempt in the same statement.
        r.run = run_claim_attempt(project=run.project_id, run_id=run.pk, owner=r.owner,
                                  lease_seconds=r.lease_seconds)
    except ConflictError as exc:
        _trace(r, "authority_lease", False, exc.code, lease_owner=exc.extra.get("lease_owner", ""))
        raise Stop(f"the run is owned: {exc.detail}") from None
    r.leased = r.claimed = True
    return {"lease_expires_at": r.run.lease_expires_at.isoformat() if r.run.lease_expires_at else None}


def step_sparse_context(r: Resume) -> dict:
    """Rebuild what the model may see, within a budget, and record it (never the transcript).

    1. The task's durable state (objective, plan, completed nodes, artifact fingerprints, the pending
       action): what a node handler is given.
    2. Memory and the recent session window through memory_app's `context_project`, which stores
       the snapshot it hands over (a ContextSnapshot row); the trace names it.
    """
    task = r.task
    state = {
        "objective": task.objective if task else "",
        "plan": task.plan if task else [],
        "completed_nodes": task.completed_nodes if task else [],
        "current_node": r.run.current_node,
        "cursor": r.run.cursor,
        "artifacts": artifact_fingerprints(task.artifact_refs) if task else {},
        "pending_action": ({"tool": r.approval.tool, "fingerprint": r.approval.action_fingerprint}
                           if r.approval else None),
    }
    try:
        snapshot = context_project(project=r.project_id, run_id=r.run_id, budget_chars=CONTEXT_BUDGET_CHARS,
                                   query=task.objective[:500] if task else None)
    except DomainError as exc:
        raise StepFailed(f"the memory context could not be built: {exc}") from exc
    memory = snapshot.content
    data = {"state_digest": digest(state), "snapshot": snapshot.pk, "used_chars": snapshot.used_chars,
            "budget_chars": snapshot.budget_chars, "memory_ids": snapshot.memory_ids, "item_seqs": snapshot.item_seqs}
    r.context = {"state": state, "memory": memory}
    return data


def step_artifact_fingerprints(r: Resume) -> dict:
    """The artifacts the checkpoint saw are the artifacts the task has now."""
    expected = (r.checkpoint.artifact_fingerprints or {}) if r.checkpoint is not None else {}
    if not expected or r.task is None:
        return {"verified": 0}
    actual = artifact_fingerprints(r.task.artifact_refs)
    changed = sorted(name for name, fingerprint in expected.items()
                     if actual.get(name) != artifact_fingerprint(fingerprint))
    if changed:
        raise StepFailed(f"artifacts changed since the checkpoint: {', '.join(changed)}", artifacts=changed)
    return {"verified": len(expected)}


def step_approval_preconditions(r: Resume) -> dict:
    """The decision is final, current and about exactly the action the run is waiting on."""
    if r.mode != "approval":
        return {"approval": None}
    approval = r.approval
    if approval is None:
        raise StepFailed("the run waits for approval but has no pending approval")
    if approval.status == ApprovalStatus.EXPIRED or (
        approval.status == ApprovalStatus.PENDING and approval.expires_at and approval.expires_at <= timezone.now()
    ):
        raise StepFailed("the approval expired before a decision", approval=approval.pk)
    if approval.status not in (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED):
        raise StepFailed(f"the approval is {approval.status}", approval=approval.pk)
    if action_fingerprint(approval.tool, approval.arguments) != approval.action_fingerprint:
        raise StepFailed("the requested action no longer matches its fingerprint", approval=approval.pk)
    gate = (r.checkpoint.pending_gate or {}) if r.checkpoint is not None else {}
    if isinstance(gate, dict) and gate.get("tool") and gate["tool"] != approval.tool:
        raise StepFailed(f"the checkpoint waits on {gate['tool']}, the approval is for {approval.tool}")
    if approval.status == ApprovalStatus.APPROVED:
        actual = action_fingerprint(approval.tool, approval.approved_arguments)
        if actual != approval.approved_fingerprint:
            raise StepFailed("the approved action changed after approval (fingerprint mismatch)",
                             approval=approval.pk, approved_fingerprint=approval.approved_fingerprint,
                             actual_fingerprint=actual)
    _check_against_audit(approval)
    return {"approval": approval.pk, "decision": approval.status, "fingerprint": approval.approved_fingerprint}


def _check_against_audit(approval: ApprovalRequest) -> None:
    """The row must say what the reviewer's decision recorded in the append-only audit log.

    A direct UPDATE can rewrite the approval row so that it agrees with itself (approved arguments
    with their own fingerprint, or a rejection turned into an approval); it cannot rewrite the
    audit entry written in the decision's transaction.
    """
    recorded = (
        AuditEntry.objects.filter(project_id=approval.project_id, target_type="approvalrequest",
                                  target_id=str(approval.pk), action__in=DECISION_AUDIT_ACTIONS)
        .order_by("id").values_list("action", "data").first()
    )
    if recorded is None or recorded[0] != f"approval.{approval.status}":
        raise StepFailed(f"the approval says {approval.status}, the audit log records "
                         f"{recorded[0] if recorded else 'no decision'}", approval=approval.pk)
    if approval.status == ApprovalStatus.APPROVED and (recorded[1] or {}).get("approved_fingerprint") != (
        approval.approved_fingerprint
    ):
        raise StepFailed("the approved fingerprint is not the one the reviewer's decision recorded (audit log)",
                         approval=approval.pk, approved_fingerprint=approval.approved_fingerprint,
                         recorded_fingerprint=(recorded[1] or {}).get("approved_fingerprint"))


def step_capability(r: Resume) -> dict:
    """The adapter for the approved tool exists now and takes these arguments; the plan's nodes have handlers."""
    data: dict[str, Any] = {}
    if r.approved:
        assert r.approval is not None
        try:
            adapter = adapter_resolve(r.approval.tool)
        except AdapterConfigError as exc:
            raise StepFailed(str(exc), tool=r.approval.tool) from exc
        if adapter is None:
            raise StepFailed(f"no adapter is registered for the tool {r.approval.tool!r}", tool=r.approval.tool)
        problem = adapter.incompatibility(r.approval.approved_arguments)
        if problem:
            raise StepFailed(f"the adapter for {r.approval.tool!r} cannot take this action: {problem}")
        r.adapter = adapter
        data["adapter"] = type(adapter).__name__
    if r.mode == "continue":
        assert r.task is not None
        missing = [n for n in remaining_nodes(r.task.plan, r.task.completed_nodes) if node_handler(n) is None]
        if missing:
            raise StepFailed(f"no handler is registered for the nodes: {', '.join(missing)}", nodes=missing)
        data["nodes"] = remaining_nodes(r.task.plan, r.task.completed_nodes)
    return data


def step_bind_result(r: Resume) -> dict:
    """Get the approved action's result through its effect record: reuse a bound one, else call once.

    1. Rejected: bind the rejection and its reason; nothing is executed.
    2. Intend the effect under the approval's idempotency key (the same key returns the same record).
    3. Delivered or consumed already: reuse its result, no call.
    4. Left `dispatched` by a crash: mark it `unknown`, then reconcile by calling again under the same key.
    5. Dispatch (committed before the call), call, deliver the result (committed, not yet consumed).

    The orchestrator runs 1-4 and the dispatch in its pre-call transaction, then `_bind_call` and
    `_bind_deliver` itself; called on its own, this does all of it.
    """
    data = _bind_dispatch(r)
    if data is not None:
        return data
    result = _bind_call(r)
    with transaction.atomic():
        data = _bind_deliver(r, result)
    crash_point("after_deliver")
    return data


def _bind_dispatch(r: Resume) -> dict | None:
    """Steps 1-4 of `step_bind_result` and the dispatch; the step's trace data, or None when a call follows."""
    if r.mode != "approval":
        return {"bound": None}
    approval = r.approval
    assert approval is not None
    if approval.status == ApprovalStatus.REJECTED:
        r.bound = {"decision": "rejected", "approval": approval.pk, "reason": approval.decision_reason,
                   "by": approval.decided_by.get_username() if approval.decided_by else ""}
        return {"decision": "rejected", "executed": False}
    try:
        effect, _ = effect_intend(
            project=r.project_id, idempotency_key=approval.idempotency_key, tool=approval.tool,
            arguments=approval.approved_arguments, run_id=r.run_id, approval_id=approval.pk,
        )
    except ConflictError as exc:
        raise StepFailed(f"the idempotency key names another action: {exc.detail}") from exc
    if effect.run_id not in (None, r.run_id):
        raise StepFailed("the idempotency key belongs to another run's effect", effect=effect.pk)
    if effect.status == EffectStatus.CONFLICT:
        raise StepFailed("the effect is in conflict (two results for one key)", effect=effect.pk)
    reconciled = False
    if effect.status in (EffectStatus.DELIVERED, EffectStatus.CONSUMED):
        r.effect, r.result = effect, effect.result
        return {"effect": effect.pk, "executed": False, "reason": f"already {effect.status}"}
    if effect.status == EffectStatus.DISPATCHED:
        # We hold the lease, so whoever dispatched it is gone: its outcome is unknown.
        effect = effect_mark_unknown(project=r.project_id, effect_id=effect.pk)
    if effect.status == EffectStatus.UNKNOWN:
        reconciled = True
        if effect.attempts >= settings.HARNESS_EFFECT_MAX_ATTEMPTS:
            raise StepFailed(f"the tool call's outcome is still unknown after {effect.attempts} attempts",
                             effect=effect.pk)
    try:
        run_heartbeat(project=r.project_id, run_id=r.run_id, owner=r.owner, lease_seconds=r.lease_seconds)
    except ConflictError:
        raise Stop("the lease was lost before the call") from None
    r.dispatched = effect_dispatch(project=r.project_id, effect_id=effect.pk)
    r.bind_data = {"effect": effect.pk, "executed": True, "reconciled": reconciled}
    return None


def _bind_call(r: Resume) -> Any:
    """Call the tool for the dispatched effect (its dispatch committed, no transaction open)."""
    effect, approval = r.dispatched, r.approval
    assert effect is not None and approval is not None and r.adapter is not None
    crash_point("before_call")
    try:
        result = r.adapter.call(approval.approved_arguments, idempotency_key=approval.idempotency_key)
    except AdapterError as exc:
        effect_mark_unknown(project=r.project_id, effect_id=effect.pk)
        if exc.permanent:
            raise StepFailed(f"the tool refused the call: {exc}", effect=effect.pk) from exc
        _trace(r, "bind_result", False, f"the tool is unreachable, will retry: {exc}", effect=effect.pk)
        raise Retry(str(exc)) from exc
    crash_point("after_call")
    return result


def _bind_deliver(r: Resume, result: Any) -> dict:
    """Record the call's result as delivered (not consumed yet); the step's trace data."""
    effect, approval = r.dispatched, r.approval
    assert effect is not None and approval is not None
    delivery = effect_deliver(project=r.project_id, idempotency_key=approval.idempotency_key, result=result,
                              consume=False)
    if delivery.outcome == "conflict":
        raise StepFailed("the tool returned a different result for the same idempotency key", effect=effect.pk)
    r.effect, r.result, r.dispatched = delivery.effect, delivery.effect.result, None
    return {**r.bind_data, "attempt": effect.attempts, "result_hash": delivery.effect.result_hash}


def step_not_yet_consumed(r: Resume) -> dict:
    """The result has not been consumed yet: consumption commits together with binding it to the run."""
    if r.effect is None:
        return {"effect": None}
    # Locked until the binding commits: nobody consumes it between this check and our consumption.
    effect = ExternalEffect.objects.select_for_update().get(pk=r.effect.pk)
    if effect.status == EffectStatus.CONSUMED:
        raise StepFailed(f"the effect's result was consumed already (receipt {effect.receipt})", effect=effect.pk)
    r.effect = effect
    return {"effect": effect.pk, "status": effect.status}


def step_continue(r: Resume) -> dict:
    """Consume the result and move the run on from its cursor (call inside the binding transaction).

    1. Approved: consume the delivered result once (a receipt); bind it, with the receipt, to the run.
    2. A worker-driven run: the gate node is completed with the result (or failed by a rejection), the
       run stays `running` under our lease for `drive_nodes`.
    3. An agent-driven run: back to `running` with `bound_result` set and the lease released, for the
       agent to claim.
    """
    if r.mode != "approval":
        return {"cursor": r.run.cursor, "mode": r.mode}
    approval = r.approval
    assert approval is not None
    if r.approved:
        assert r.effect is not None
        delivery = effect_deliver(project=r.project_id, idempotency_key=approval.idempotency_key, result=r.result)
        if delivery.outcome != "consumed":
            raise StepFailed(f"the effect could not be consumed ({delivery.outcome})", effect=r.effect.pk)
        r.effect = delivery.effect
        r.bound = {"decision": "approved", "approval": approval.pk, "tool": approval.tool, "result": r.result,
                   "effect": r.effect.pk, "receipt": delivery.receipt, "result_hash": r.effect.result_hash}
    assert r.bound is not None
    gate = r.run.current_node
    updates: dict[str, Any] = {"bound_result": r.bound, "pending_approval": None}
    if r.worker_driven:
        assert r.task is not None
        execution = node_execution_start(run=r.run, node=gate or approval.tool)
        if r.approved:
            _task_complete_node(r, gate, {"kind": "effect", "tool": approval.tool, "result": r.result,
                                          "receipt": r.bound["receipt"], "sha256": r.bound["result_hash"]})
            node_execution_finish(execution=execution, ok=True, output=r.bound)
        else:
            node_execution_finish(execution=execution, ok=False, error=f"rejected: {approval.decision_reason}")
    else:
        updates.update(lease_owner="", lease_expires_at=None)
        r.leased = False
    r.run = run_transition(project=r.project_id, run_id=r.run_id, to=RunStatus.RUNNING, expected_version=None,
                           lease_owner=r.owner, by_worker=True, updates=updates)
    return {"decision": r.bound["decision"], "receipt": r.bound.get("receipt", ""), "node": gate,
            "driven_by": "worker" if r.worker_driven else "agent"}


def step_checkpoint(r: Resume) -> dict:
    """Checkpoint the new position (lineage: the previous checkpoint is the parent)."""
    if r.mode != "approval":
        return {"checkpoint": None, "reason": "each node checkpoints as it finishes"}
    # `continue` just moved the run in this transaction (its row is locked): r.run is current.
    checkpoint = _checkpoint(r, label=f"after {r.run.current_node or 'approval'} ({(r.bound or {}).get('decision')})",
                             parent=r.run.last_checkpoint_id)
    return {"checkpoint": checkpoint.pk if checkpoint else None}


def _checkpoint(r: Resume, *, label: str, parent: int | None | bool = False) -> Checkpoint | None:
    """Checkpoint the run's position; `parent` is the run's last checkpoint when the caller knows it."""
    task = Task.objects.get(pk=r.task.pk) if r.task is not None else None
    r.task = task
    nxt = remaining_nodes(task.plan, task.completed_nodes) if task else []
    if parent is False:
        parent = Run.objects.filter(pk=r.run_id).values_list("last_checkpoint_id", flat=True).get()
    checkpoint = checkpoint_create(
        project=r.project_id, run_id=r.run_id, parent_id=parent, label=label[:120],
        cursor={"node": nxt[0] if nxt else "", "completed": list(task.completed_nodes) if task else []},
        state={"plan_version": task.plan_version if task else None, "bound_receipt": (r.bound or {}).get("receipt")},
        artifact_fingerprints=artifact_fingerprints(task.artifact_refs) if task else {},
        authority_ref=r.owner, approval_id=r.approval.pk if r.approval else None,
        lease_owner=r.owner if r.leased else None,
    )
    r.checkpoint = checkpoint
    return checkpoint


def _task_complete_node(r: Resume, node: str, artifact: dict) -> None:
    assert r.task is not None
    task = Task.objects.get(pk=r.task.pk)
    artifacts = {**(task.artifact_refs or {}), node: artifact}
    completed = [*task.completed_nodes, node] if node not in task.completed_nodes else list(task.completed_nodes)
    pending = [n for n in (task.pending_nodes or []) if n != node]
    r.task = task_save(project=r.project_id, task_id=task.pk, expected_version=task.version,
                       completed_nodes=completed, pending_nodes=pending, artifact_refs=artifacts)


# --- driving a worker plan --------------------------------------------------------------------


def drive_nodes(r: Resume) -> int:
    """Run the task's remaining nodes in order, each with a NodeExecution and a checkpoint; return how many.

    1. Renew the lease (a lost lease stops here; someone else continues).
    2. Start the node's execution row, call its handler with the artifacts so far.
    3. In one transaction: save the artifact and the completed node, checkpoint, finish the execution.
    4. No nodes left: the run succeeds, the task completes.
    """
    executed = 0
    while True:
        task = Task.objects.get(pk=r.task.pk)  # type: ignore[union-attr]
        pending = remaining_nodes(task.plan, task.completed_nodes)
        if not pending:
            break
        node = pending[0]
        handler = node_handler(node)
        if handler is None:
            raise StepFailed(f"no handler is registered for the node {node!r}", node=node)
        try:
            run_heartbeat(project=r.project_id, run_id=r.run_id, owner=r.owner, lease_seconds=r.lease_seconds)
            run_set_current_node(project=r.project_id, run_id=r.run_id, owner=r.owner, node=node)
        except ConflictError:
            raise Stop("the lease was lost between nodes") from None
        run = Run.objects.get(pk=r.run_id)
        # An execution still `running` under our lease was cut short by a dead worker: close it.
        for orphan in NodeExecution.objects.filter(run_id=r.run_id, node=node, status=NodeExecution.Status.RUNNING):
            node_execution_finish(execution=orphan, ok=False, error="abandoned: the worker stopped mid-node")
        execution = node_execution_start(run=run, node=node)
        crash_point(f"node:{node}")
        try:
            artifact = handler(task=task, run=run, node=node, artifacts=dict(task.artifact_refs or {}),
                               context=r.context)
        except Exception as exc:  # noqa: BLE001 - a handler's failure is recorded on the node, then blocks
            node_execution_finish(execution=execution, ok=False, error=f"{type(exc).__name__}: {exc}")
            raise StepFailed(f"the node {node!r} failed: {type(exc).__name__}: {exc}", node=node) from exc
        with transaction.atomic():
            r.task = task
            _task_complete_node(r, node, artifact)
            checkpoint = _checkpoint(r, label=f"after {node}")
            node_execution_finish(execution=execution, ok=True, output=artifact, checkpoint=checkpoint)
            run_event_append(project=r.project_id, run_id=r.run_id, kind="node.succeeded",
                             data={"node": node, "execution": execution.pk, "attempt": execution.attempt,
                                   "checkpoint": checkpoint.pk if checkpoint else None})
        executed += 1
    with transaction.atomic():
        r.run = run_transition(project=r.project_id, run_id=r.run_id, to=RunStatus.SUCCEEDED, expected_version=None,
                               lease_owner=r.owner, by_worker=True, updates={"current_node": ""})
        r.leased = False
        _task_finish(r.project_id, r.task.pk)  # type: ignore[union-attr]
    return executed


def _task_finish(project_id: int, task_id: int) -> None:
    status = Task.objects.filter(pk=task_id).values_list("status", flat=True).get()
    if status in (TaskStatus.OPEN, TaskStatus.WAITING):
        task_transition(project=project_id, task_id=task_id, to=TaskStatus.ACTIVE, expected_version=None)
        status = TaskStatus.ACTIVE
    if status == TaskStatus.ACTIVE:
        task_transition(project=project_id, task_id=task_id, to=TaskStatus.COMPLETED, expected_version=None)


# --- the orchestrator -----------------------------------------------------------------------

PRE_BIND_STEPS = (
    ("load", step_load),
    ("compatibility", step_compatibility),
    ("authority_lease", step_authority_and_lease),
    ("sparse_context", step_sparse_context),
    ("artifact_fingerprints", step_artifact_fingerprints),
    ("approval_preconditions", step_approval_preconditions),
    ("capability", step_capability),
    ("bind_result", step_bind_result),
)
# What the orchestrator runs in its pre-call transaction: bind_result up to the dispatch.
PRE_CALL_STEPS = (*PRE_BIND_STEPS[:-1], ("bind_result", _bind_dispatch))
BINDING_STEPS = (
    ("not_yet_consumed", step_not_yet_consumed),
    ("continue", step_continue),
    ("checkpoint", step_checkpoint),
)
STEP_NAMES = tuple(name for name, _ in PRE_BIND_STEPS + BINDING_STEPS)


def _run_step(r: Resume, name: str, step: Any) -> None:
    """Run one step and collect its trace; a step that returns None traces itself later."""
    try:
        data = step(r)
    except StepFailed as exc:
        exc.step = name  # type: ignore[attr-defined]
        raise
    if data is None:
        return
    if r.run is not None:
        _trace(r, name, True, **data)
    r.steps_ok += 1


def _steps_committed(r: Resume, steps: Any) -> None:
    """Run steps in one transaction that commits their effects with their trace.

    A failing step commits what the steps before it did, its failure traced and the run blocked (as
    if each step had committed on its own); a Stop, Retry or lost guarded write commits the trace so
    far. Any other error rolls it all back, its trace too.
    """
    ended: Exception | None = None
    with _committing(r):
        try:
            for name, step in steps:
                _run_step(r, name, step)
        except StepFailed as exc:
            _fail(r, exc)
            ended = exc
        except (Stop, Retry, ConflictError) as exc:
            ended = exc
    if ended is not None:
        raise ended


@contextmanager
def _committing(r: Resume) -> Iterator[None]:
    """A transaction that writes the trace collected in it before it commits; rolled back, that trace
    is dropped with the effects it reports."""
    mark = len(r.events)
    try:
        with transaction.atomic():
            yield
            _flush(r)
    except BaseException:
        del r.events[mark:]
        raise


def _fail(r: Resume, exc: StepFailed) -> None:
    """Trace the failing step and block the run naming it (inside the caller's transaction)."""
    exc.step = step = getattr(exc, "step", "continue")  # type: ignore[attr-defined]
    if r.run is None:
        return
    _trace(r, step, False, exc.reason, **exc.detail)
    _flush(r)
    _block(r, step, exc.reason, exc.detail)
    exc.handled = True  # type: ignore[attr-defined]


def resume_run_by_id(run_id: int, *, owner: str | None = None, lease_seconds: int | None = None) -> str:
    """Resume one run; returns the outcome: "done", "blocked", "stopped" or "retry".

    1. Count the start (committed before the load, so a start that dies loading still counts).
    2. The pre-bind steps in one transaction, up to the effect's dispatch (committed before the call).
    3. The call, with no transaction open; then its delivery and the `bind_result` trace, committed.
    4. The binding steps in one transaction: consume the result, move the run on, checkpoint (and,
       for a run handed back to its agent, the metrics).
    5. A worker-driven run: drive its remaining nodes to the end.
    The first StepFailed blocks the run naming its step; metrics are recorded on every outcome.
    """
    r = Resume(run_id=run_id, owner=owner or worker_owner(),
               lease_seconds=lease_seconds or settings.HARNESS_WORKER_LEASE_SECONDS)
    started = time.monotonic()
    outcome, failure = "done", ""
    try:
        try:
            _count_start(r)  # one statement, committed on its own before the load
        except StepFailed as exc:
            exc.step = "load"  # type: ignore[attr-defined]
            raise
        _steps_committed(r, PRE_CALL_STEPS)
        if r.dispatched is not None:
            try:
                result = _bind_call(r)
            except StepFailed as exc:
                exc.step = "bind_result"  # type: ignore[attr-defined]
                raise
            _steps_committed(r, (("bind_result", lambda r: _bind_deliver(r, result)),))
            crash_point("after_deliver")
        with _committing(r):
            for name, step in BINDING_STEPS:
                _run_step(r, name, step)
            if not r.leased:  # handed back (to its agent): nothing follows, the metrics commit here
                _metrics(r, started, "", run=r.run)
        crash_point("after_commit")
        if r.leased and r.mode == "approval" and not r.approved:
            _finish_rejected(r)
        elif r.leased and r.run.status == RunStatus.RUNNING:
            r.steps_ok += drive_nodes(r)
    except StepFailed as exc:
        failed_step: str = getattr(exc, "step", "continue")
        outcome, failure = "blocked", failed_step
        if r.run is not None and not getattr(exc, "handled", False):
            with transaction.atomic():
                _fail(r, exc)
    except Stop as exc:
        outcome, failure = "stopped", ""
        _flush(r)
        log.info("resume of run %s stopped: %s", run_id, exc)
    except Retry:
        outcome, failure = "retry", "tool_unreachable"
        with transaction.atomic():
            _flush(r)
            if r.leased:
                run_release(project=r.project_id, run_id=run_id, owner=r.owner)
                r.leased = False
    except ConflictError as exc:
        # A guarded write lost (the lease expired and someone else took over): let them continue.
        outcome, failure = "stopped", exc.code
        _flush(r)
        log.warning("resume of run %s lost a guarded write: %s", run_id, exc.detail)
    except Exception:
        if r.leased:
            _metrics(r, started, "exception")
            run_release(project=r.project_id, run_id=run_id, owner=r.owner)
        raise
    if r.run is not None and (r.claimed or outcome == "blocked") and not r.metrics_written:
        _metrics(r, started, failure)
    return outcome


def _finish_rejected(r: Resume) -> None:
    """A worker-driven plan cannot continue past a rejected gate: the run fails, the reason bound."""
    assert r.bound is not None
    with transaction.atomic():
        r.run = run_transition(
            project=r.project_id, run_id=r.run_id, to=RunStatus.FAILED, expected_version=None, lease_owner=r.owner,
            by_worker=True, error={"step": "continue", "reason": f"the approval was rejected: {r.bound['reason']}"},
        )
        r.leased = False


def _block(r: Resume, step: str, reason: str, detail: dict) -> None:
    try:
        run_transition(
            project=r.project_id, run_id=r.run_id, to=RunStatus.BLOCKED,
            expected_version=None if r.leased else r.run.version, lease_owner=r.owner if r.leased else None,
            blocked_step=step, error={"step": step, "reason": reason, **detail}, by_worker=True,
            updates={"lease_owner": "", "lease_expires_at": None} if r.leased else None,
        )
        r.leased = False
    except ConflictError as exc:
        log.warning("run %s could not be blocked at %s: %s", r.run_id, step, exc.detail)


def _metrics(r: Resume, started: float, failure: str, *, run: Run | None = None) -> None:
    """Record the resume's figures in `Run.metrics`; `run` when the caller holds it current."""
    usage = ({"tokens_used": run.tokens_used, "cost_used": run.cost_used} if run is not None else
             Run.objects.filter(pk=r.run_id).values("tokens_used", "cost_used").first())
    if usage is None:
        return
    steps = NodeExecution.objects.filter(run_id=r.run_id, status=NodeExecution.Status.SUCCEEDED).count()
    run_metrics_merge(project=r.project_id, run_id=r.run_id, metrics={
        "steps": steps, "pipeline_steps": r.steps_ok, "tokens": usage["tokens_used"], "cost": str(usage["cost_used"]),
        "latency_ms": int((time.monotonic() - started) * 1000), "failure_type": failure,
    })
    r.metrics_written = True
