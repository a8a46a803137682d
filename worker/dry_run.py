"""The resume's dry run (issue 30, part 5): the checks the resume of an approval would run that need no lease, no
write and no call, run on the state the resume would load, before the reviewer decides.

The same code as the worker's (worker.checks, and worker.limits for the budget and the deadline): the load is
worker.loading.load_run, the statement the resume's `load` runs; the checks are the functions its steps call.
A pending approval is checked as the decision being made would leave it: approved as asked, by the reviewer
looking at it, now. What only the decision or the resume itself can tell is `unknown` (cannot know yet): the
decision's audit entry (written by the decision), the lease (taken by the resume), the call's outcome.

Each line says which step would block the run (`step`, the run's `blocked_step` then) and why. It reads two
statements (the load and the approval's effect) and writes nothing.
"""

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from runs_app.models import ApprovalExecutor, ApprovalRequest, ApprovalStatus, ExternalEffect
from runs_app.resume import AGENT_SKIPS, CheckState, DryRun, DryRunLine, ResumeStep
from worker import checks
from worker.limits import check_limits
from worker.loading import load_run
from worker.state import Resume, ResumeMode, StepFailed


def _line(key: str, label: str, step: str, check: Callable[[], Any], *, passed: str = "") -> DryRunLine:
    try:
        check()
    except StepFailed as exc:
        exc.name(step)
        return DryRunLine(key, label, CheckState.FAIL, exc.reason, exc.step)
    return DryRunLine(key, label, CheckState.PASS, passed, step)


def resume_dry_run(approval: ApprovalRequest, *, reviewer_id: int | None, reviewer_holds_role: bool) -> DryRun:
    """What the resume of `approval`'s run would find if the approval were approved now by `reviewer_id` (for a
    decided approval: as decided)."""
    loaded = load_run(approval.run_id)
    if loaded is None:
        return DryRun(())
    run, audit, grant, sealed = loaded
    now = timezone.now()
    r = Resume(run_id=run.pk, owner="dry-run", lease_seconds=0)
    r.run, r.task, r.mode, r.sealed, r.decision_audit = run, run.task, ResumeMode.APPROVAL, sealed, audit
    r.checkpoint = run.last_checkpoint or (run.task.latest_checkpoint if run.task is not None else None)
    pending = run.pending_approval
    if pending is None or pending.pk != approval.pk:  # the run no longer waits on this approval
        return DryRun((DryRunLine("load", "The run waits on this approval", CheckState.FAIL,
                                  f"the run is {run.status} and waits on no approval or another one",
                                  ResumeStep.LOAD),))
    undecided = pending.status == ApprovalStatus.PENDING
    hypothetical = undecided and not checks.approval_overdue(pending, now)
    if hypothetical:  # as the decision would leave it: approved as asked, by this reviewer
        pending = copy.copy(pending)
        pending.status = ApprovalStatus.APPROVED
        pending.approved_arguments, pending.approved_fingerprint = pending.arguments, pending.action_fingerprint
        pending.decided_by_id = reviewer_id
        grant = dataclasses.replace(grant, reviewer_holds_role=reviewer_holds_role)
    r.approval = pending
    effect = ExternalEffect.objects.filter(project_id=run.project_id, approval_id=approval.pk).first()
    lines = [
        _line("checkpoint", "The checkpoint is the one written (content hash, authority_ref)", ResumeStep.LOAD,
              lambda: checks.check_checkpoint(r)),
        _line("compatibility", "The schema, plan and framework versions are compatible", ResumeStep.COMPATIBILITY,
              lambda: checks.check_compatibility(r)),
        _line("authority", "The authority holds (project not frozen, reviewer's role, asking token)",
              ResumeStep.AUTHORITY_LEASE, lambda: checks.check_authority(r)),
        _line("artifact_fingerprints", "The artifacts are the ones the checkpoint saw",
              ResumeStep.ARTIFACT_FINGERPRINTS, lambda: checks.check_artifacts(r)),
        _line("approval_preconditions", "The decision is current and about exactly the pending action",
              ResumeStep.APPROVAL_PRECONDITIONS, lambda: checks.check_decision(r, now=now)),
        DryRunLine("decision_audit", "The decision's audit entry says the same", CheckState.UNKNOWN,
                   "cannot know yet: the decision writes it", ResumeStep.APPROVAL_PRECONDITIONS) if undecided else
        _line("decision_audit", "The decision's audit entry says the same", ResumeStep.APPROVAL_PRECONDITIONS,
              lambda: checks.check_decision_audit(pending, audit)),
        _line("argument_schema", "The approved arguments match the tool's declared schema",
              ResumeStep.ARGUMENT_SCHEMA, lambda: checks.check_argument_schema(pending),
              passed="" if pending.tool_schema_id is not None
              else "no declared schema: the arguments were not checked"),
        _line("capability", "The tool's adapter is configured and takes these arguments", ResumeStep.CAPABILITY,
              lambda: checks.check_capability(r)),
        _line("not_yet_consumed", "The action's result was not consumed already", ResumeStep.NOT_YET_CONSUMED,
              lambda: checks.check_not_consumed(effect) if effect is not None else None,
              passed="" if effect is not None else "no effect is recorded under the approval's key yet"),
        _line("limits", "The run has budget and time left (budget, deadline)", ResumeStep.BIND_RESULT,
              lambda: check_limits(run)),
        DryRunLine("lease", "One owner takes the lease, then the action runs once", CheckState.UNKNOWN,
                   "cannot know yet: the resume takes the lease and makes the call", ResumeStep.AUTHORITY_LEASE),
    ]
    if pending.executor == ApprovalExecutor.AGENT:
        # The agent runs its tool itself: no adapter, no effect of the worker's, no call (runs_app.resume.AGENT_SKIPS).
        lines = [line for line in lines if line.step not in AGENT_SKIPS and line.key != "lease"]
        lines.append(DryRunLine("lease", "One owner takes the lease, binds the decision and hands the run back to "
                                "the agent, which runs the action itself", CheckState.UNKNOWN,
                                "cannot know yet: the resume takes the lease", ResumeStep.AUTHORITY_LEASE))
    return DryRun(tuple(lines))
