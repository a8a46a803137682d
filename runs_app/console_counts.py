"""The runs app's counts for the console's navigation and overview (read by console.context_processors).

Each takes the ids of the projects the viewer may see and answers one number.
"""

from collections.abc import Sequence

from runs_app.models import HumanQuestion, QuestionStatus
from runs_app.selectors.overview import blocked_run_count, pending_approval_count


def pending_approvals(project_ids: Sequence[int]) -> int:
    """Approvals waiting for a reviewer, counted up to 1,001 (shown as "1000+" above 1,000): the inbox's own count
    (runs_app.selectors.approvals.pending_count) over the projects it is given. console.context_processors
    asks it twice, under two names: over every project the user sees (`approvals_waiting`: what /approvals/
    lists) and over those where the user reviews (`pending_approvals`: the badge, theirs to decide)."""
    return pending_approval_count(project_ids=project_ids)


def blocked_runs(project_ids: Sequence[int]) -> int:
    """Runs a failed resume check left blocked, waiting for a person."""
    return blocked_run_count(project_ids=project_ids)


def pending_questions(project_ids: Sequence[int]) -> int:
    """Questions to people waiting for an answer (issue 33), counted up to 1,001 like the approvals."""
    return HumanQuestion.objects.for_projects(project_ids).filter(status=QuestionStatus.PENDING)[:1001].count()
