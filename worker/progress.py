"""Moving a run forward: complete a task node, checkpoint the run's new position.

Both the approval's binding (steps `continue`, `checkpoint`) and the worker-driven plan
(worker.drive) use these, inside the caller's transaction.
"""

import logging
from typing import Any

from django.conf import settings

from runs_app.artifacts import artifact_fingerprints
from runs_app.models import (
    Checkpoint,
    Run,
    Task,
)
from runs_app.resume_due import remaining_nodes
from runs_app.services import (
    checkpoint_create,
    task_save,
)
from runs_app.services.checkpoints import APPROVAL_AUTHORITY
from worker.state import Resume, StepFailed

log = logging.getLogger(__name__)

REPAIR_KEYS = ("repair", "repairs")  # what worker.repair keeps in the run's cursor


def checkpoint_position(r: Resume, *, label: str, parent: int | None | bool = False) -> Checkpoint | None:
    """Checkpoint the run's position; `parent` is the run's last checkpoint when the caller knows it."""
    task = Task.objects.get(pk=r.task.pk) if r.task is not None else None
    r.task = task
    nxt = remaining_nodes(task.plan, task.completed_nodes) if task else []
    if parent is False:
        parent = Run.objects.filter(pk=r.run_id).values_list("last_checkpoint_id", flat=True).get()
    checkpoint = checkpoint_create(
        project=r.project_id, run_id=r.run_id, parent_id=parent, label=label[:120],
        cursor={"node": nxt[0] if nxt else "", "completed": list(task.completed_nodes) if task else [],
                # A repair in progress (worker.repair) stays in the cursor the checkpoint gives the run.
                **{key: (r.run.cursor or {})[key] for key in REPAIR_KEYS if key in (r.run.cursor or {})}},
        state={"plan_version": task.plan_version if task else None, "bound_receipt": (r.bound or {}).get("receipt"),
               "framework_version": settings.HARNESS_FRAMEWORK_VERSION},
        artifact_fingerprints=artifact_fingerprints(task.artifact_refs) if task else {},
        # The authority the position rests on: the approval it records (verified on resume, worker.checks), or
        # the worker that held the lease.
        authority_ref=f"{APPROVAL_AUTHORITY}{r.approval.pk}" if r.approval else r.owner,
        approval_id=r.approval.pk if r.approval else None,
        lease_owner=r.owner if r.leased else None,
    )
    r.checkpoint = checkpoint
    return checkpoint


def task_complete_node(r: Resume, node: str, artifact: dict[str, Any]) -> None:
    if r.task is None:  # the callers drive a task's plan: never without one
        raise StepFailed(f"the node {node!r} has no task to complete", node=node)
    task = Task.objects.get(pk=r.task.pk)
    artifacts = {**(task.artifact_refs or {}), node: artifact}
    completed = [*task.completed_nodes, node] if node not in task.completed_nodes else list(task.completed_nodes)
    pending = [n for n in (task.pending_nodes or []) if n != node]
    r.task = task_save(project=r.project_id, task_id=task.pk, expected_version=task.version,
                       completed_nodes=completed, pending_nodes=pending, artifact_refs=artifacts)
