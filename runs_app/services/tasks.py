"""Write operations on tasks: a task's durable state (compare-and-set on its version) and its status."""

from typing import Any

from django.db.models import F
from django.utils import timezone

from harness.http.errors import ConflictError, NotFoundError, ValidationFailed
from harness.models import Project
from harness.refs import create_with_ref
from harness.transitions import cas_transition_row
from runs_app.machines import TASK_MACHINE
from runs_app.models import Task

TASK_CLIENT_FIELDS = (
    "objective", "constraints", "plan", "plan_version", "completed_nodes", "pending_nodes",
    "artifact_refs", "schema_version",
)  # not its pending approvals nor its effect records: those are the real rows' (selectors.task_durable_state)


def task_create(*, project: Project, objective: str, ref: str = "", **fields: Any) -> Task:
    unknown = set(fields) - set(TASK_CLIENT_FIELDS)
    if unknown:
        raise ValidationFailed(f"Unknown task fields: {sorted(unknown)}.", code="invalid")
    if "pending_nodes" not in fields and "plan" in fields:
        fields["pending_nodes"] = list(fields["plan"])
    # A `ref` the project has already: 409 already_exists with that task's id.
    return create_with_ref(Task, lambda: Task.objects.create(project=project, objective=objective, ref=ref, **fields),
                           project_id=project.pk, ref=ref, constraint="task_ref_unique")


def task_save(*, project: Project | int, task_id: int, expected_version: int, **fields: Any) -> Task:
    """Save a task's durable state with a compare-and-set on its version (one UPDATE)."""
    unknown = set(fields) - set(TASK_CLIENT_FIELDS)
    if unknown:
        raise ValidationFailed(f"Unknown task fields: {sorted(unknown)}.", code="invalid")
    tasks = Task.objects.filter(project=project)
    updated = tasks.filter(pk=task_id, version=expected_version).update(
        **fields, version=F("version") + 1, updated_at=timezone.now()
    )
    if not updated:
        current = tasks.filter(pk=task_id).values("status", "version").first()
        if current is None:
            raise NotFoundError(f"Task {task_id} does not exist.")
        raise ConflictError(
            f"Task {task_id} is at version {current['version']}, not {expected_version}.",
            code="version_conflict",
            current_status=current["status"],
            current_version=current["version"],
        )
    return tasks.get(pk=task_id)


def task_transition(*, project: Project | int, task_id: int, to: str, expected_version: int | None) -> Task:
    return cas_transition_row(Task.objects.filter(project=project), pk=task_id, machine=TASK_MACHINE, to=to,
                              expected_version=expected_version)
