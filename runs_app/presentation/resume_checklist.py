"""The resume checklist a reviewer sees on the decision page: each check the worker runs after a decision, with
what the resume's trace says about it, and whether the page should keep polling.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from runs_app.models import Run, RunEvent, RunStatus
from runs_app.resume import StepState, resume_checks

# What the resume worker re-checks before it continues (DESIGN.md "Resume"), shown to a reviewer: resume_checks,
# runs_app.resume.ResumeStep's names and labels, the list the worker's registry must match (worker.registry);
# each step writes `resume.<key>`.


@dataclass(frozen=True)
class StepProgress:
    key: str
    text: str
    state: StepState
    reason: str


def resume_progress(trace: Sequence[RunEvent], executor: str = "worker") -> list[StepProgress]:
    """Each resume check that applies to the approval's `executor` with what the trace says about it (the latest
    event of each step wins)."""
    latest: dict[str, dict[str, Any]] = {}  # each step's event data: the JSON the worker wrote
    for event in trace:
        if event.kind.startswith("resume."):
            latest[event.kind.removeprefix("resume.")] = event.data or {}
    progress = []
    for key, text in resume_checks(executor):
        data = latest.get(key)
        state = StepState.WAITING if data is None else (StepState.PASSED if data.get("ok") else StepState.FAILED)
        progress.append(StepProgress(key, text, state, str((data or {}).get("reason", ""))))
    return progress


def resume_in_progress(run: Run) -> bool:
    """Whether the decision page should keep polling: the worker has not finished with the run yet."""
    return run.status == RunStatus.WAITING_APPROVAL or bool(run.lease_owner)
