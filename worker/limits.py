"""The worker's check of a run's limits before a tool call or a node (runs_app.limits): a run over its budget
or past its deadline is blocked at `budget` or `deadline` before the call, never silently continued."""

from django.utils import timezone

from runs_app.limits import limit_exceeded
from runs_app.models import Run
from worker.state import StepFailed


def check_limits(run: Run) -> None:
    """Raise StepFailed naming the limit the run has reached (its row as the claim or the last read returned it)."""
    exceeded = limit_exceeded(run, now=timezone.now())
    if exceeded is not None:
        raise StepFailed(exceeded.reason, block_as=exceeded.step, category=exceeded.category)
