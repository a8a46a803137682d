"""Step `approval_preconditions`: the decision is final, current, and about exactly the pending action
(worker.checks.check_decision and check_decision_audit, which the approval page's dry run calls too)."""

import logging
from typing import Any

from django.utils import timezone

from harness.http.errors import ConflictError
from runs_app.services import approval_expire
from runs_app.services.approval_escalation import approval_escalate
from worker.checks import approval_overdue, check_decision, check_decision_audit
from worker.state import Resume, ResumeMode, StepFailed, Stop

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """The decision is final, current and about exactly the action the run is waiting on."""
    if r.mode != ResumeMode.APPROVAL:
        return {"approval": None}
    approval = r.approval
    if approval is None:
        raise StepFailed("the run waits for approval but has no pending approval")
    now = timezone.now()
    if r.agent_executes and approval_overdue(approval, now):
        # A policy that escalates routes it to its next group instead, as the recovery pass would: the run waits on.
        if approval_escalate(approval_id=approval.pk, now=now):
            raise Stop("the approval's time ran out: its policy escalated it to the next group")
        # The agent is told its approval expired (bound like a decision); nothing runs either way.
        try:
            r.approval = approval_expire(project=r.project_id, approval_id=approval.pk, run_id=r.run_id)
        except ConflictError:  # decided (or cancelled) just now, after the load read it: the next resume sees it
            raise Stop("the approval changed while the resume loaded it") from None
    data = check_decision(r, now=now)
    check_decision_audit(r.approval or approval, r.decision_audit)
    return data
