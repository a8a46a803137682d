"""Step `approval_preconditions`: the decision is final, current, and about exactly the pending action."""

import logging
from typing import Any

from django.utils import timezone

from harness.canonical import action_fingerprint
from harness.errors import ConflictError
from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
)
from runs_app.services import approval_expire
from worker.loading import DecisionAudit
from worker.state import Resume, StepFailed, Stop

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """The decision is final, current and about exactly the action the run is waiting on."""
    if r.mode != "approval":
        return {"approval": None}
    approval = r.approval
    if approval is None:
        raise StepFailed("the run waits for approval but has no pending approval")
    overdue = (approval.status == ApprovalStatus.PENDING and approval.expires_at is not None
               and approval.expires_at <= timezone.now())
    if r.agent_executes and overdue:
        # The agent is told its approval expired (bound like a decision); nothing runs either way.
        try:
            approval = r.approval = approval_expire(project=r.project_id, approval_id=approval.pk, run_id=r.run_id)
        except ConflictError:  # decided (or cancelled) just now, after the load read it: the next resume sees it
            raise Stop("the approval changed while the resume loaded it") from None
    elif approval.status == ApprovalStatus.EXPIRED or overdue:
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
    _check_against_audit(approval, r.decision_audit)
    return {"approval": approval.pk, "decision": approval.status, "fingerprint": approval.approved_fingerprint,
            "executor": approval.executor}


def _check_against_audit(approval: ApprovalRequest, recorded: DecisionAudit | None) -> None:
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
