"""An agent-executed approval's outcome: the agent that runs the approved tool itself says whether it ran it.

The decision is the reviewer's and final; what the agent did with it is the agent's to say, once. Until it does,
the console shows an approved agent action as "approved, waiting for the agent", never as done.
"""

from django.db import transaction
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, NotFoundError, ValidationFailed
from harness.models import Project
from runs_app.fencing import UNFENCED, LeaseOwner
from runs_app.models import ApprovalExecutor, ApprovalOutcome, ApprovalRequest, ApprovalStatus
from runs_app.services.runs import run_event_append

REPORTABLE = (ApprovalOutcome.RAN, ApprovalOutcome.NOT_RUN)


def approval_report_outcome(
    *,
    project: Project | int,
    approval_id: int,
    outcome: str,
    reason: str = "",
    actor: Actor,
    lease_owner: LeaseOwner = UNFENCED,
) -> ApprovalRequest:
    """Record that the agent ran the approved action (`ran`) or did not (`not_run`, with its reason).

    1. Only an approved approval with executor "agent" has an outcome; `not_run` needs a reason.
    2. One conditional UPDATE from "not reported" (so two reports cannot both stand), the run's
       `approval.outcome` event fenced on the run's lease like every agent write to a run (a refused fence
       writes nothing, the outcome neither), and the audit entry: one transaction.
    3. The same report again (a client retrying after a lost reply) answers the recorded row; a different one is
       409 `outcome_reported`.
    """
    if outcome not in REPORTABLE:
        raise ValidationFailed("outcome is 'ran' or 'not_run'.", code="invalid")
    reason = reason.strip()
    if outcome == ApprovalOutcome.NOT_RUN and not reason:
        raise ValidationFailed("An action not run needs the reason.", code="reason_required")
    approvals = ApprovalRequest.objects.filter(project=project, pk=approval_id)
    with transaction.atomic():
        written = approvals.filter(executor=ApprovalExecutor.AGENT, status=ApprovalStatus.APPROVED,
                                   outcome=ApprovalOutcome.UNREPORTED).update(
            outcome=outcome, outcome_reason=reason, outcome_at=timezone.now(), updated_at=timezone.now())
        current = approvals.select_related("decided_by").first()
        if current is None:
            raise NotFoundError(f"Approval {approval_id} does not exist.")
        if not written:
            if current.outcome == outcome and current.outcome_reason == reason:
                return current  # the same report again
            raise _refusal(current)
        run_event_append(project=current.project_id, run_id=current.run_id, kind="approval.outcome",
                         data={"approval": current.pk, "outcome": outcome, "reason": reason},
                         lease_owner=lease_owner)
        audit_record(project=current.project_id, actor=actor, action=f"approval.{outcome}", target=current,
                     data={"outcome": outcome, "reason": reason, "fingerprint": current.approved_fingerprint})
        return current


def _refusal(current: ApprovalRequest) -> ConflictError:
    if current.executor != ApprovalExecutor.AGENT:
        return ConflictError("The resume worker runs this approval's action: it has no outcome to report.",
                             code="not_agent_executed", current_status=current.status)
    if current.status != ApprovalStatus.APPROVED:
        return ConflictError(f"This approval is {current.status}: only an approved action has an outcome.",
                             code="not_approved", current_status=current.status)
    return ConflictError(f"The outcome was reported already ({current.outcome}).", code="outcome_reported",
                         current_status=current.status, outcome=current.outcome)
