"""Erasure of a person (issue 20, part 4): one operation takes a person's words out of every store that holds
them, and reports per store what it erased and what it kept, and why.

A person is named by a `subject` key: the `scope_key` of their user-scope memory, the `user` their sessions'
metadata names (`{"user": "alice"}`, as an agent that serves one person per session sets it), and, when a
console user has that username, the reviewer whose decisions and audit entries carry it. What erasure means
per store is data here (`STORES`), so the preview, the report and the README say the same thing.
"""

import hashlib
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import JSONField, Q, QuerySet
from django.db.models.functions import Cast

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import Forbidden, NotFoundError, ValidationFailed
from harness.models import AuditEntry, IdempotentRequest, Project
from harness.tenancy import Role, user_can_see_project, user_has_role
from memory_app.models import ContextSnapshot, MemoryRecord, MemoryScope
from memory_app.services import memory_erase
from runs_app.models import ApprovalRequest, Checkpoint, Handoff, Run, RunEvent
from sessions_app.models import ItemRole, Session, SessionItem

MAX_SUBJECT = 200

# Why a store keeps what it keeps: shown in the preview, returned in the report, written in the README.
KEPT_BECAUSE = {
    "memory": "",
    "session_items": "written by the agent, a tool or the system, not by the person: trim the session to remove "
                     "them",
    "context_snapshots": "",
    "idempotent_replies": "",
    "approvals": "a decision stays with who decided and when (no self-approval, the resume checks it); its "
                 "reason is also in the decision's audit entry, which cannot be rewritten",
    "audit_entries": "the audit log is append-only and hash-chained: each entry's mac covers its data, so "
                     "redacting one would break verify_audit; entries keep who and when (decision reasons "
                     "included), never memory or item content",
    "checkpoints": "a checkpoint's state is the agent's resume point: its content hash is verified on resume "
                   "and lineage hangs off it, so it is not redacted",
    "run_events": "append-only run logs: step names, ids and who decided, no item or memory content",
    "handoffs": "a handoff's packet is immutable and fingerprinted; its result is bound to that fingerprint",
}


@dataclass
class StoreReport:
    erased: int = 0
    kept: int = 0
    why_kept: str = ""


@dataclass
class ErasureReport:
    """Per store: how many rows were (or, for a preview, would be) erased, and how many were kept and why."""

    subject_sha256: str
    dry_run: bool
    stores: dict[str, StoreReport] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"subject_sha256": self.subject_sha256, "dry_run": self.dry_run,
                "stores": {name: {"erased": s.erased, "kept": s.kept, "why_kept": s.why_kept}
                           for name, s in self.stores.items()}}

    def counts(self) -> dict[str, dict[str, int]]:
        return {name: {"erased": s.erased, "kept": s.kept} for name, s in self.stores.items()}


@dataclass
class _Plan:
    """The rows that name the person, found once and used by the preview and the erasure alike."""

    memory_ids: list[int]
    item_ids: list[int]
    item_seqs: dict[int, set[int]]  # session id -> seqs of the person's items
    session_ids: list[int]
    run_sessions: dict[int, int]  # the runs of those sessions -> their session
    snapshots: QuerySet[ContextSnapshot]
    kept: dict[str, int]


def _subject_valid(subject: str) -> str:
    subject = (subject or "").strip()
    if not subject or len(subject) > MAX_SUBJECT:
        raise ValidationFailed(f"subject names the person (1..{MAX_SUBJECT} characters).", code="invalid_subject")
    return subject


def _require_admin(actor: Actor, project_id: int) -> None:
    if actor.user is None:
        raise Forbidden("Only admins erase a person.", code="not_an_admin")
    if not user_can_see_project(actor.user, project_id):
        raise NotFoundError("This project does not exist.")
    if not user_has_role(actor.user, Role.ADMIN):
        raise Forbidden("Only admins erase a person.", code="not_an_admin")


def _plan(project_id: int, subject: str) -> _Plan:
    memory = MemoryRecord.objects.filter(project_id=project_id, erased_at__isnull=True).filter(
        Q(scope=MemoryScope.USER, scope_key=subject) | Q(source_person__username=subject))
    sessions = list(Session.objects.filter(project_id=project_id, metadata__user=subject).values_list("pk", flat=True))
    items = SessionItem.objects.filter(session_id__in=sessions)
    # The content is stored as json (sessions_app migration 0005): jsonb's containment tests it, as a cast (the
    # stubs type an alias's lookups as text's).
    authored = (items.filter(role=ItemRole.USER).alias(content_jsonb=Cast("content", JSONField()))  # type: ignore[misc]
                .exclude(content_jsonb__contains={"erased": True}, content_jsonb__has_key="sha256"))
    item_seqs: dict[int, set[int]] = {}
    item_ids: list[int] = []
    for pk, session_id, seq in authored.values_list("pk", "session_id", "seq"):
        item_ids.append(pk)
        item_seqs.setdefault(session_id, set()).add(seq)
    run_sessions = dict(Run.objects.filter(project_id=project_id, session_id__in=sessions)
                        .values_list("pk", "session_id"))
    runs = list(run_sessions)
    snapshots = ContextSnapshot.objects.filter(project_id=project_id, run_id__in=runs)
    kept = {
        "session_items": items.exclude(role=ItemRole.USER).count(),
        "approvals": ApprovalRequest.objects.filter(project_id=project_id, decided_by__username=subject).count(),
        "audit_entries": AuditEntry.objects.filter(project_id=project_id, actor=f"user:{subject}").count(),
        "checkpoints": Checkpoint.objects.filter(project_id=project_id, run_id__in=runs).count(),
        "run_events": RunEvent.objects.filter(run_id__in=runs).count(),
        "handoffs": Handoff.objects.filter(project_id=project_id, origin_run_id__in=runs).count(),
    }
    return _Plan(memory_ids=list(memory.order_by("pk").values_list("pk", flat=True)), item_ids=item_ids,
                 item_seqs=item_seqs, session_ids=sessions, run_sessions=run_sessions,
                 snapshots=snapshots, kept=kept)


def _snapshots_naming(plan: _Plan) -> list[ContextSnapshot]:
    """The snapshots that handed one of the person's items to a model (their `item_seqs` say which)."""
    if not plan.item_ids:
        return []
    found = []
    for snapshot in plan.snapshots.only("id", "run_id", "item_seqs", "content"):
        if plan.item_seqs.get(plan.run_sessions[snapshot.run_id], set()).intersection(snapshot.item_seqs):
            found.append(snapshot)
    return found


def _item_replies(plan: _Plan) -> QuerySet[IdempotentRequest]:
    """Stored replies that may carry the person's items: appends to their sessions, and context projections."""
    paths = Q(path="/api/v1/memory/context/", response_body__run__in=list(plan.run_sessions))
    for session_id in plan.session_ids:
        paths |= Q(path=f"/api/v1/sessions/{session_id}/items/")
    return IdempotentRequest.objects.filter(response_body__isnull=False).filter(paths)


def _report(subject: str, plan: _Plan, *, dry_run: bool, erased: dict[str, int]) -> ErasureReport:
    report = ErasureReport(subject_sha256=hashlib.sha256(subject.encode()).hexdigest(), dry_run=dry_run)
    for name, why in KEPT_BECAUSE.items():
        report.stores[name] = StoreReport(erased=erased.get(name, 0), kept=plan.kept.get(name, 0),
                                          why_kept=why if plan.kept.get(name, 0) else "")
    return report


def person_erase_preview(*, project: Project | int, actor: Actor, subject: str) -> ErasureReport:
    """What `person_erase` would erase and keep, changing nothing (the console's preview, `--dry-run`)."""
    project_id = project if isinstance(project, int) else project.pk
    _require_admin(actor, project_id)
    subject = _subject_valid(subject)
    plan = _plan(project_id, subject)
    snapshots = _snapshots_naming(plan)
    would = {"memory": len(plan.memory_ids), "session_items": len(plan.item_ids),
             "context_snapshots": len(snapshots),
             "idempotent_replies": sum(1 for reply in _item_replies(plan) if _scrub_reply(reply.response_body, plan,
                                                                                          {}))}
    return _report(subject, plan, dry_run=True, erased=would)


def person_erase(*, project: Project | int, actor: Actor, subject: str, reason: str) -> ErasureReport:
    """Erase one person's data in a project, in one transaction, and audit the run with its counts.

    1. Only an admin of the project, with a reason.
    2. Memory: every record in the person's user scope or told by them is erased with its earlier versions
       (`memory_erase`: tombstoned, content wiped from the record, context snapshots and stored replies).
    3. Session items the person authored (role `user` in the sessions whose metadata names them) are
       tombstoned in place by `harness_session_items_erase`, the one door the append-only trigger opens
       (sessions_app migration 0004): seq, role and run stay, the content becomes its SHA-256.
    4. Context snapshots that handed those items to a model, and stored Idempotency-Key replies of appends to
       those sessions and of context projections, get the same tombstone in place of the item.
    5. Everything else that names the person is kept and counted, with why (`KEPT_BECAUSE`); the audit entry
       names the subject by its SHA-256, the reason and the counts, never the erased content.
    """
    project_id = project if isinstance(project, int) else project.pk
    _require_admin(actor, project_id)
    subject = _subject_valid(subject)
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed("An erasure needs a reason.", code="reason_required")
    with transaction.atomic():
        plan = _plan(project_id, subject)
        erased_memory: set[int] = set()
        for record_id in plan.memory_ids:
            if record_id not in erased_memory:
                erased_memory.update(memory_erase(project=project_id, actor=actor, record_id=record_id))
        tombstones = _erase_items(plan.item_ids, actor.label)
        snapshots = _scrub_snapshots(plan, tombstones)
        replies = _scrub_replies(plan, tombstones)
        report = _report(subject, plan, dry_run=False, erased={
            "memory": len(erased_memory), "session_items": len(tombstones), "context_snapshots": snapshots,
            "idempotent_replies": replies})
        audit_record(project=project_id, actor=actor, action="person.erased",
                     target=Project.objects.get(pk=project_id),
                     data={"subject_sha256": report.subject_sha256, "reason": reason, "counts": report.counts()})
        return report


def _erase_items(item_ids: list[int], by: str) -> dict[tuple[int, int], dict[str, Any]]:
    """Tombstone the items through the database's door; (session, seq) -> the tombstone now stored."""
    if not item_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT item_id FROM harness_session_items_erase(%s::bigint[], %s)", [item_ids, by])
        done = [row[0] for row in cursor.fetchall()]
    return {(session_id, seq): content for session_id, seq, content in
            SessionItem.objects.filter(pk__in=done).values_list("session_id", "seq", "content")}


def _scrub_snapshots(plan: _Plan, tombstones: dict[tuple[int, int], dict[str, Any]]) -> int:
    scrubbed = 0
    for snapshot in _snapshots_naming(plan):
        content = dict(snapshot.content)
        seqs = plan.item_seqs.get(plan.run_sessions[snapshot.run_id], set())
        content["items"] = [
            {"seq": entry.get("seq"), "role": entry.get("role"), "text": "", "erased": True}
            if isinstance(entry, dict) and entry.get("seq") in seqs else entry
            for entry in content.get("items", [])
        ]
        ContextSnapshot.objects.filter(pk=snapshot.pk).update(content=content)
        scrubbed += 1
    return scrubbed


def _scrub_replies(plan: _Plan, tombstones: dict[tuple[int, int], dict[str, Any]]) -> int:
    scrubbed = 0
    for reply in _item_replies(plan).select_for_update().only("id", "path", "response_body"):
        body = reply.response_body
        if _scrub_reply(body, plan, tombstones):
            IdempotentRequest.objects.filter(pk=reply.pk).update(response_body=body)
            scrubbed += 1
    return scrubbed


def _scrub_reply(body: Any, plan: _Plan, tombstones: dict[tuple[int, int], dict[str, Any]]) -> bool:
    """Replace the person's items in one stored reply (in place), keeping its shape so a retry still gets a
    valid answer; whether anything was theirs. An append's reply lists items with their session; a context
    projection's reply has its run's items under `content.items`."""
    if not isinstance(body, dict):
        return False
    changed = False
    for entry in body.get("items") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("session"), int):
            continue
        key = (entry["session"], entry.get("seq"))
        if key[1] in plan.item_seqs.get(key[0], set()):
            entry["content"] = tombstones.get(key, {"erased": True})  # type: ignore[arg-type]
            changed = True
    content = body.get("content")
    if body.get("run") in plan.run_sessions and isinstance(content, dict):
        seqs = plan.item_seqs.get(plan.run_sessions[body["run"]], set())
        for entry in content.get("items") or []:
            if isinstance(entry, dict) and entry.get("seq") in seqs and entry.get("text"):
                entry["text"], entry["erased"] = "", True
                changed = True
    return changed
