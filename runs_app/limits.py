"""A run's limits: its token and cost budgets and its deadline (seed 001, RunState; DESIGN.md "Context, usage").

A run whose usage has reached a budget has nothing left for its next model or tool call, and a run past
its deadline has no time left for one: either is stopped, blocked at the named step `budget` or `deadline`,
before that call, never silently continued. Pure: the callers hold the run's row already (the usage report's
write returns it, the worker's claim returns it), so a check costs no statement.
"""

import datetime as dt
from dataclasses import dataclass

from runs_app.models import FailureCategory, Run

BUDGET, DEADLINE = "budget", "deadline"


@dataclass(frozen=True)
class Exceeded:
    step: str  # BUDGET or DEADLINE: the run's `blocked_step`
    reason: str
    category: str = FailureCategory.PERMISSION  # the run has no allowance left: someone must grant more


def limit_exceeded(run: Run, *, now: dt.datetime) -> Exceeded | None:
    """The first limit the run has reached, or None."""
    if run.token_budget is not None and run.tokens_used >= run.token_budget:
        return Exceeded(BUDGET, f"the run used {run.tokens_used} tokens of its budget of {run.token_budget}")
    if run.cost_budget is not None and run.cost_used >= run.cost_budget:
        return Exceeded(BUDGET, f"the run cost {run.cost_used} of its budget of {run.cost_budget}")
    if run.deadline is not None and run.deadline <= now:
        return Exceeded(DEADLINE, f"the run's deadline {run.deadline.isoformat()} has passed")
    return None
