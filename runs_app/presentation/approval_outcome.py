"""What an approval's page says it came to, in one place for every part of the page (the top card's badge, its
headings, the decision box): an approved action the agent runs itself is not "done" until the agent says it ran.
"""

from dataclasses import dataclass

from runs_app.models import ApprovalExecutor, ApprovalOutcome, ApprovalRequest, ApprovalStatus


class OutcomeState:
    PENDING = "pending"
    APPROVED = "approved"  # the resume worker executes it: the checklist and trace say how far it got
    AWAITING_AGENT = "approved_waiting_agent"
    RAN = "approved_ran"
    NOT_RUN = "approved_not_run"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class ApprovalOutcomeView:
    state: str  # an OutcomeState (data-outcome on the page)
    text: str  # the badge: "approved, waiting for the agent"
    heading: str  # the action card's heading: "The pending action", "The approved action", ...
    reason: str = ""  # the agent's reason for an action not run
    waiting_for_agent: bool = False  # the page keeps polling until the agent reports


_HEADINGS: dict[str, str] = {
    ApprovalStatus.PENDING: "The pending action",
    ApprovalStatus.APPROVED: "The approved action",
    ApprovalStatus.REJECTED: "The rejected action",
    ApprovalStatus.EXPIRED: "The expired action",
    ApprovalStatus.CANCELLED: "The cancelled action",
}


def approval_outcome(approval: ApprovalRequest) -> ApprovalOutcomeView:
    status = str(approval.status)
    heading = _HEADINGS.get(status, "The action")
    if status != ApprovalStatus.APPROVED:
        return ApprovalOutcomeView(status, status, heading)
    if approval.outcome == ApprovalOutcome.NOT_RUN and approval.standing_approval_id is not None:
        # The standing approval behind it no longer stood at the resume: a person was asked again.
        return ApprovalOutcomeView(OutcomeState.NOT_RUN, "approved by a standing approval, not run",
                                   "The approved action (not run)", approval.outcome_reason)
    if approval.executor != ApprovalExecutor.AGENT:
        return ApprovalOutcomeView(OutcomeState.APPROVED, "approved", heading)
    if approval.outcome == ApprovalOutcome.RAN:
        return ApprovalOutcomeView(OutcomeState.RAN, "approved, ran", heading)
    if approval.outcome == ApprovalOutcome.NOT_RUN:
        return ApprovalOutcomeView(OutcomeState.NOT_RUN, "approved, not run", "The approved action (not run)",
                                   approval.outcome_reason)
    return ApprovalOutcomeView(OutcomeState.AWAITING_AGENT, "approved, waiting for the agent", heading,
                               waiting_for_agent=True)
