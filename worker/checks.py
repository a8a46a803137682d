"""The resume's checks that need no lease, no write and no call: pure functions of the state a load read
(worker.state.Resume), each raising StepFailed with the reason, or returning what it verified.

Two callers, one code: the pipeline's steps (worker/steps/) call them on the state they loaded, then do what
needs the lease (the claim, the dispatch, the lock of the effect); the approval page's dry run
(worker.dry_run) calls them on the same load, before and at the decision, so a reviewer sees what the resume
would block at before it is asked to (issue 30).
"""

import datetime as dt
from typing import Any

from django.conf import settings

from harness.canonical import action_fingerprint
from runs_app.artifacts import artifact_fingerprint, artifact_fingerprints
from runs_app.models import ApprovalRequest, ApprovalStatus, EffectStatus, ExternalEffect, FailureCategory, ResumePolicy
from runs_app.resume_due import remaining_nodes
from runs_app.services.checkpoints import APPROVAL_AUTHORITY, checkpoint_hash
from runs_app.tool_schemas import argument_errors
from sessions_app.models import SessionStatus
from worker.adapters import AdapterConfigError, ToolAdapter, adapter_resolve
from worker.handlers import node_handler
from worker.loading import DecisionAudit
from worker.state import Resume, ResumeMode, StepFailed

SUPPORTED_SCHEMA_VERSIONS = frozenset({1})


# --- load -------------------------------------------------------------------------------------------


def check_checkpoint(r: Resume) -> dict[str, Any]:
    """The checkpoint is the one that was written: its content hash, recomputed from the row read now (with its
    parent's hash), is the stored one; and an `authority_ref` naming an approval (`approval:<id>`) names the
    approval the checkpoint records, of the checkpoint's own run. A row changed behind the service (a direct
    UPDATE as the database's owner) fails here: the run is blocked at `load`, the field named."""
    checkpoint = r.checkpoint
    if checkpoint is None:
        return {"content_hash": None}
    sealed = r.sealed
    parent_hash = sealed.parent_hash if sealed is not None else None
    if checkpoint.parent_id is not None and parent_hash is None:
        raise StepFailed(f"checkpoint {checkpoint.pk}'s parent {checkpoint.parent_id} is gone: its chain cannot be "
                         "verified", code="checkpoint_tampered", checkpoint=checkpoint.pk, field="parent")
    actual = checkpoint_hash(checkpoint, parent_hash=parent_hash, thread=r.run.ref)
    if actual != checkpoint.content_hash:
        raise StepFailed(f"checkpoint {checkpoint.pk}'s content_hash does not match its content (stored "
                         f"{checkpoint.content_hash[:12]}, recomputed {actual[:12]}): it was changed after it "
                         "was written", code="checkpoint_tampered", checkpoint=checkpoint.pk, field="content_hash",
                         stored_hash=checkpoint.content_hash, actual_hash=actual)
    ref = checkpoint.authority_ref
    if ref.startswith(APPROVAL_AUTHORITY):
        named = ref.removeprefix(APPROVAL_AUTHORITY)
        approval_run = sealed.approval_run_id if sealed is not None else None
        if named != str(checkpoint.approval_id) or approval_run not in (r.run.pk, checkpoint.run_id):
            raise StepFailed(f"checkpoint {checkpoint.pk}'s authority_ref {ref!r} does not name the approval it "
                             f"records ({checkpoint.approval_id}) of this run", code="checkpoint_tampered",
                             checkpoint=checkpoint.pk, field="authority_ref")
    return {"content_hash": checkpoint.content_hash}


# --- compatibility ----------------------------------------------------------------------------------


def check_compatibility(r: Resume) -> dict[str, Any]:
    """The checkpoint and task were written in a schema this worker understands, for the current plan."""
    checkpoint, task = r.checkpoint, r.task
    if checkpoint is not None:
        if checkpoint.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
            raise StepFailed(f"checkpoint schema_version {checkpoint.schema_version} is not supported "
                             f"(supported: {sorted(SUPPORTED_SCHEMA_VERSIONS)})")
        if checkpoint.resume_policy == ResumePolicy.MANUAL:
            raise StepFailed("the checkpoint's resume policy is manual: a person decides")
        recorded_framework = (checkpoint.state or {}).get("framework_version")
        if recorded_framework is not None and _major(recorded_framework) != _major(settings.HARNESS_FRAMEWORK_VERSION):
            raise StepFailed(f"the checkpoint was taken under framework version {recorded_framework}, this worker "
                             f"runs {settings.HARNESS_FRAMEWORK_VERSION}: a person decides whether it still holds",
                             category=FailureCategory.SEMANTIC)
    if task is not None:
        if task.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
            raise StepFailed(f"task schema_version {task.schema_version} is not supported")
        recorded = (checkpoint.state or {}).get("plan_version") if checkpoint is not None else None
        if recorded is not None and recorded != task.plan_version:
            raise StepFailed(f"stale checkpoint: it was taken at plan_version {recorded}, "
                             f"the task is at plan_version {task.plan_version}")
    return {"checkpoint_schema": checkpoint.schema_version if checkpoint else None,
            "task_schema": task.schema_version if task else None,
            "framework_version": settings.HARNESS_FRAMEWORK_VERSION}


def _major(version: object) -> str:
    return str(version).split(".", 1)[0]


# --- authority (before the lease) -------------------------------------------------------------------


def check_authority(r: Resume) -> None:
    """The records agree on who they belong to, and the authority behind the decision still holds now (seed 002,
    section 07): the project is not frozen, the approval's reviewer still has the reviewer role in this project
    (an active account, a member), and the token that asked for it is not revoked nor expired. Read with the load
    (worker.loading.Grant): no statement of its own."""
    run = r.run
    if r.approval is not None and (r.approval.run_id != run.pk or r.approval.project_id != run.project_id):
        raise StepFailed("the pending approval belongs to another run")
    if r.checkpoint is not None and r.checkpoint.project_id != run.project_id:
        raise StepFailed("the checkpoint belongs to another project")
    if run.session.status == SessionStatus.TERMINATED:
        raise StepFailed("the run's session is terminated")
    approval, grant = r.approval, r.grant
    if grant is not None and grant.project_frozen_at is not None:
        # Whatever the run resumes for: a frozen project acts on nothing until an admin unfreezes it, and then
        # a person retries the blocked run as any other.
        raise StepFailed(f"project_frozen: the project was frozen at {grant.project_frozen_at.isoformat()}",
                         code="project_frozen", category=FailureCategory.PERMISSION)
    if approval is None or grant is None or r.mode != ResumeMode.APPROVAL:
        return
    if grant.token_revoked_at is not None:
        raise StepFailed(f"the token that asked for approval {approval.pk} was revoked at "
                         f"{grant.token_revoked_at.isoformat()}", approval=approval.pk,
                         category=FailureCategory.PERMISSION)
    if grant.token_expired:
        raise StepFailed(f"the token that asked for approval {approval.pk} has expired", approval=approval.pk,
                         category=FailureCategory.PERMISSION)
    if approval.decided_by_id is not None and not grant.reviewer_holds_role:
        who = approval.decided_by.get_username() if approval.decided_by else approval.decided_by_id
        raise StepFailed(f"{who}, who decided approval {approval.pk}, no longer holds the reviewer role in this "
                         "project", approval=approval.pk, category=FailureCategory.PERMISSION)


# --- artifact fingerprints --------------------------------------------------------------------------


def check_artifacts(r: Resume) -> dict[str, Any]:
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


# --- approval preconditions -------------------------------------------------------------------------


def approval_overdue(approval: ApprovalRequest, now: dt.datetime) -> bool:
    return (approval.status == ApprovalStatus.PENDING and approval.expires_at is not None
            and approval.expires_at <= now)


def check_decision(r: Resume, *, now: dt.datetime) -> dict[str, Any]:
    """The decision is final, current and about exactly the action the run is waiting on (its audit record is
    `check_decision_audit`). An approval of an agent-executed tool that is overdue is the step's to expire (a
    write): it is checked after, as expired."""
    approval = r.approval
    if approval is None:
        raise StepFailed("the run waits for approval but has no pending approval")
    if (approval.status == ApprovalStatus.EXPIRED and not r.agent_executes) or approval_overdue(approval, now):
        raise StepFailed("the approval expired before a decision", approval=approval.pk)
    decided = (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED, *((ApprovalStatus.EXPIRED,) if r.agent_executes
                                                                    else ()))
    if approval.status not in decided:
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
    return {"approval": approval.pk, "decision": approval.status, "fingerprint": approval.approved_fingerprint,
            "executor": approval.executor}


def check_decision_audit(approval: ApprovalRequest, recorded: DecisionAudit | None) -> None:
    """The row must say what the reviewer's decision recorded in the append-only audit log.

    A direct UPDATE can rewrite the approval row so that it agrees with itself (approved arguments
    with their own fingerprint, or a rejection turned into an approval); it cannot rewrite the
    audit entry written in the decision's transaction, nor insert one the application's mac verifies
    (harness.audit): a forged or unchained entry stops the resume here.

    recorded: the approval's first decision entry, read by the load (worker.loading) with the row it checks,
    in one statement, and checked there against its mac and its links in the chain.
    """
    if approval.status == ApprovalStatus.EXPIRED:  # nobody decided: the audit log must say so too
        if recorded is not None:
            raise StepFailed(f"the approval says expired, the audit log records {recorded.action}",
                             approval=approval.pk)
        return
    if recorded is not None and recorded.untrusted is not None:
        raise StepFailed(f"the audit log's record of the decision cannot be trusted: {recorded.untrusted}",
                         approval=approval.pk)
    if recorded is None or recorded.action != f"approval.{approval.status}":
        raise StepFailed(f"the approval says {approval.status}, the audit log records "
                         f"{recorded.action if recorded else 'no decision'}", approval=approval.pk)
    if approval.status == ApprovalStatus.APPROVED and (recorded.data or {}).get("approved_fingerprint") != (
        approval.approved_fingerprint
    ):
        raise StepFailed("the approved fingerprint is not the one the reviewer's decision recorded (audit log)",
                         approval=approval.pk, approved_fingerprint=approval.approved_fingerprint,
                         recorded_fingerprint=(recorded.data or {}).get("approved_fingerprint"))


# --- argument schema ----------------------------------------------------------------------------------


def check_argument_schema(approval: ApprovalRequest | None) -> dict[str, Any]:
    """The approved arguments match the tool schema version the approval was validated against (issue 32): the
    version it names, not the tool's current one, so a schema registered since changes no approved action. An
    approval that names none (the tool declared no schema) is not checked and says so; a rejection or expiry
    runs nothing and is not checked either."""
    if approval is None or approval.status != ApprovalStatus.APPROVED:
        return {"checked": False}
    if approval.tool_schema_id is None or approval.tool_schema is None:
        return {"checked": False, "reason": "no declared schema: the arguments were not checked"}
    errors = argument_errors(approval.tool_schema.schema, approval.approved_arguments)
    if errors:
        first = errors[0]
        raise StepFailed(
            f"the approved arguments do not match {approval.tool}'s schema version {approval.tool_schema_version}: "
            f"{first.field or 'the arguments'}: {first.message}", category=FailureCategory.INVALID_INPUT,
            approval=approval.pk, field=first.field, schema_version=approval.tool_schema_version)
    return {"checked": True, "schema_version": approval.tool_schema_version}


# --- capability -------------------------------------------------------------------------------------


def check_capability(r: Resume) -> tuple[ToolAdapter | None, dict[str, Any]]:
    """The adapter for the approved tool exists now and takes these arguments; the plan's nodes have handlers.
    Returns the adapter (None when nothing is called) and the trace data."""
    data: dict[str, Any] = {}
    if r.agent_executes:  # the agent that asked runs the tool itself: no adapter to resolve here
        return None, {"adapter": None, "executor": "agent"}
    approval = r.approval if r.approved else None
    adapter = None
    if approval is not None:
        try:
            adapter = adapter_resolve(approval.tool)
        except AdapterConfigError as exc:
            raise StepFailed(str(exc), tool=approval.tool) from exc
        if adapter is None:
            raise StepFailed(f"no adapter is registered for the tool {approval.tool!r}", tool=approval.tool)
        problem = adapter.incompatibility(approval.approved_arguments)
        if problem:
            raise StepFailed(f"the adapter for {approval.tool!r} cannot take this action: {problem}")
        data["adapter"] = type(adapter).__name__
    if r.mode == ResumeMode.CONTINUE:
        if r.task is None:  # a run a worker left `running` without a task: no plan to continue
            raise StepFailed("the run has no task whose nodes the worker could drive")
        # A gate being repaired (worker.repair) is asked for again once its repair node is done: not a node to run.
        repaired_gate = ((r.run.cursor or {}).get("repair") or {}).get("gate")
        missing = [n for n in remaining_nodes(r.task.plan, r.task.completed_nodes)
                   if node_handler(n) is None and n != repaired_gate]
        if missing:
            raise StepFailed(f"no handler is registered for the nodes: {', '.join(missing)}", nodes=missing)
        data["nodes"] = remaining_nodes(r.task.plan, r.task.completed_nodes)
    return adapter, data


# --- not yet consumed -------------------------------------------------------------------------------


def check_not_consumed(effect: ExternalEffect) -> None:
    """The effect's result has not been consumed yet (the worker checks the row it locked; the dry run the row
    as it is)."""
    if effect.status == EffectStatus.CONSUMED:
        raise StepFailed(f"the effect's result was consumed already (receipt {effect.receipt})", effect=effect.pk)
