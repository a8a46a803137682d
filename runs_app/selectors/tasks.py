"""Reads of tasks: the API's list and one with its derived durable state, and what a task's page shows (its
runs, checkpoints, effects, approvals, node executions and saved states; runs_app.presentation.tasks builds
the plan and the state history from them).

Every read a door makes takes `project_ids`, the ids of the projects the caller may see (the API's
`harness.http.api_base.scope`, the console's `harness.http.views.project_ids`), and starts from the model's
`for_projects`: another project's object is simply absent (NotFoundError: a 404 at every door).
"""

from collections.abc import Sequence
from typing import Any

from django.db.models import Q, QuerySet

from harness.http.errors import NotFoundError
from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
    Checkpoint,
    ExternalEffect,
    NodeExecution,
    Run,
    Task,
    TaskStateVersion,
)


def task_list(*, project_ids: Sequence[int]) -> QuerySet[Task]:
    return Task.objects.for_projects(project_ids).select_related("project")


def task_get(*, project_ids: Sequence[int], task_id: int) -> Task:
    task = task_list(project_ids=project_ids).filter(pk=task_id).first()
    if task is None:
        raise NotFoundError(f"Task {task_id} does not exist.")
    return task


def task_durable_state(task_ids: Sequence[int]) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """Each task's `pending_approvals` and `effect_records` (seed 001, DurableTaskState), derived from the real
    ApprovalRequest and ExternalEffect rows of its runs, never written by a client: two statements for any number
    of tasks (a page of the API's list)."""
    state: dict[int, dict[str, list[dict[str, Any]]]] = {
        task_id: {"pending_approvals": [], "effect_records": []} for task_id in task_ids}
    if not state:
        return state
    approvals = (ApprovalRequest.objects.filter(run__task_id__in=state, status=ApprovalStatus.PENDING)
                 .order_by("pk").values("pk", "run_id", "run__task_id", "tool", "action_fingerprint", "risk",
                                        "executor", "expires_at", "created_at"))
    for a in approvals:
        state[a["run__task_id"]]["pending_approvals"].append({
            "id": a["pk"], "run": a["run_id"], "tool": a["tool"], "action_fingerprint": a["action_fingerprint"],
            "risk": a["risk"], "executor": a["executor"], "created_at": a["created_at"].isoformat(),
            "expires_at": a["expires_at"].isoformat() if a["expires_at"] else None})
    effects = (ExternalEffect.objects.filter(run__task_id__in=state).order_by("pk")
               .values("pk", "run_id", "run__task_id", "approval_id", "tool", "idempotency_key", "status", "receipt",
                       "result_hash", "created_at"))
    for e in effects:
        state[e["run__task_id"]]["effect_records"].append({
            "id": e["pk"], "run": e["run_id"], "approval": e["approval_id"], "tool": e["tool"],
            "idempotency_key": e["idempotency_key"], "status": e["status"], "receipt": e["receipt"],
            "result_hash": e["result_hash"], "created_at": e["created_at"].isoformat()})
    return state


def task_inspect(*, project_ids: Sequence[int], task_id: int) -> Task:
    task = task_list(project_ids=project_ids).select_related("latest_checkpoint").filter(pk=task_id).first()
    if task is None:
        raise NotFoundError(f"Task {task_id} does not exist.")
    return task


STATE_HISTORY = 50  # how many saved states the task's page shows


def task_node_executions(task: Task, limit: int = 500) -> dict[str, NodeExecution]:
    """Each node's latest execution, by node name (one query)."""
    latest: dict[str, NodeExecution] = {}
    for execution in NodeExecution.objects.filter(task=task).order_by("started_at", "id")[:limit]:
        latest[execution.node] = execution
    return latest


def task_state_versions(task: Task, limit: int = STATE_HISTORY) -> list[TaskStateVersion]:
    """The task's saved states, newest first: `limit` of them and the one before the oldest (what it changed)."""
    return list(TaskStateVersion.objects.filter(task=task).order_by("-id")[: limit + 1])


def task_runs(task: Task, limit: int = 100) -> list[Run]:
    return list(Run.objects.filter(project_id=task.project_id, task=task).select_related("session")
                .order_by("-created_at", "-id")[:limit])


def task_checkpoints(task: Task, run_ids: Sequence[int], limit: int = 50) -> list[Checkpoint]:
    """The task's own checkpoints and its runs', newest first (the (task, -id) and (run, -id) indexes)."""
    return list(Checkpoint.objects.filter(project_id=task.project_id).filter(Q(task=task) | Q(run_id__in=run_ids))
                .only("id", "run_id", "task_id", "parent_id", "label", "depth", "created_at").order_by("-id")[:limit])


def task_effects(task: Task, run_ids: Sequence[int], limit: int = 100) -> list[ExternalEffect]:
    return list(ExternalEffect.objects.filter(project_id=task.project_id, run_id__in=run_ids)
                .order_by("-created_at", "-id")[:limit])


def task_approvals(task: Task, run_ids: Sequence[int], limit: int = 100) -> list[ApprovalRequest]:
    return list(ApprovalRequest.objects.filter(project_id=task.project_id, run_id__in=run_ids)
                .select_related("decided_by").order_by("-created_at", "-id")[:limit])
