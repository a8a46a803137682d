"""The resume's load in one prepared statement: the run with its task, its checkpoint, its pending approval
(and who decided it, and the decision the audit log recorded) and its session's status.

What `Run.objects.select_related(...)` plus the audit log's query did in two statements, without compiling
either on every resume (the ORM's compilation was a fifth of a resume's CPU). The instances are built as
Django builds them (`Model.from_db`, each field's converters), related ones set where the ORM would cache
them, so the steps read `r.run.task`, `r.approval.decided_by` as before.
"""

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Model

from harness.db import prepared_cursor
from runs_app.models import ApprovalRequest, ApprovalStatus, Checkpoint, Run, Task
from sessions_app.models import Session

# The decisions the audit log records for an approval (worker.steps.approval_preconditions checks them).
DECISION_AUDIT_ACTIONS = (f"approval.{ApprovalStatus.APPROVED}", f"approval.{ApprovalStatus.REJECTED}")

_PREFIXES: tuple[tuple[str, type[Model]], ...] = (
    ("r", Run), ("t", Task), ("c", Checkpoint), ("a", ApprovalRequest))


@functools.cache
def _fields(model: type[Model]) -> tuple[tuple[str, str, tuple[Callable[..., Any], ...]], ...]:
    """(column, attname, converters) of each concrete field, in the model's order."""
    return tuple((str(f.column), f.attname, tuple(f.get_db_converters(connection)))
                 for f in model._meta.concrete_fields)


_EXTRA = (("u", "username"), ("s", "status"), ("au", "action"), ("au", "data"))


@functools.cache
def _names() -> tuple[str, ...]:
    """The statement's column names in order, known from how it is built: reading them back from the cursor
    costs an object per column on every resume (a hundred of them)."""
    return (*(f"{alias}__{column}" for alias, model in _PREFIXES for column, _, _ in _fields(model)),
            *(f"{alias}__{column}" for alias, column in _EXTRA))


@functools.cache
def load_sql() -> str:
    """Built once per process, from the models' columns (a prepared `*` would break on a new column)."""
    selected = ", ".join(f'{alias}."{column}" AS "{alias}__{column}"'
                         for alias, model in _PREFIXES for column, _, _ in _fields(model))
    return f"""
SELECT {selected}, u.username AS "u__username", s.status AS "s__status", au.action AS "au__action",
       au.data AS "au__data"
  FROM runs_app_run r
  JOIN sessions_app_session s ON s.id = r.session_id
  LEFT JOIN runs_app_task t ON t.id = r.task_id
  LEFT JOIN runs_app_checkpoint c ON c.id = COALESCE(r.last_checkpoint_id, t.latest_checkpoint_id)
  LEFT JOIN runs_app_approvalrequest a ON a.id = r.pending_approval_id
  LEFT JOIN auth_user u ON u.id = a.decided_by_id
  LEFT JOIN LATERAL (
        SELECT e.action, e.data FROM harness_auditentry e
         WHERE e.project_id = a.project_id AND e.target_type = 'approvalrequest' AND e.target_id = a.id::text
           AND e.action = ANY(%(actions)s)
         ORDER BY e.id LIMIT 1) au ON a.id IS NOT NULL
 WHERE r.id = %(rid)s
"""  # noqa: S608 - the selected columns are the models' own (_fields); every value is bound


def _instance(model: type[Model], alias: str, row: dict[str, Any]) -> Any:
    if row[f"{alias}__id"] is None:
        return None
    attnames, values = [], []
    for column, attname, converters in _fields(model):
        value = row[f"{alias}__{column}"]
        for convert in converters:
            value = convert(value, None, connection)
        attnames.append(attname)
        values.append(value)
    return model.from_db(connection.alias, attnames, values)


def load_run(run_id: int) -> tuple[Run, tuple[str, Any] | None] | None:
    """The run with its related rows set (task, last checkpoint or the task's latest, pending approval and
    its `decided_by`, session), and the approval's first decision in the audit log as (action, data); None
    when the run does not exist."""
    with prepared_cursor() as cursor:
        cursor.execute(load_sql(), {"rid": run_id, "actions": list(DECISION_AUDIT_ACTIONS)})
        found = cursor.fetchone()
    if found is None:
        return None
    row = dict(zip(_names(), found, strict=True))
    run: Run = _instance(Run, "r", row)
    task: Task | None = _instance(Task, "t", row)
    checkpoint: Checkpoint | None = _instance(Checkpoint, "c", row)
    approval: ApprovalRequest | None = _instance(ApprovalRequest, "a", row)
    run.session = Session.from_db(connection.alias, ["id", "status"], [run.session_id, row["s__status"]])
    run.task = task
    if run.last_checkpoint_id is not None:
        run.last_checkpoint = checkpoint
    else:
        run.last_checkpoint = None
        if task is not None:
            task.latest_checkpoint = checkpoint
    if approval is not None:
        approval.decided_by = (User.from_db(connection.alias, ["id", "username"],
                                            [approval.decided_by_id, row["u__username"]])
                               if approval.decided_by_id is not None else None)
    run.pending_approval = approval
    audit = (row["au__action"], _json(row["au__data"])) if row["au__action"] is not None else None
    return run, audit


def _json(value: Any) -> Any:
    """The audit entry's data as the ORM would give it (Django reads jsonb as text, its field decodes it)."""
    from harness.models import AuditEntry

    field = AuditEntry._meta.get_field("data")
    for convert in field.get_db_converters(connection):
        value = convert(value, None, connection)
    return value
