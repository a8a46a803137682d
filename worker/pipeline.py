"""The resume pipeline (DESIGN.md "Resume"): a re-validation, never "continue from chat memory".

`resume_run_by_id` runs the steps of worker.registry in order and each leaves a `resume.<step>` trace
event on the run. The first failing step (StepFailed) moves the run to `blocked` naming that step,
and nothing is executed after it. `Stop` ends a resume quietly without blocking: there is nothing
to do, or another worker owns the run.

The trace is collected in memory and written in batches (one statement each), always in the
transaction that commits the steps' effects, so an event is never later than what it reports. A
resume of an approval is four transactions: the start count; load to dispatch (committed before the
call); the delivery; the binding (consume, checkpoint, then the run's one write: its move, the trace and
the metrics in one statement, `_move_on`). With nothing to call (a rejection, an already delivered
result, an approval whose tool the agent runs itself) there is no delivery: three.

Exactly-once of the approved action rests on the ExternalEffect record and the idempotency key:
intend -> dispatch (committed before the call) -> call -> deliver (committed) -> consume, where the
consumption commits in the same transaction that binds the result to the run. A crash at any point
leaves a state the next resume reads: delivered or consumed effects are never called again; an
effect left `dispatched` becomes `unknown`, and is sent again under the same key only when its adapter
honours idempotency keys, asked about when the adapter can look it up by key, and otherwise left to a
person (the run blocks at `unknown_effect`; worker.steps.bind_result).
"""

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import transaction

from harness.actors import Actor
from harness.http.errors import ConflictError
from runs_app.fencing import UNFENCED
from runs_app.models import (
    FailureCategory,
    NodeExecution,
    Run,
    RunStatus,
)
from runs_app.resume import ResumeStep
from runs_app.services import (
    run_bind_result,
    run_metrics_merge,
    run_reblock,
    run_release,
    run_transition,
)
from worker import faults
from worker.drive import drive_nodes
from worker.lease import worker_owner
from worker.registry import BINDING, CALL, PRE_CALL, STEPS
from worker.repair import route_to_repair
from worker.state import Resume, ResumeMode, ResumeOutcome, Retry, StepFailed, Stop, flush, trace
from worker.steps.load import count_start

log = logging.getLogger(__name__)

# What the pipeline calls of a step (worker.registry): its trace data, or None when it traces itself later.
StepRun = Callable[[Resume], dict[str, Any] | None]

_bind = next(step for step in STEPS if step.phase == CALL)
_bind_module = _bind.module
# The pre-call transaction ends with the approved action's dispatch, committed before the call.
PRE_CALL_STEPS: tuple[tuple[str, StepRun], ...] = (
    *((step.name, step.module.run) for step in STEPS if step.phase == PRE_CALL), (_bind.name, _bind_module.dispatch))
BINDING_STEPS: tuple[tuple[str, StepRun], ...] = tuple(
    (step.name, step.module.run) for step in STEPS if step.phase == BINDING)


@contextmanager
def _failing_as(name: str) -> Iterator[None]:
    """A StepFailed raised inside is the failure of step `name` (its trace and the run's block name it)."""
    try:
        yield
    except StepFailed as exc:
        exc.name(name)
        raise


def _run_step(r: Resume, name: str, step: StepRun) -> None:
    """Run one step and collect its trace; a step that returns None traces itself later."""
    with _failing_as(name):
        data = step(r)
    if data is None:
        return
    if r.run is not None:
        trace(r, name, True, **data)
    r.steps_ok += 1


def _steps_committed(r: Resume, steps: Iterable[tuple[str, StepRun]]) -> None:
    """Run steps in one transaction that commits their effects with their trace.

    A failing step commits what the steps before it did, its failure traced and the run blocked (as
    if each step had committed on its own); a Stop, Retry or lost guarded write commits the trace so
    far. Any other error rolls it all back, its trace too.
    """
    ended: Exception | None = None
    with _committing(r):
        try:
            for name, step in steps:
                _run_step(r, name, step)
        except StepFailed as exc:
            _fail(r, exc)
            ended = exc
        except (Stop, Retry, ConflictError) as exc:
            ended = exc
    if ended is not None:
        raise ended


@contextmanager
def _committing(r: Resume) -> Iterator[None]:
    """A transaction that writes the trace collected in it before it commits; rolled back, that trace
    is dropped with the effects it reports."""
    mark = len(r.events)
    try:
        with transaction.atomic():
            yield
            flush(r)
    except BaseException:
        del r.events[mark:]
        raise


def _deliver(r: Resume, result: Any) -> None:
    """The delivery's transaction: on the usual path one statement, the delivery with its effect's event and the
    step's trace (worker.steps.bind_result.deliver), atomic by itself, so no BEGIN/COMMIT round trips are
    opened around it. The other paths (already delivered, a conflict) commit their own writes
    (runs_app.services.effects.effect_deliver), then the trace: a conflict's failure is traced and the run
    blocked by `resume_run_by_id`, as any failing step's."""
    with _failing_as(_bind.name):
        data = _bind_module.deliver(r, result)
    if data is not None:  # not traced by the delivery's statement
        with _committing(r):
            trace(r, _bind.name, True, **data)
    r.steps_ok += 1


def _move_on(r: Resume, started: float) -> None:
    """The binding transaction's one write of the run: the move `continue` decided, the trace collected
    so far and (for a run handed back to its agent, where nothing follows) the metrics, in one prepared
    statement (runs_app.services.run_bind_result)."""
    if r.move is None:  # nothing to bind (a plain `continue` resume): the trace is flushed at commit
        return
    move, r.move = r.move, None
    events, r.events = r.events, []
    try:
        r.run = run_bind_result(
            project=r.project_id, run_id=r.run_id, owner=r.owner, bound_result=move["bound"],
            clear_approval=move["clear_approval"], hand_back=move["hand_back"],
            metrics=_figures(r, started, "", settle=True) if move["hand_back"] else None, events=events)
    except BaseException:
        r.events = events + r.events  # not written: the transaction rolls back with them (worker.pipeline._committing)
        raise
    if move["hand_back"]:
        r.leased = False
        r.metrics_written = True


def _fail(r: Resume, exc: StepFailed) -> None:
    """Trace the failing step and block the run naming it, in one statement with the trace (inside the
    caller's transaction)."""
    if r.run is None:
        return
    trace(r, exc.step, False, exc.reason, **exc.detail)
    _block(r, exc.step, exc.reason, exc.detail, category=exc.category)
    flush(r)  # what the block did not write (it could not: someone else holds the run)
    exc.handled = True


def resume_run_by_id(run_id: int, *, owner: str | None = None, lease_seconds: int | None = None) -> ResumeOutcome:
    """Resume one run; returns how it ended (done, blocked, stopped or retry).

    1. Count the start (committed before the load, so a start that dies loading still counts).
    2. The pre-bind steps in one transaction, up to the effect's dispatch (committed before the call).
    3. The call, with no transaction open; then its delivery and the `bind_result` trace, committed (one
       statement on the usual path, `_deliver`).
    4. The binding steps in one transaction: consume the result, move the run on, checkpoint (and,
       for a run handed back to its agent, the metrics).
    5. A worker-driven run: drive its remaining nodes to the end; a rejected gate fails it, or routes it to the
       repair node the gate declared (worker.repair).
    The first StepFailed blocks the run naming its step; metrics are recorded on every outcome.
    """
    r = Resume(run_id=run_id, owner=owner or worker_owner(),
               lease_seconds=lease_seconds or settings.HARNESS_WORKER_LEASE_SECONDS)
    started = time.monotonic()
    outcome, failure = ResumeOutcome.DONE, ""
    try:
        with _failing_as(ResumeStep.LOAD):
            count_start(r)  # one statement, committed on its own before the load
        _steps_committed(r, PRE_CALL_STEPS)
        if r.dispatched is not None:
            with _failing_as(_bind.name):
                result = _bind_module.call(r)
            _deliver(r, result)
            faults.point("after_deliver")
        with _committing(r):
            for name, step in BINDING_STEPS:
                _run_step(r, name, step)
            _move_on(r, started)
        faults.point("after_commit")
        if r.leased and r.mode == ResumeMode.APPROVAL and (not r.approved or r.abandoned):
            if not r.abandoned and route_to_repair(r):  # a declared repair node (worker.repair)
                r.steps_ok += drive_nodes(r)
            else:
                _finish_rejected(r)
        elif r.leased and r.run.status == RunStatus.RUNNING:
            r.steps_ok += drive_nodes(r)
    except StepFailed as exc:
        outcome, failure = ResumeOutcome.BLOCKED, exc.step
        if r.run is not None and not exc.handled:
            with transaction.atomic():
                _fail(r, exc)
    except Stop as exc:
        outcome, failure = ResumeOutcome.STOPPED, ""
        flush(r)
        log.info("resume of run %s stopped: %s", run_id, exc)
    except Retry:
        outcome, failure = ResumeOutcome.RETRY, "tool_unreachable"
        with transaction.atomic():
            flush(r)
            if r.leased:
                run_release(project=r.project_id, run_id=run_id, owner=r.owner)
                r.leased = False
    except ConflictError as exc:
        # A guarded write lost (the lease expired and someone else took over): let them continue.
        outcome, failure = ResumeOutcome.STOPPED, exc.code
        flush(r)
        log.warning("resume of run %s lost a guarded write: %s", run_id, exc.detail)
    except Exception:
        if r.leased:
            _metrics(r, started, "exception")
            run_release(project=r.project_id, run_id=run_id, owner=r.owner)
        raise
    if r.run is not None and (r.claimed or outcome == ResumeOutcome.BLOCKED) and not r.metrics_written:
        _metrics(r, started, failure)
    return outcome


def _finish_rejected(r: Resume) -> None:
    """A worker-driven plan cannot continue past a rejected gate (or an abandoned effect): the run fails,
    the reason bound."""
    if r.bound is None:  # the binding steps bound the rejection before this: never without one
        raise StepFailed("the rejection was not bound to the run")
    what = "its effect was abandoned" if r.abandoned else "the approval was rejected"
    with transaction.atomic():
        r.run = run_transition(
            project=r.project_id, run_id=r.run_id, to=RunStatus.FAILED, expected_version=None, lease_owner=r.owner,
            actor=Actor.for_worker(r.owner),
            error={"step": ResumeStep.CONTINUE, "reason": f"{what}: {r.bound['reason']}"},
            failure_category=FailureCategory.IRREVERSIBLE if r.abandoned else FailureCategory.SEMANTIC,
        )
        r.leased = False


def _block(r: Resume, step: str, reason: str, detail: dict[str, Any], *, category: str = "") -> None:
    """Block the run naming the step and the failure's category, the trace collected so far written with it
    (one statement)."""
    events, r.events = r.events, []
    updates: dict[str, Any] = {"failure_category": category}
    if r.leased:
        updates.update(lease_owner="", lease_expires_at=None)
    error = {"step": step, "reason": reason, **detail, **({"category": category} if category else {})}
    try:
        if r.leased and r.run.status == RunStatus.BLOCKED:  # resumed from a block a person decided: blocked again
            run_reblock(project=r.project_id, run_id=r.run_id, owner=r.owner, blocked_step=step, error=error,
                        failure_category=category, events=events)
            r.leased = False
            return
        run_transition(
            project=r.project_id, run_id=r.run_id, to=RunStatus.BLOCKED,
            # Leased, the lease orders the worker's writes (its own checkpoints move the version it read); not
            # leased (a check failed before the claim), the version it read decides, as the recovery pass's does.
            expected_version=None if r.leased else r.run.version, lease_owner=r.owner if r.leased else UNFENCED,
            blocked_step=step, error=error, actor=Actor.for_worker(r.owner), updates=updates, events=events,
        )
        r.leased = False
    except ConflictError as exc:
        r.events = events + r.events
        log.warning("run %s could not be blocked at %s: %s", r.run_id, step, exc.detail)


def _metrics(r: Resume, started: float, failure: str) -> None:
    """Record the resume's figures in `Run.metrics` (a statement of its own: the outcomes other than a
    run handed back, whose figures go with its move, `_metrics_merged`)."""
    usage = Run.objects.filter(pk=r.run_id).values("tokens_used", "cost_used").first()
    if usage is None:
        return
    steps = NodeExecution.objects.filter(run_id=r.run_id, status=NodeExecution.Status.SUCCEEDED).count()
    run_metrics_merge(project=r.project_id, run_id=r.run_id, metrics={
        "steps": steps, "pipeline_steps": r.steps_ok, "tokens": usage["tokens_used"], "cost": str(usage["cost_used"]),
        "latency_ms": int((time.monotonic() - started) * 1000), "failure_type": failure,
    })
    r.metrics_written = True


def _figures(r: Resume, started: float, failure: str, *, settle: bool) -> dict[str, Any]:
    """The resume's figures, merged into the run's metrics by the statement that moves the run on (which counts
    the node executions as `steps`); usage is the claimed row's (r.run, current under our lease).

    `settle`: the resume finished and hands the run back, so its starts and attempts are settled (the
    limits count only the ones after: a run that asks for approval many times is never "attempted too
    often"; worker.state.unsettled)."""
    run, metrics = r.run, r.run.metrics or {}
    figures: dict[str, Any] = {
        "pipeline_steps": r.steps_ok, "tokens": run.tokens_used, "cost": str(run.cost_used),
        "latency_ms": int((time.monotonic() - started) * 1000), "failure_type": failure,
    }
    if settle:
        figures.update(settled_starts=int(metrics.get("starts") or 0),
                       settled_attempts=int(metrics.get("attempts") or 0))
    return figures
