"""Step `load`: load the durable run, its task, latest checkpoint and pending approval; decide the mode."""

import logging
from typing import Any

from django.conf import settings
from django.utils import timezone

from runs_app.models import (
    ApprovalStatus,
    ExternalEffect,
    Handoff,
    HandoffStatus,
    Run,
    RunStatus,
)
from runs_app.resume_due import RETRY_MARK, UNKNOWN_EFFECT, WORKER_OWNER_PREFIX, decided_effects
from runs_app.services import (
    run_count_start,
)
from worker import faults
from worker.checks import check_checkpoint
from worker.handlers import is_worker_plan
from worker.loading import load_run
from worker.state import Resume, ResumeMode, StepFailed, Stop, unsettled

log = logging.getLogger(__name__)

# A blocked run is resumed only from a block a person decides and has decided: an effect whose outcome was
# unknown (runs_app.services.effects.effect_resolve), its approval's action then bound as usual, or an approval's
# resume an operator retries after a fix (runs_app.services.run_actions, RETRY_MARK).
RESUMABLE_STATUSES = (RunStatus.WAITING_APPROVAL, RunStatus.WAITING_EXTERNAL, RunStatus.RUNNING, RunStatus.BLOCKED)


def count_start(r: Resume) -> None:
    """Count this start before the load (a poisoned run may kill the worker right there) and stop
    a run whose starts keep dying before the claim, where `attempts` is counted.

    A duplicate message, while another worker's lease is live, is not a start. A start that dies
    before the claim leaves the lease free, so the broker's redelivery and the recovery pass would
    start it again forever; once more starts than the attempt limit never became an attempt
    (a claim), the run is blocked instead.
    """
    run = run_count_start(run_id=r.run_id, owner=r.owner, statuses=RESUMABLE_STATUSES, blocked_steps=(UNKNOWN_EFFECT,))
    r.start_counted = True
    if run is None:
        return
    metrics = run.metrics or {}
    unclaimed = unsettled(metrics, "starts") - unsettled(metrics, "attempts") - 1  # before this start
    if unclaimed >= settings.HARNESS_RESUME_MAX_ATTEMPTS:
        r.run = run
        raise StepFailed(f"the resume started {unclaimed} times without reaching its claim (the worker died "
                         f"before it each time)", starts=metrics["starts"])


def run(r: Resume) -> dict[str, Any]:
    """Load the durable run, its task, latest checkpoint and pending approval; decide what to resume."""
    if not r.start_counted:  # the orchestrator counts it before its transaction, so that it commits first
        count_start(r)
    faults.point("load")
    loaded = load_run(r.run_id)  # one statement, with the approval's decision in the audit log
    if loaded is None:
        raise Stop(f"run {r.run_id} does not exist")
    run, r.decision_audit, r.grant, r.sealed = loaded
    r.run, r.task, r.approval = run, run.task, run.pending_approval
    if run.status == RunStatus.WAITING_APPROVAL:
        approval = run.pending_approval
        if approval is not None and approval.status == ApprovalStatus.PENDING and not (
            approval.expires_at and approval.expires_at <= timezone.now()
        ):
            raise Stop("the approval is not decided yet")
        r.mode = ResumeMode.APPROVAL
    elif run.status == RunStatus.WAITING_EXTERNAL:
        # A second statement only here: the approval's resume keeps its one-statement load.
        r.handoff = Handoff.objects.filter(project_id=run.project_id, origin_run_id=run.pk,
                                           status=HandoffStatus.RETURNED).first()
        if r.handoff is None:
            raise Stop("the run waits on a handoff that has not returned")
        r.mode = ResumeMode.HANDOFF
    elif run.status == RunStatus.RUNNING and (
        run.lease_owner.startswith(WORKER_OWNER_PREFIX) or is_worker_plan(run.task)
    ):
        r.mode = ResumeMode.CONTINUE
    elif run.status == RunStatus.BLOCKED and retry_marked(run) and run.pending_approval is not None:
        r.mode = ResumeMode.APPROVAL  # an operator retries the approval's resume after a fix: every check again
    elif run.status == RunStatus.BLOCKED and run.blocked_step == UNKNOWN_EFFECT and run.pending_approval is not None:
        if not effect_decided(run.pk, run.pending_approval.pk):
            raise Stop("a person has not decided the effect whose outcome is unknown yet")
        r.mode = ResumeMode.APPROVAL
    else:
        raise Stop(f"nothing to resume in a {run.status} run")
    checkpoint = run.last_checkpoint
    if checkpoint is None and run.task is not None:
        checkpoint = run.task.latest_checkpoint
    if checkpoint is not None and checkpoint.run_id not in (None, run.pk) and checkpoint.task_id != run.task_id:
        raise StepFailed(f"checkpoint {checkpoint.pk} is not in this run's lineage")
    r.checkpoint = checkpoint
    sealed = check_checkpoint(r)  # its content hash and authority_ref: the row is the one that was written
    r.gate = checkpoint.pending_gate if checkpoint is not None else None
    return {"mode": r.mode, "status": run.status, "version": run.version,
            "checkpoint": checkpoint.pk if checkpoint else None, **sealed,
            "approval": r.approval.pk if r.approval else None,
            **({"handoff": r.handoff.pk} if r.handoff is not None else {})}


def retry_marked(run: Run) -> bool:
    return isinstance(run.error, dict) and RETRY_MARK in run.error


def effect_decided(run_id: int, approval_id: int) -> bool:
    return ExternalEffect.objects.filter(decided_effects(), run_id=run_id, approval_id=approval_id).exists()
