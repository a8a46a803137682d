"""What one resume carries from step to step, how a step says it failed, and its trace.

A step is a function of one `Resume`; it returns its trace data, or raises StepFailed (the run is
blocked naming the step), Stop (nothing to do, or another worker owns the run: end quietly) or Retry
(a transient failure: release the lease, the recovery pass retries). The trace is collected in
memory and written in batches, always in the transaction that commits what it reports.
"""

import logging
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from runs_app.models import (
    ApprovalExecutor,
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    ExternalEffect,
    Handoff,
    Run,
    Task,
)
from runs_app.resume import ResumeStep
from runs_app.services import (
    run_events_append,
)
from worker.adapters import ToolAdapter
from worker.handlers import is_worker_plan
from worker.loading import DecisionAudit, Grant, Sealed

log = logging.getLogger(__name__)


class ResumeMode(StrEnum):
    """What a resume binds, decided by its `load` step (worker.steps.load) from what the run waits on."""

    APPROVAL = "approval"  # a decided approval: its action executed once (or its rejection bound)
    HANDOFF = "handoff"  # a returned handoff's result (worker.handoff)
    CONTINUE = "continue"  # nothing to bind: drive the plan's remaining nodes


class ResumeOutcome(StrEnum):
    """How one resume ended (worker.pipeline.resume_run_by_id): the `outcome` label of the resume metrics."""

    DONE = "done"
    BLOCKED = "blocked"  # a step failed: the run is blocked naming it
    STOPPED = "stopped"  # nothing to do, or another worker owns the run
    RETRY = "retry"  # a transient failure: the recovery pass tries again
    ERROR = "error"  # an exception no step expected (worker.tasks)


class StepFailed(Exception):
    """A re-validation failed: the run goes to `blocked` naming the step.

    `block_as` names the block when it is not the step's own name (`unknown_effect`, `budget`,
    `deadline`: what a person must decide, not where it was noticed); `category` is the failure's kind
    (runs_app.models.FailureCategory), recorded on the run.
    """

    def __init__(self, reason: str, *, block_as: str = "", category: str = "", **detail: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail
        self.block_as = block_as
        self.category = category
        # Set by the pipeline (worker.pipeline): the step that failed (a node driven after the binding
        # fails as `continue`), and whether the run is blocked already.
        self.step = block_as or ResumeStep.CONTINUE
        self.handled = False

    def name(self, step: str) -> None:
        """The pipeline names the step that raised it, unless the failure names its block itself."""
        self.step = self.block_as or step


class Stop(Exception):
    """Nothing to do, or someone else owns the run: end without blocking."""


class Retry(Exception):
    """A transient failure (the tool is unreachable): release the lease, the recovery pass retries."""


@dataclass
class Resume:
    run_id: int
    owner: str
    lease_seconds: int
    # The load step sets it before any other step runs; typed as set so that the steps need no check.
    run: Run = field(default=None)  # type: ignore[assignment]
    task: Task | None = None
    checkpoint: Checkpoint | None = None
    approval: ApprovalRequest | None = None
    mode: ResumeMode | None = None  # set by the load step
    handoff: Handoff | None = None  # the returned handoff the run waits on (ResumeMode.HANDOFF, worker.handoff)
    leased: bool = False
    claimed: bool = False
    claimed_at: float = 0.0  # time.monotonic() of the claim
    adapter: ToolAdapter | None = None
    effect: ExternalEffect | None = None
    # The effect is one a run this run was forked from consumed (runs_app.services.forks): its stored
    # result and receipt are bound, nothing is called or consumed again.
    inherited: bool = False
    result: Any = None
    bound: dict[str, Any] | None = None  # the effect's bound result (JSON): receipt, hash
    context: dict[str, Any] = field(default_factory=dict)  # the sparse context snapshot (JSON)
    steps_ok: int = 0
    start_counted: bool = False
    dispatched: ExternalEffect | None = None  # dispatched (committed) and not called yet
    bind_data: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # trace not written yet
    metrics_written: bool = False
    # The run's move that `continue` decided: made by the pipeline as the binding transaction's last
    # statement, with the trace and the metrics (worker.pipeline._move_on), so the run's row is written once.
    move: dict[str, Any] | None = None
    # The pending approval's first decision in the audit log, read and checked with the load.
    decision_audit: DecisionAudit | None = None
    # What the run waits on, as its checkpoint at the load said (`pending_gate`): the repair it declares, say.
    gate: Any = None
    # The pending approval's authority as it is now (the reviewer's role, the asking token), read with the load.
    grant: Grant | None = None
    # What the checkpoint's hash and authority_ref are verified against, read with the load (worker.checks).
    sealed: Sealed | None = None
    # A person abandoned the approved action's effect (its outcome could not be proven): bound like a rejection.
    abandoned: bool = False
    # The dispatched effect's outcome is unknown and its adapter can look it up by key: `call` asks first.
    look_up_first: bool = False

    @property
    def project_id(self) -> int:
        return self.run.project_id

    @property
    def approved(self) -> bool:
        return self.approval is not None and self.approval.status == ApprovalStatus.APPROVED

    @property
    def agent_executes(self) -> bool:
        """The approval's tool is the asking agent's to run: the resume binds the decision, calls nothing."""
        return (self.mode == ResumeMode.APPROVAL and self.approval is not None
                and self.approval.executor == ApprovalExecutor.AGENT)

    @property
    def worker_driven(self) -> bool:
        if self.agent_executes:  # the agent runs the approved tool, so the run goes back to the agent
            return False
        return is_worker_plan(self.task, gate=self.run.current_node if self.mode == ResumeMode.APPROVAL else "")


def unsettled(metrics: dict[str, Any] | None, counter: str) -> int:
    """`metrics[counter]` ("starts" or "attempts") since the run's last finished resume settled them."""
    metrics = metrics or {}
    return int(metrics.get(counter) or 0) - int(metrics.get(f"settled_{counter}") or 0)


def trace(r: Resume, step: str, ok: bool, reason: str = "", **data: Any) -> None:
    """Collect a step's trace event; `flush` writes what was collected, in the step's transaction."""
    r.events.append(trace_event(r, step, ok, reason, **data))


def trace_event(r: Resume, step: str, ok: bool, reason: str = "", **data: Any) -> tuple[str, dict[str, Any]]:
    """A step's trace event (kind, data), for a statement that writes it with its own write."""
    payload = {"ok": ok, "owner": r.owner, **data}
    if reason:
        payload["reason"] = reason
    return f"resume.{step}", payload


def flush(r: Resume) -> None:
    if r.events and r.run is not None:
        run_events_append(project=r.project_id, run_id=r.run_id, events=r.events)
    r.events = []
