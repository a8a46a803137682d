"""Export a run, a session or a task as one bundle, and import a bundle read-only (issue 34, part 5).

One function each, behind every door (the console's buttons, the API, `manage.py export_run` / `import_run`).

What a bundle carries (bundles_app.bundle has the format): the rows of the exported work as they are stored
(sessions, their items, tasks, runs, events, approvals with their decisions, checkpoints with their parents,
node executions, effects with their receipts, questions, context snapshots), the memory records its snapshots
handed a model (the ones not erased), and the project's audit entries about those rows. What never leaves: tokens
(an approval's or question's requesting token becomes null), users (a decider is named by username, and an erased
person's name is replaced by its SHA-256), webhooks and their secrets, session cookies, idempotency replies,
handoffs (v1), and anything erased (memory_app.erasure: an erased memory record is left out; a tombstoned item and
a scrubbed snapshot travel as their tombstones).
"""

import datetime as dt
import hashlib
import json
import socket
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import Model, Q
from django.utils import timezone

from bundles_app.bundle import KINDS, BundleRefused, seal, verify
from bundles_app.models import ImportedBundle
from harness.actors import Actor
from harness.audit import audit_record
from harness.canonical import canonical_json
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import AuditEntry, ImportedRow, Membership, Project
from harness.tenancy import Role, holds_role_everywhere, user_can_see_project, user_has_role
from memory_app.models import ContextSnapshot, MemoryRecord
from runs_app.models import (
    ApprovalRequest,
    Checkpoint,
    ExternalEffect,
    HumanQuestion,
    NodeExecution,
    Run,
    RunEvent,
    Task,
)
from sessions_app.models import Session, SessionItem

# Per kind of row: its model, and what each foreign key becomes on import: another kind of the bundle (remapped to
# its new local id; null when the row it names is not in the bundle), "project" (the target project), "user" (the
# local user of that username, else null) or None (always null: tokens, policies, groups, standing approvals, ...).
_REFS: dict[str, tuple[type[Model], dict[str, str | None]]] = {
    "sessions": (Session, {"project_id": "project"}),
    "tasks": (Task, {"project_id": "project", "latest_checkpoint_id": "checkpoints"}),
    "runs": (Run, {"project_id": "project", "session_id": "sessions", "task_id": "tasks",
                   "pending_approval_id": "approvals", "last_checkpoint_id": "checkpoints"}),
    "items": (SessionItem, {"session_id": "sessions", "run_id": "runs"}),
    "events": (RunEvent, {"run_id": "runs"}),
    "approvals": (ApprovalRequest, {"project_id": "project", "run_id": "runs", "requested_by_token_id": None,
                                    "decided_by_id": "user", "assigned_to_id": "user", "tool_schema_id": None,
                                    "policy_id": None, "routed_group_id": None, "standing_approval_id": None}),
    "checkpoints": (Checkpoint, {"project_id": "project", "run_id": "runs", "task_id": "tasks",
                                 "parent_id": "checkpoints", "approval_id": "approvals"}),
    "node_executions": (NodeExecution, {"run_id": "runs", "task_id": "tasks", "checkpoint_id": "checkpoints"}),
    "effects": (ExternalEffect, {"project_id": "project", "run_id": "runs", "approval_id": "approvals"}),
    "questions": (HumanQuestion, {"project_id": "project", "run_id": "runs", "asked_by_token_id": None,
                                  "answered_by_id": "user", "routed_group_id": None}),
    "snapshots": (ContextSnapshot, {"project_id": "project", "run_id": "runs"}),
}
# Set after every row is in, since they name rows inserted later.
_DEFERRED = {("tasks", "latest_checkpoint_id"), ("runs", "pending_approval_id"), ("runs", "last_checkpoint_id")}
_MEMORY_FIELDS = ("id", "scope", "scope_key", "subject", "content", "content_hash", "provenance_kind", "status",
                  "created_at", "valid_until", "expires_at")
_AUDIT_FIELDS = ("seq", "actor", "action", "target_type", "target_id", "data", "created_at", "prev_hash", "hash")
_ROOT_KIND = {"run": ImportedRow.Kind.RUN, "session": ImportedRow.Kind.SESSION, "task": ImportedRow.Kind.TASK}


@dataclass(frozen=True)
class Imported:
    bundle: ImportedBundle
    root_local_id: int


# --- who may -------------------------------------------------------------------------------------------


def _person(actor: Actor) -> User:
    if actor.user is None:
        raise Forbidden("Only an operator or an admin moves bundles; agent tokens cannot.", code="not_an_operator")
    return actor.user


def _require_operator(actor: Actor, project_id: int, doing: str) -> None:
    user = _person(actor)
    if not user_can_see_project(user, project_id):
        raise NotFoundError("This project does not exist.")
    if not user_has_role(user, Role.OPERATOR, project_id):
        raise Forbidden(f"Only an operator or an admin {doing}.", code="not_an_operator")


def project_of_root(*, project_ids: Any, kind: str, root_id: int) -> Project:
    """The project of a run, session or task among the caller's projects (404 otherwise)."""
    model = {"run": Run, "session": Session, "task": Task}.get(kind)
    if model is None:
        raise ValidationFailed("Export a run, a session or a task.", code="invalid_kind")
    project_id = model._default_manager.filter(pk=root_id, project_id__in=list(project_ids)).values_list(
        "project_id", flat=True).first()
    if project_id is None:
        raise NotFoundError(f"{kind.capitalize()} {root_id} does not exist.")
    return Project.objects.get(pk=project_id)


# --- export --------------------------------------------------------------------------------------------


def _json_row(obj: Model) -> dict[str, Any]:
    raw = {field.attname: field.value_from_object(obj) for field in obj._meta.concrete_fields}
    value: dict[str, Any] = json.loads(canonical_json(raw))
    return value


def _rows(queryset: Any) -> list[dict[str, Any]]:
    return [_json_row(obj) for obj in queryset.order_by("pk")]


def _erased_hashes(project_id: int) -> set[str]:
    """The SHA-256s of the people erased in this project (memory_app.erasure audits each by its hash alone)."""
    return {str(h) for h in AuditEntry.objects.filter(project_id=project_id, action="person.erased")
            .values_list("data__subject_sha256", flat=True) if h}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _scrub_person(value: str, erased: set[str]) -> str:
    return f"erased:{_sha(value)}" if value and _sha(value) in erased else value


def _selection(project: Project, kind: str, root_id: int) -> tuple[list[int], list[int], list[int]]:
    """The (session, task, run) ids a root of `kind` brings: a run its session and task; a session its runs and
    their tasks; a task its runs and their sessions."""
    runs = Run.objects.filter(project=project)
    if kind == "run":
        chosen = runs.filter(pk=root_id)
    elif kind == "session":
        if not Session.objects.filter(project=project, pk=root_id).exists():
            raise NotFoundError(f"Session {root_id} does not exist.")
        chosen = runs.filter(session_id=root_id)
    else:
        if not Task.objects.filter(project=project, pk=root_id).exists():
            raise NotFoundError(f"Task {root_id} does not exist.")
        chosen = runs.filter(task_id=root_id)
    picked = list(chosen.values_list("pk", "session_id", "task_id"))
    if kind == "run" and not picked:
        raise NotFoundError(f"Run {root_id} does not exist.")
    run_ids = sorted(p[0] for p in picked)
    session_ids = sorted({p[1] for p in picked} | ({root_id} if kind == "session" else set()))
    task_ids = sorted({p[2] for p in picked if p[2]} | ({root_id} if kind == "task" else set()))
    return session_ids, task_ids, run_ids


def bundle_export(*, project: Project, actor: Actor, kind: str, root_id: int) -> dict[str, Any]:
    """The bundle of one run, session or task of `project`, and its export audited, in one transaction.

    1. An operator (or admin) of the project; the root is one of its runs, sessions or tasks (404 otherwise).
    2. Gather the rows (see the module's docstring for what never leaves), each kind in ascending id.
    3. Replace an erased person's name (a session's `user`, its end user, a decider) by its SHA-256.
    4. Seal: counts, per-kind digests, the digest (bundles_app.bundle), and audit `bundle.exported` with the
       digest and the counts on the root.
    """
    if kind not in _ROOT_KIND:
        raise ValidationFailed("Export a run, a session or a task.", code="invalid_kind")
    _require_operator(actor, project.pk, "exports a bundle")
    with transaction.atomic():
        session_ids, task_ids, run_ids = _selection(project, kind, root_id)
        erased = _erased_hashes(project.pk)
        records: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
        records["sessions"] = _rows(Session.objects.filter(project=project, pk__in=session_ids))
        for session in records["sessions"]:
            session["end_user"] = _scrub_person(session["end_user"], erased)
            if isinstance(session["metadata"], dict) and isinstance(session["metadata"].get("user"), str):
                session["metadata"]["user"] = _scrub_person(session["metadata"]["user"], erased)
        records["tasks"] = _rows(Task.objects.filter(project=project, pk__in=task_ids))
        records["runs"] = _rows(Run.objects.filter(project=project, pk__in=run_ids))
        records["items"] = _rows(SessionItem.objects.filter(session_id__in=session_ids))
        records["events"] = _rows(RunEvent.objects.filter(run_id__in=run_ids))
        approvals = ApprovalRequest.objects.filter(project=project, run_id__in=run_ids)
        records["approvals"] = _rows(approvals)
        owned = Q(run_id__in=run_ids)
        if kind == "task":  # the task's own checkpoints too (a task may checkpoint without a run)
            owned |= Q(run__isnull=True, task_id__in=task_ids)
        checkpoints = Checkpoint.objects.filter(project=project).filter(owned)
        records["checkpoints"] = _rows(checkpoints)
        records["node_executions"] = _rows(NodeExecution.objects.filter(run_id__in=run_ids))
        records["effects"] = _rows(ExternalEffect.objects.filter(project=project, run_id__in=run_ids))
        records["questions"] = _rows(HumanQuestion.objects.filter(project=project, run_id__in=run_ids))
        snapshots = ContextSnapshot.objects.filter(project=project, run_id__in=run_ids)
        records["snapshots"] = _rows(snapshots)
        _name_users(records, erased)
        for name, (_, refs) in _REFS.items():  # a token's, a policy's, a group's id never leaves either
            for row in records[name]:
                row.update({attname: None for attname, to in refs.items() if to is None})
        read = {int(m) for ids in snapshots.values_list("memory_ids", flat=True) for m in (ids or [])
                if isinstance(m, int)}
        memory = MemoryRecord.objects.filter(project=project, pk__in=read, erased_at__isnull=True).order_by("pk")
        records["memory"] = [json.loads(canonical_json({f: getattr(m, f) for f in _MEMORY_FIELDS})) for m in memory]
        records["audit"] = _audit_about(project, records, erased)
        in_bundle = {r["id"] for r in records["checkpoints"]}
        manifest = {
            "kind": kind, "root": root_id, "source": {"instance": socket.gethostname(), "project": project.slug},
            "exported_at": timezone.now().isoformat(), "exported_by": actor.label,
            "lineage_cut": [r["id"] for r in records["checkpoints"]
                            if r["parent_id"] and r["parent_id"] not in in_bundle],
        }
        bundle = seal(manifest, records)
        root = {"run": Run, "session": Session, "task": Task}[kind]._default_manager.get(pk=root_id)
        audit_record(project=project, actor=actor, action="bundle.exported", target=root,
                     data={"digest": bundle["digest"], "counts": bundle["manifest"]["counts"], "kind": kind})
        return bundle


def _name_users(records: dict[str, list[dict[str, Any]]], erased: set[str]) -> None:
    """A user foreign key travels as the username beside it (`<field>_username`), never as an id or an account."""
    ids = {r[f] for kind, fields in (("approvals", ("decided_by_id", "assigned_to_id")),
                                     ("questions", ("answered_by_id",)))
           for r in records[kind] for f in fields if r.get(f)}
    names = dict(User.objects.filter(pk__in=ids).values_list("pk", "username"))
    for kind, fields in (("approvals", ("decided_by_id", "assigned_to_id")), ("questions", ("answered_by_id",))):
        for r in records[kind]:
            for f in fields:
                user_id = r.get(f)
                name = _scrub_person(names.get(user_id, ""), erased) if user_id else ""
                r[f.removesuffix("_id") + "_username"] = name


def _audit_about(project: Project, records: dict[str, list[dict[str, Any]]], erased: set[str]) -> list[dict[str, Any]]:
    targets = Q(pk__in=[])
    for kind, target_type in (("runs", "run"), ("sessions", "session"), ("tasks", "task"),
                              ("approvals", "approvalrequest"), ("checkpoints", "checkpoint"),
                              ("effects", "externaleffect"), ("questions", "humanquestion")):
        ids = [str(r["id"]) for r in records[kind]]
        if ids:
            targets |= Q(target_type=target_type, target_id__in=ids)
    entries = []
    for entry in AuditEntry.objects.filter(project=project).filter(targets).order_by("seq", "pk"):
        row = json.loads(canonical_json({"id": entry.pk, **{f: getattr(entry, f) for f in _AUDIT_FIELDS}}))
        if row["actor"].startswith("user:"):
            row["actor"] = "user:" + _scrub_person(row["actor"].removeprefix("user:"), erased)
        entries.append(row)
    return entries


# --- import --------------------------------------------------------------------------------------------


def _insert(model: type[Model], values: dict[str, Any]) -> int:
    """One row with every column as given (timestamps included, which the ORM's auto_now would overwrite)."""
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in fields)
    params = [f.get_db_prep_save(f.to_python(values[f.attname]) if values[f.attname] is not None else None,
                                 connection) for f in fields]
    placeholders = ", ".join(["%s"] * len(fields))
    with connection.cursor() as cursor:
        # The table and columns are the model's own (quoted), never a bundle's text; the values are parameters.
        table = connection.ops.quote_name(model._meta.db_table)
        cursor.execute(f"INSERT INTO {table} ({columns}) VALUES ({placeholders}) RETURNING id",  # noqa: S608
                       params)
        return int(cursor.fetchone()[0])


def _target_project(actor: Actor, slug: str) -> Project:
    user = _person(actor)
    project = Project.objects.filter(slug=slug).first()
    if project is not None:
        _require_operator(actor, project.pk, "imports a bundle")
        return project
    if not holds_role_everywhere(user, Role.ADMIN):
        raise Forbidden(f"Project {slug} does not exist; only an admin creates one for an import.",
                        code="not_an_admin")
    project = Project.objects.create(slug=slug, name=f"{slug} (imported)")
    # The admin who made it sees it (a project is seen through a membership); it is audited with the import.
    Membership.objects.create(user=user, project=project)
    return project


def bundle_import(*, bundle: Any, actor: Actor, project_slug: str) -> Imported:
    """Import a bundle into project `project_slug`, read-only: all of it in one transaction, or nothing.

    1. Verify it (bundles_app.bundle.verify: format, version, digest, counts, per-kind digests, order): a refused
       bundle writes nothing (400 with the check's code).
    2. The target project: an existing one needs an operator (or admin) of it; a missing one is created, by an
       admin only. The same bundle twice into one project: 409 `bundle_already_imported`.
    3. Insert each kind in order with new local ids, every reference remapped (a checkpoint's parent outside the
       bundle becomes null: the manifest's `lineage_cut`), then the references to rows inserted later.
    4. Mark the sessions, runs and tasks imported (harness.ImportedRow): from then on the triggers refuse every
       write to them (409 `imported_read_only`) but a fork's. Record the bundle (with the memory and audit
       entries it carries) and audit `bundle.imported` on the root.
    """
    verify(bundle)
    manifest, records = bundle["manifest"], bundle["records"]
    with transaction.atomic():
        project = _target_project(actor, project_slug)
        if ImportedBundle.objects.filter(project=project, digest=bundle["digest"]).exists():
            raise ConflictError(f"This bundle was imported into {project.slug} already.",
                                code="bundle_already_imported")
        for named, with_ref in (("sessions", Session), ("tasks", Task), ("runs", Run)):
            wanted = [r.get("ref") for r in records[named] if r.get("ref")]
            taken = list(with_ref._default_manager.filter(project=project, ref__in=wanted)
                         .values_list("ref", flat=True))
            if taken:
                raise ConflictError(f"Project {project.slug} has {named} {', '.join(sorted(taken))} already: import "
                                    "into another project (a ref names one row per project).", code="bundle_ref_taken")
        try:
            id_map = _rows_in(project, records)
        except IntegrityError as exc:
            raise ConflictError(f"A record of the bundle conflicts with one of {project.slug}: "
                                f"{str(exc).splitlines()[0]}", code="bundle_conflicts") from exc
        except (ValueError, TypeError, KeyError, AttributeError, DjangoValidationError, DataError) as exc:
            raise BundleRefused(f"A record of the bundle is not one this instance can store: {exc}",
                                code="bundle_record_invalid") from exc
        root_kind = _ROOT_KIND[manifest["kind"]]
        root_local = id_map[f"{manifest['kind']}s"].get(manifest["root"])
        if root_local is None:
            raise BundleRefused("The bundle does not carry its own root.", code="bundle_reference_broken")
        source = manifest.get("source") or {}
        imported = ImportedBundle.objects.create(
            project=project, digest=bundle["digest"], kind=manifest["kind"], root_source_id=manifest["root"],
            root_local_id=root_local, source=f"{source.get('instance', '?')}/{source.get('project', '?')}",
            exported_at=_when(manifest.get("exported_at")),
            exported_by=str(manifest.get("exported_by", "")), imported_by=actor.label, manifest=manifest,
            memory=records["memory"], audit=records["audit"],
            id_map={kind: {str(s): local for s, local in ids.items()} for kind, ids in id_map.items()})
        ImportedRow.objects.bulk_create(
            [ImportedRow(kind=row_kind, local_id=local, source_id=src, bundle_id=imported.pk)
             for kind, row_kind in (("sessions", ImportedRow.Kind.SESSION), ("runs", ImportedRow.Kind.RUN),
                                    ("tasks", ImportedRow.Kind.TASK))
             for src, local in id_map[kind].items()])
        root_model = {"run": Run, "session": Session, "task": Task}[manifest["kind"]]
        audit_record(project=project, actor=actor, action="bundle.imported", target=root_model(pk=root_local),
                     data={"digest": bundle["digest"], "source": imported.source, "kind": str(root_kind),
                           "source_id": manifest["root"], "counts": manifest["counts"]})
        return Imported(bundle=imported, root_local_id=root_local)


def _rows_in(project: Project, records: dict[str, list[dict[str, Any]]]) -> dict[str, dict[int, int]]:
    """Insert every row of the bundle with a new local id, its references remapped (call inside the import's
    transaction); per kind, source id -> local id."""
    id_map: dict[str, dict[int, int]] = {kind: {} for kind in _REFS}
    users = dict(User.objects.filter(username__in=_usernames(records)).values_list("username", "pk"))
    deferred: list[tuple[str, int, str, int]] = []
    for kind, (model, refs) in _REFS.items():
        expected = {f.attname for f in model._meta.concrete_fields}
        for row in records[kind]:
            extra = {k for k in row if k.endswith("_username")}
            if set(row) - extra != expected:
                raise BundleRefused(f"A record of {kind} has fields {sorted(set(row) - extra ^ expected)} this "
                                    "instance does not know or misses.", code="bundle_record_invalid")
            values = dict(row)
            for attname, to in refs.items():
                source = row[attname]
                if to == "project":
                    values[attname] = project.pk
                elif to == "user":
                    values[attname] = users.get(row.get(attname.removesuffix("_id") + "_username") or "")
                elif to is None or source is None:
                    values[attname] = None
                elif (kind, attname) in _DEFERRED:
                    values[attname] = None
                    deferred.append((kind, row["id"], attname, source))
                else:
                    values[attname] = id_map[to].get(source)
                    if values[attname] is None and not model._meta.get_field(attname).null:
                        raise BundleRefused(f"{kind} {row['id']} names {to} {source}, which the bundle does not "
                                            "carry.", code="bundle_reference_broken")
            id_map[kind][row["id"]] = _insert(model, values)
    for kind, source_id, attname, target in deferred:
        target_model = _REFS[kind][0]
        to = str(_REFS[kind][1][attname])
        target_model._default_manager.filter(pk=id_map[kind][source_id]).update(**{attname: id_map[to].get(target)})
    return id_map


def _when(value: Any) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(str(value))
    except ValueError:
        raise BundleRefused("The manifest's exported_at is not a time.", code="bundle_malformed") from None


def _usernames(records: dict[str, list[dict[str, Any]]]) -> set[str]:
    return {str(r[k]) for kind in ("approvals", "questions") for r in records[kind]
            for k in r if k.endswith("_username") and r[k] and not str(r[k]).startswith("erased:")}
