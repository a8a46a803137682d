"""Driving a worker plan: a task whose remaining nodes all have handlers runs node after node here."""

import logging

from django.db import transaction

from harness.actors import Actor
from harness.http.errors import ConflictError
from runs_app.models import (
    NodeExecution,
    Run,
    RunStatus,
    Task,
    TaskStatus,
)
from runs_app.resume_due import remaining_nodes
from runs_app.services import (
    node_execution_finish,
    node_execution_start,
    run_event_append,
    run_heartbeat,
    run_set_current_node,
    run_transition,
    task_transition,
)
from worker import faults
from worker.handlers import failure_category_of, node_handler
from worker.keepalive import lease_kept
from worker.limits import check_limits
from worker.progress import checkpoint_position, task_complete_node
from worker.repair import ask_again, repair_done
from worker.state import Resume, StepFailed, Stop

log = logging.getLogger(__name__)


def drive_nodes(r: Resume) -> int:
    """Run the task's remaining nodes in order, each with a NodeExecution and a checkpoint; return how many.

    1. Renew the lease (a lost lease stops here; someone else continues); a run over its budget or past its
       deadline is blocked at `budget` or `deadline` before the node runs (worker.limits).
    2. Start the node's execution row, call its handler with the artifacts so far.
    3. In one transaction: save the artifact and the completed node, checkpoint, finish the execution.
    4. A rejected gate's repair node just finished (worker.repair): its action is asked for again and the run
       waits for the decision.
    5. No nodes left: the run succeeds, the task completes.
    """
    if r.task is None:  # the nodes are a task's plan: a run without a task has none to drive
        raise StepFailed("the run has no task whose nodes the worker could drive")
    task_id = r.task.pk
    executed = 0
    while True:
        task = Task.objects.get(pk=task_id)
        pending = remaining_nodes(task.plan, task.completed_nodes)
        if not pending:
            break
        node = pending[0]
        handler = node_handler(node)
        if handler is None:
            raise StepFailed(f"no handler is registered for the node {node!r}", node=node)
        try:
            run_heartbeat(project=r.project_id, run_id=r.run_id, owner=r.owner, lease_seconds=r.lease_seconds)
            run_set_current_node(project=r.project_id, run_id=r.run_id, owner=r.owner, node=node)
        except ConflictError:
            raise Stop("the lease was lost between nodes") from None
        run = Run.objects.get(pk=r.run_id)
        check_limits(run)  # a node is a model call: none past the run's budget or deadline
        # An execution still `running` under our lease was cut short by a dead worker: close it.
        for orphan in NodeExecution.objects.filter(run_id=r.run_id, node=node, status=NodeExecution.Status.RUNNING):
            node_execution_finish(execution=orphan, ok=False, error="abandoned: the worker stopped mid-node")
        execution = node_execution_start(run=run, node=node)
        faults.point(f"node:{node}")
        try:
            # A node may outlast the lease (a model call): renewed while it runs.
            with lease_kept(project_id=r.project_id, run_id=r.run_id, owner=r.owner, lease_seconds=r.lease_seconds):
                artifact = handler(task=task, run=run, node=node, artifacts=dict(task.artifact_refs or {}),
                                   context=r.context)
        except Exception as exc:  # a handler's failure is recorded on the node, then blocks the run
            category = failure_category_of(exc)
            node_execution_finish(execution=execution, ok=False, error=f"{type(exc).__name__}: {exc}",
                                  failure_category=category)
            raise StepFailed(f"the node {node!r} failed: {type(exc).__name__}: {exc}", node=node,
                             category=category) from exc
        with transaction.atomic():
            r.task = task
            task_complete_node(r, node, artifact)
            checkpoint = checkpoint_position(r, label=f"after {node}")
            node_execution_finish(execution=execution, ok=True, output=artifact, checkpoint=checkpoint)
            run_event_append(project=r.project_id, run_id=r.run_id, kind="node.succeeded",
                             data={"node": node, "execution": execution.pk, "attempt": execution.attempt,
                                   "checkpoint": checkpoint.pk if checkpoint else None})
        executed += 1
        if repair_done(run.cursor, node) is not None:  # a rejected gate's repair (worker.repair): ask again
            ask_again(r, run.cursor, artifact)
            return executed
    with transaction.atomic():
        r.run = run_transition(project=r.project_id, run_id=r.run_id, to=RunStatus.SUCCEEDED, expected_version=None,
                               lease_owner=r.owner, actor=Actor.for_worker(r.owner), updates={"current_node": ""})
        r.leased = False
        _task_finish(r.project_id, task_id)
    return executed


def _task_finish(project_id: int, task_id: int) -> None:
    # At the version read: a task a person moved meanwhile is refused (version_conflict), not moved over.
    status, version = Task.objects.filter(pk=task_id).values_list("status", "version").get()
    if status in (TaskStatus.OPEN, TaskStatus.WAITING):
        version = task_transition(project=project_id, task_id=task_id, to=TaskStatus.ACTIVE,
                                  expected_version=version).version
        status = TaskStatus.ACTIVE
    if status == TaskStatus.ACTIVE:
        task_transition(project=project_id, task_id=task_id, to=TaskStatus.COMPLETED, expected_version=version)
