"""Read queries on runs and what they own, always scoped to the caller's projects."""

import datetime as dt
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from harness.db import columns, fetch_instance, json_rows
from harness.errors import NotFoundError
from harness.models import Project
from runs_app.models import ApprovalRequest, Checkpoint, ExternalEffect, Run, RunEvent, Task

MAX_LINEAGE = 1000


def run_list(
    *,
    projects: QuerySet[Project],
    status: str | None = None,
    session: int | None = None,
    task: int | None = None,
    updated_since: dt.datetime | None = None,
) -> QuerySet[Run]:
    runs = Run.objects.filter(project__in=projects).select_related("project")
    if status:
        runs = runs.filter(status=status)
    if session:
        runs = runs.filter(session_id=session)
    if task:
        runs = runs.filter(task_id=task)
    if updated_since:
        runs = runs.filter(updated_at__gte=updated_since)
    return runs


def run_get(*, projects: QuerySet[Project], run_id: int) -> Run:
    run = Run.objects.filter(project__in=projects, pk=run_id).select_related("project").first()
    if run is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    return run


def run_event_list(*, projects: QuerySet[Project], run_id: int, kind: str | None = None) -> QuerySet[RunEvent]:
    run = run_get(projects=projects, run_id=run_id)
    events = RunEvent.objects.filter(run=run)
    if kind:
        events = events.filter(kind=kind)
    return events


def checkpoint_list(
    *, projects: QuerySet[Project], run: int | None = None, task: int | None = None
) -> QuerySet[Checkpoint]:
    checkpoints = Checkpoint.objects.filter(project__in=projects)
    if run:
        checkpoints = checkpoints.filter(run_id=run)
    if task:
        checkpoints = checkpoints.filter(task_id=task)
    return checkpoints


def checkpoint_get(*, projects: QuerySet[Project], checkpoint_id: int) -> Checkpoint:
    checkpoint = Checkpoint.objects.filter(project__in=projects, pk=checkpoint_id).first()
    if checkpoint is None:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return checkpoint


def checkpoint_latest(*, project: Project | int, run_id: int) -> Checkpoint | None:
    """The run's newest checkpoint through its `last_checkpoint` pointer: two primary-key lookups, in one
    statement, however long the run's history (None for a run with no checkpoint yet)."""
    project_id = project if isinstance(project, int) else project.pk
    # The row straight into the model (what raw() does, minus its per-query column mapping: a third of
    # this read's CPU).
    checkpoint = fetch_instance(Checkpoint, _LATEST_CHECKPOINT_SQL.format(columns=columns(Checkpoint, "c")),
                                {"run": run_id, "project": project_id})
    if checkpoint is None and not Run.objects.filter(project_id=project_id, pk=run_id).exists():
        raise NotFoundError(f"Run {run_id} does not exist.")
    return checkpoint


_LATEST_CHECKPOINT_SQL = """
SELECT {columns} FROM runs_app_run r JOIN runs_app_checkpoint c ON c.id = r.last_checkpoint_id
 WHERE r.id = %(run)s AND r.project_id = %(project)s
"""


# The API's checkpoint fields (runs_app.api.CheckpointOutSerializer) in its order, each with its column.
LINEAGE_FIELDS = (
    ("id", "id"), ("run", "run_id"), ("task", "task_id"), ("parent", "parent_id"), ("depth", "depth"),
    ("label", "label"), ("cursor", "cursor"), ("state", "state"), ("artifact_fingerprints", "artifact_fingerprints"),
    ("authority_ref", "authority_ref"), ("pending_gate", "pending_gate"), ("approval", "approval_id"),
    ("resume_policy", "resume_policy"), ("schema_version", "schema_version"), ("content_hash", "content_hash"),
)

def _json_member(name: str, column: str, kind: str) -> str:
    value = {"int": f"c.{column}::text", "text": f"to_json(c.{column})::text", "json": f"c.{column}::text"}[kind]
    return f"""'"{name}":' || coalesce({value}, 'null')"""


_LINEAGE_KINDS = {"label": "text", "authority_ref": "text", "resume_policy": "text", "content_hash": "text",
                  "cursor": "json", "state": "json", "artifact_fingerprints": "json", "pending_gate": "json"}

# The walk up the parents (primary key) and the rows in one statement, each row written as the JSON
# object the API returns (jsonb columns as their text, concatenated: aggregating with json_agg and
# json_build_object cost the server three times as much) so that one json.loads decodes the chain.
# Building 1,000 model instances and decoding their 4,000 JSON values one by one cost three times
# the CPU. The time comes apart, as epoch microseconds: parsing 1,000 timestamps was another third.
# The start must be in the caller's scope (`{{scope}}`: the projects queryset's SQL, as a subquery) and
# the walk stays in its project: no separate lookup of the start first.
_LINEAGE_SQL = """
WITH RECURSIVE chain(id, parent_id, project_id, hops) AS (
    SELECT id, parent_id, project_id, 0 FROM runs_app_checkpoint WHERE id = %s AND project_id IN ({{scope}})
    UNION ALL
    SELECT c.id, c.parent_id, c.project_id, chain.hops + 1
      FROM runs_app_checkpoint c JOIN chain ON c.id = chain.parent_id AND c.project_id = chain.project_id
     WHERE chain.hops < %s
)
SELECT '{{{{' || {members} || '}}}}', (extract(epoch FROM c.created_at) * 1000000)::bigint
  FROM chain JOIN runs_app_checkpoint c ON c.id = chain.id
 ORDER BY c.depth DESC, c.id DESC
""".format(members=" || ',' || ".join(
    _json_member(name, column, _LINEAGE_KINDS.get(name, "int")) for name, column in LINEAGE_FIELDS))

def checkpoint_lineage(*, projects: QuerySet[Project], checkpoint_id: int) -> list[dict[str, Any]]:
    """The checkpoint and its ancestors, newest first (capped at MAX_LINEAGE), as dicts shaped like the
    API's checkpoints (`created_at` a datetime)."""
    scope_sql, scope_params = projects.values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(_LINEAGE_SQL.format(scope=scope_sql), [checkpoint_id, *scope_params, MAX_LINEAGE - 1])
        rows = cursor.fetchall()
    if not rows:
        raise NotFoundError(f"Checkpoint {checkpoint_id} does not exist.")
    return json_rows(rows)


def approval_list(
    *, projects: QuerySet[Project], status: str | None = None, run: int | None = None
) -> QuerySet[ApprovalRequest]:
    approvals = ApprovalRequest.objects.filter(project__in=projects).select_related("project", "decided_by")
    if status:
        approvals = approvals.filter(status=status)
    if run:
        approvals = approvals.filter(run_id=run)
    return approvals


def approval_get(*, projects: QuerySet[Project], approval_id: int) -> ApprovalRequest:
    approval = approval_list(projects=projects).filter(pk=approval_id).first()
    if approval is None:
        raise NotFoundError(f"Approval {approval_id} does not exist.")
    return approval


def effect_list(
    *, projects: QuerySet[Project], status: str | None = None, run: int | None = None
) -> QuerySet[ExternalEffect]:
    effects = ExternalEffect.objects.filter(project__in=projects)
    if status:
        effects = effects.filter(status=status)
    if run:
        effects = effects.filter(run_id=run)
    return effects


def effect_get(*, projects: QuerySet[Project], effect_id: int) -> ExternalEffect:
    effect = ExternalEffect.objects.filter(project__in=projects, pk=effect_id).first()
    if effect is None:
        raise NotFoundError(f"Effect {effect_id} does not exist.")
    return effect


def task_list(*, projects: QuerySet[Project], status: str | None = None) -> QuerySet[Task]:
    tasks = Task.objects.filter(project__in=projects).select_related("project")
    if status:
        tasks = tasks.filter(status=status)
    return tasks


def task_get(*, projects: QuerySet[Project], task_id: int) -> Task:
    task = task_list(projects=projects).filter(pk=task_id).first()
    if task is None:
        raise NotFoundError(f"Task {task_id} does not exist.")
    return task
