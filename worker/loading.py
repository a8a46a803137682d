"""The resume's load in one prepared statement: the run with its task, its checkpoint, its pending approval
(and who decided it, the decision the audit log recorded, and the tool schema version it was validated against)
and its session's status.

What `Run.objects.select_related(...)` plus the audit log's query did in two statements, without compiling
either on every resume (the ORM's compilation was a fifth of a resume's CPU). The instances are built as
Django builds them (`Model.from_db`, each field's converters), related ones set where the ORM would cache
them, so the steps read `r.run.task`, `r.approval.decided_by` as before.
"""

import datetime as dt
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Model

from harness.audit import entry_break, entry_content_of
from harness.db import build_instance, prepared_cursor
from harness.tenancy import Role
from runs_app.models import ApprovalRequest, ApprovalStatus, Checkpoint, Run, Task, ToolSchema
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


# The decision's audit entry: its content, its place in the chain, and its predecessor's hash (`pred`), so the
# resume checks the entry's mac and both its links without another statement (harness.audit.entry_break).
_AUDIT_COLUMNS = ("action", "data", "actor", "target_type", "target_id", "created_at", "project_id", "seq",
                  "prev_hash", "hash", "mac", "pred")
# The schema version the approval was validated against (its version is the approval's tool_schema_version).
_EXTRA = (("u", "username"), ("s", "status"), ("ts", "schema"), *(("au", column) for column in _AUDIT_COLUMNS))
# The approval's authority as it is now (Grant), computed by the statement: after _EXTRA, in this order.
_GRANT = (("u", "grant"), ("tk", "revoked_at"), ("tk", "expired"), ("p", "frozen_at"))
# What the checkpoint's integrity is checked against (Sealed): its parent's hash, the run its approval belongs to.
_SEALED = (("cp", "content_hash"), ("ca", "run_id"))
# The standing approval behind the decision, as it is now (Grant's rule_*): after _SEALED.
_RULE = (("sa", "revoked_at"), ("sa", "expired"))


@functools.cache
def _names() -> tuple[str, ...]:
    """The statement's column names in order, known from how it is built: reading them back from the cursor
    costs an object per column on every resume (a hundred of them)."""
    return (*(f"{alias}__{column}" for alias, model in _PREFIXES for column, _, _ in _fields(model)),
            *(f"{alias}__{column}" for alias, column in (*_EXTRA, *_GRANT, *_SEALED, *_RULE)))


@functools.cache
def load_sql() -> str:
    """Built once per process, from the models' columns (a prepared `*` would break on a new column)."""
    selected = ", ".join(f'{alias}."{column}" AS "{alias}__{column}"'
                         for alias, model in _PREFIXES for column, _, _ in _fields(model))
    extra = ", ".join(f'{alias}."{column}" AS "{alias}__{column}"' for alias, column in _EXTRA)
    return f"""
SELECT {selected}, {extra},
       (u.is_active AND (u.is_superuser OR EXISTS (
            SELECT 1 FROM harness_membership m WHERE m.user_id = u.id AND m.project_id = a.project_id
               AND (%(role)s = ANY(m.roles) OR EXISTS (
                    SELECT 1 FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id
                     WHERE ug.user_id = u.id AND g.name = ANY(%(roles)s)))))
       ) AS "u__grant",
       tk.revoked_at AS "tk__revoked_at",
       (tk.expires_at IS NOT NULL AND tk.expires_at <= statement_timestamp()) AS "tk__expired",
       p.frozen_at AS "p__frozen_at",
       cp.content_hash AS "cp__content_hash", ca.run_id AS "ca__run_id",
       sa.revoked_at AS "sa__revoked_at", (sa.expires_at <= statement_timestamp()) AS "sa__expired"
  FROM runs_app_run r
  JOIN harness_project p ON p.id = r.project_id
  JOIN sessions_app_session s ON s.id = r.session_id
  LEFT JOIN runs_app_task t ON t.id = r.task_id
  LEFT JOIN runs_app_checkpoint c ON c.id = COALESCE(r.last_checkpoint_id, t.latest_checkpoint_id)
  LEFT JOIN runs_app_checkpoint cp ON cp.id = c.parent_id
  LEFT JOIN runs_app_approvalrequest ca ON ca.id = c.approval_id
  LEFT JOIN runs_app_approvalrequest a ON a.id = r.pending_approval_id
  LEFT JOIN auth_user u ON u.id = a.decided_by_id
  LEFT JOIN runs_app_toolschema ts ON ts.id = a.tool_schema_id
  LEFT JOIN harness_apitoken tk ON tk.id = a.requested_by_token_id
  LEFT JOIN runs_app_standingapproval sa ON sa.id = a.standing_approval_id
  LEFT JOIN LATERAL (
        SELECT e.action, e.data, e.actor, e.target_type, e.target_id, e.created_at, e.project_id, e.seq,
               e.prev_hash, e.hash, e.mac,
               (SELECT p.hash FROM harness_auditentry p WHERE p.project_id = e.project_id AND p.seq = e.seq - 1)
               AS pred
          FROM harness_auditentry e
         WHERE e.project_id = a.project_id AND e.target_type = 'approvalrequest' AND e.target_id = a.id::text
           AND e.action = ANY(%(actions)s)
         ORDER BY e.seq NULLS FIRST, e.id LIMIT 1) au ON a.id IS NOT NULL
 WHERE r.id = %(rid)s
"""  # noqa: S608 - the selected columns are the models' own (_fields); every value is bound


@functools.cache
def _attnames(model: type[Model]) -> tuple[str, ...]:
    return tuple(attname for _, attname, _ in _fields(model))


def _instance(model: type[Model], alias: str, row: dict[str, Any]) -> Any:
    if row[f"{alias}__id"] is None:
        return None
    values = []
    for column, _, converters in _fields(model):
        value = row[f"{alias}__{column}"]
        for convert in converters:
            value = convert(value, None, connection)
        values.append(value)
    return build_instance(model, _attnames(model), values)


@dataclass(frozen=True)
class DecisionAudit:
    """The approval's first decision entry in the audit log (first in the chain's order)."""

    action: str
    data: Any
    untrusted: str | None  # why the entry cannot be trusted (a forged or unchained row), or None


@dataclass(frozen=True)
class Grant:
    """The authority behind the pending approval as it is now, read with the load (seed 002, section 07:
    "re-validate the current authority"): whether its reviewer still holds the reviewer role in the run's
    project (None: nobody decided), when the token that asked was revoked (None: it was not), whether it
    has expired since (by the database's clock), and since when the run's project is frozen (None: it is not)."""

    reviewer_holds_role: bool | None
    token_revoked_at: dt.datetime | None
    token_expired: bool = False
    project_frozen_at: dt.datetime | None = None
    # The standing approval that decided it, if one did (runs_app.services.standing_approvals): revoked since
    # (when), or past its time (by the database's clock).
    rule_revoked_at: dt.datetime | None = None
    rule_expired: bool = False


@dataclass(frozen=True)
class Sealed:
    """What the checkpoint's content hash and `authority_ref` are checked against (worker.checks.check_checkpoint),
    read with the load: the parent's content hash (None: no parent) and the run of the approval the checkpoint
    names (None: it names none)."""

    parent_hash: str | None
    approval_run_id: int | None


def load_run(run_id: int) -> tuple[Run, DecisionAudit | None, Grant, Sealed] | None:
    """The run with its related rows set (task, last checkpoint or the task's latest, pending approval and
    its `decided_by`, session), the approval's first decision in the audit log, checked against its mac
    and its links in the chain, the approval's authority as it is now (Grant) and what the checkpoint is
    verified against (Sealed); None when the run does not exist."""
    with prepared_cursor() as cursor:
        cursor.execute(load_sql(), {"rid": run_id, "actions": list(DECISION_AUDIT_ACTIONS),
                                    "role": Role.REVIEWER, "roles": [Role.REVIEWER, Role.ADMIN]})
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
        # Only the schema's body is read: the approval holds its id and version.
        approval.tool_schema = (ToolSchema.from_db(connection.alias, ["id", "tool", "version", "schema"], [
            approval.tool_schema_id, approval.tool, approval.tool_schema_version, _schema(row["ts__schema"])])
            if approval.tool_schema_id is not None else None)
    run.pending_approval = approval
    grant = Grant(reviewer_holds_role=row["u__grant"], token_revoked_at=row["tk__revoked_at"],
                  token_expired=bool(row["tk__expired"]), project_frozen_at=row["p__frozen_at"],
                  rule_revoked_at=row["sa__revoked_at"], rule_expired=bool(row["sa__expired"]))
    return run, _decision_audit(row), grant, Sealed(row["cp__content_hash"], row["ca__run_id"])


def _decision_audit(row: dict[str, Any]) -> DecisionAudit | None:
    if row["au__action"] is None:
        return None
    data = _json(row["au__data"])
    content = entry_content_of(project_id=row["au__project_id"], actor=row["au__actor"], action=row["au__action"],
                               target_type=row["au__target_type"], target_id=row["au__target_id"], data=data,
                               created_at=row["au__created_at"])
    untrusted = entry_break(content=content, seq=row["au__seq"], prev_hash=row["au__prev_hash"],
                            hash_=row["au__hash"], mac=row["au__mac"], predecessor_hash=row["au__pred"])
    return DecisionAudit(row["au__action"], data, untrusted)


def _schema(value: Any) -> Any:
    """The tool schema's body as its JSONField would give it."""
    field = ToolSchema._meta.get_field("schema")
    for convert in field.get_db_converters(connection):
        value = convert(value, None, connection)
    return value


def _json(value: Any) -> Any:
    """The audit entry's data as the ORM would give it (Django reads jsonb as text, its field decodes it)."""
    from harness.models import AuditEntry

    field = AuditEntry._meta.get_field("data")
    for convert in field.get_db_converters(connection):
        value = convert(value, None, connection)
    return value
