"""What a run's resume is, declared where the run lives: its steps in order, what a check can say, and the shape of
the approval page's dry run. The resume worker carries it out (worker.registry gives each step its module);
the console reads it from here.

runs_app sits below the worker and imports none of it (tests/test_architecture.py): the vocabulary both share
lives down here, and the one piece only the worker can compute, the dry run, is a hook it registers at start
(worker.apps), so the approval page asks for it without importing the app above it.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured
from django.db import models

if TYPE_CHECKING:
    from runs_app.models import ApprovalRequest


class ResumeStep(models.TextChoices):
    """The resume's re-validation (DESIGN.md "Resume"), in the order it runs; the label is the console's checklist.

    Each step writes a `resume.<value>` trace event; a run blocked by one names it in `blocked_step`.
    """

    LOAD = "load", "Load the durable run and its latest checkpoint"
    COMPATIBILITY = "compatibility", "Check the schema and version are compatible"
    AUTHORITY_LEASE = "authority_lease", "Check authority and take the lease (one owner)"
    SPARSE_CONTEXT = "sparse_context", "Rebuild a sparse context snapshot (recorded)"
    ARTIFACT_FINGERPRINTS = "artifact_fingerprints", "Verify the artifact fingerprints"
    APPROVAL_PRECONDITIONS = "approval_preconditions", "Verify the approved fingerprint is the pending action's"
    ARGUMENT_SCHEMA = "argument_schema", "Validate the approved arguments against the tool's schema version"
    CAPABILITY = "capability", "Re-resolve the tool adapter for the pending work"
    BIND_RESULT = "bind_result", "Execute the approved action once, or bind its returned result"
    NOT_YET_CONSUMED = "not_yet_consumed", "Verify the effect was not consumed already"
    CONTINUE = "continue", "Continue from the saved cursor"
    CHECKPOINT = "checkpoint", "Checkpoint again"


# The approval page's checklist: each step's name and label, in order.
RESUME_CHECKS: tuple[tuple[str, str], ...] = tuple((step.value, step.label) for step in ResumeStep)

# An approval the agent executes itself (executor "agent"): the worker resolves no adapter and consumes no effect
# (worker.checks.check_capability, worker.steps.not_yet_consumed: their events say so), and what it does at
# bind_result and continue is hand the decision back; the checklist names only what happens.
AGENT_SKIPS = frozenset({ResumeStep.CAPABILITY.value, ResumeStep.NOT_YET_CONSUMED.value})
AGENT_LABELS = {
    ResumeStep.BIND_RESULT.value: "Bind the decision to the run for the agent (the worker runs nothing)",
    ResumeStep.CONTINUE.value: "Hand the run back to the agent, which runs the approved action itself",
}


def resume_checks(executor: str) -> tuple[tuple[str, str], ...]:
    """The checklist for an approval of `executor` ("worker" or "agent"): the steps that apply, with their labels."""
    if executor != "agent":
        return RESUME_CHECKS
    return tuple((key, AGENT_LABELS.get(key, label)) for key, label in RESUME_CHECKS if key not in AGENT_SKIPS)


class StepState(models.TextChoices):
    """What a finished or running resume's trace says about one step (the decision page's live checklist)."""

    PASSED = "passed"
    FAILED = "failed"
    WAITING = "waiting"  # no event of the step yet


class CheckState(models.TextChoices):
    """What the dry run says about one check before the decision."""

    PASS = "pass"  # noqa: S105 - a check's state, not a password
    FAIL = "fail"
    UNKNOWN = "unknown"  # only the decision or the resume itself can tell


@dataclass(frozen=True)
class DryRunLine:
    key: str  # the check's name (its line on the page: data-check)
    label: str
    state: CheckState
    reason: str = ""
    step: str = ""  # the step that would block the run when it fails (the run's `blocked_step`)


@dataclass(frozen=True)
class DryRun:
    lines: tuple[DryRunLine, ...]

    @property
    def failing(self) -> tuple[DryRunLine, ...]:
        return tuple(line for line in self.lines if line.state == CheckState.FAIL)

    @property
    def passes(self) -> bool:
        return not self.failing


# (approval, reviewer_id, reviewer_holds_role) -> what the resume of the approval's run would find if it were
# approved now by that reviewer.
DryRunner = Callable[["ApprovalRequest", int | None, bool], DryRun]
_dry_runner: list[DryRunner] = []


def dry_runner_register(runner: DryRunner) -> None:
    """The resume worker's dry run (worker.dry_run), registered by its AppConfig.ready; a second registration
    replaces the first (a reloaded app)."""
    _dry_runner[:] = [runner]


def resume_dry_run(approval: "ApprovalRequest", *, reviewer_id: int | None, reviewer_holds_role: bool) -> DryRun:
    if not _dry_runner:  # the worker is an installed app in every configuration (config.settings)
        raise ImproperlyConfigured("No resume dry run is registered: the worker app is not installed.")
    return _dry_runner[0](approval, reviewer_id, reviewer_holds_role)
