"""Write operations on memory: propose, supersede, review, expire, delete, erase; context projection.

Every status change goes through `cas_transition` with MEMORY_MACHINE, and every change writes an
audit entry. Audit data never carries memory content (the audit table cannot be rewritten, and an
erase must remove the content everywhere it is stored).
"""

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import DateTimeField, F, Model, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import Project
from harness.tenancy import require_project_operator
from harness.transitions import cas_transition, cas_transition_row
from memory_app import policy as write_policy
from memory_app.models import (
    MEMORY_MACHINE,
    ContextSnapshot,
    MemoryRecord,
    MemoryScope,
    MemoryStatus,
    PolicyDecision,
    ProvenanceKind,
)
from memory_app.policy import Outcome
from memory_app.scoping import MemoryCaller
from memory_app.selectors import memory_chain, memory_conflicts_of, memory_records

MAX_BULK = 500
LIVE = (MemoryStatus.ACTIVE, MemoryStatus.HELD)


@dataclass(frozen=True)
class WriteResult:
    """What the policy decided about one write, and why; `record` is None when nothing was stored."""

    outcome: str
    code: str
    reason: str
    record: MemoryRecord | None
    conflicts: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class BulkResult:
    done: list[int]
    failed: dict[int, str]


def _project_id(project: Project | int) -> int:
    return project if isinstance(project, int) else project.pk


def _require_operator(actor: Actor, project_id: int) -> None:
    require_project_operator(actor.user, project_id, doing="curate its memory")  # the role in this project


def _require_writer(actor: Actor, project_id: int) -> None:
    if not actor.is_agent:
        _require_operator(actor, project_id)


def _get(project_id: int, record_id: int, caller: MemoryCaller | None = None) -> MemoryRecord:
    records = memory_records(project=project_id)
    if caller is not None:
        records = records.filter(caller.readable(project_id))
    record = records.filter(pk=record_id).first()
    if record is None:
        raise NotFoundError(f"Memory record {record_id} does not exist.")
    return record


def _validate_scope(project_id: int, scope: str, scope_key: str) -> str:
    if scope not in MemoryScope.values:
        raise ValidationFailed(f"scope is one of {', '.join(MemoryScope.values)}.", code="invalid_scope")
    scope_key = (scope_key or "").strip()
    if scope == MemoryScope.PROJECT:
        if scope_key:
            raise ValidationFailed("A project-wide record has no scope_key.", code="invalid_scope_key")
        return ""
    if not scope_key or len(scope_key) > 200:
        raise ValidationFailed(
            f"A {scope} record needs a scope_key (at most 200 characters).", code="invalid_scope_key"
        )
    if scope == MemoryScope.SESSION:
        from sessions_app.models import Session

        # ASCII digits within a bigint: "²".isdigit() is true and int() of it is not.
        is_id = scope_key.isascii() and scope_key.isdigit() and len(scope_key) <= 18
        if not is_id or not Session.objects.filter(project_id=project_id, pk=int(scope_key)).exists():
            raise ValidationFailed(
                "A session scope_key is the id of a session in this project.", code="invalid_scope_key"
            )
    return scope_key


def _validate_sources(
    project_id: int, source_run_id: int | None, source_session_id: int | None, source_item_seq: int | None
) -> None:
    from runs_app.models import Run
    from sessions_app.models import SessionItem

    if source_run_id is not None and not Run.objects.filter(project_id=project_id, pk=source_run_id).exists():
        raise ValidationFailed(f"Run {source_run_id} is not in this project.", code="invalid_source")
    if source_item_seq is not None:
        if source_session_id is None:
            raise ValidationFailed("A source item is named by its session and seq.", code="invalid_source")
        found = SessionItem.objects.filter(
            session_id=source_session_id, session__project_id=project_id, seq=source_item_seq
        ).exists()
        if not found:
            raise ValidationFailed("That session item is not in this project.", code="invalid_source")
    elif source_session_id is not None:
        from sessions_app.models import Session

        if not Session.objects.filter(project_id=project_id, pk=source_session_id).exists():
            raise ValidationFailed(f"Session {source_session_id} is not in this project.", code="invalid_source")


REASON_MAX = 500


def _person_reason(actor: Actor, reason: str, what: str) -> str:
    """A person's delete or edit says why (issue 32): the audit entry is how the next reader learns it. An agent's
    own edit of what it wrote needs none (its run is its reason)."""
    reason = (reason or "").strip()
    if not reason and not actor.is_agent:
        raise ValidationFailed(f"Say why you {what} this record: a reason is required.", code="reason_required")
    if len(reason) > REASON_MAX:
        raise ValidationFailed(f"A reason is at most {REASON_MAX} characters.", code="invalid")
    return reason


def _audit(project_id: int, actor: Actor, action: str, target: Model, **data: Any) -> None:
    audit_record(project=project_id, actor=actor, action=action, target=target, data=data)


# --- writes --------------------------------------------------------------------------------


def memory_write(
    *,
    project: Project | int,
    actor: Actor,
    scope: str,
    content: str,
    scope_key: str = "",
    subject: str = "",
    provenance_kind: str = ProvenanceKind.OBSERVED,
    source_run_id: int | None = None,
    source_session_id: int | None = None,
    source_item_seq: int | None = None,
    valid_until: dt.datetime | None = None,
    expires_at: dt.datetime | None = None,
) -> WriteResult:
    """Propose one fact; the scope's write policy decides, and the result says what and why.

    1. Validate the scope and that every named source lies in this project.
    2. Judge by the policy: a rejection stores nothing (audited without the content).
    3. A live record with the same normalised content in the scope absorbs the write (merged:
       its last_confirmed_at moves). Of writers racing on the same fact, the partial unique index
       lets one insert in; the others catch it in a savepoint and merge into the winner.
    4. Otherwise store it active (accepted) or held, and report the records it conflicts with.
    """
    project_id = _project_id(project)
    _require_writer(actor, project_id)
    caller = MemoryCaller.of(actor.token)
    if caller is not None and scope in MemoryScope.values:  # the caller's own key: memory_app.scoping
        scope_key = caller.write_key(project_id, scope, scope_key)
    scope_key = _validate_scope(project_id, scope, scope_key)
    if provenance_kind not in ProvenanceKind.values:
        raise ValidationFailed(f"provenance_kind is one of {', '.join(ProvenanceKind.values)}.", code="invalid")
    subject = (subject or "").strip()
    if len(subject) > 200:
        raise ValidationFailed("subject is at most 200 characters.", code="invalid")
    _validate_sources(project_id, source_run_id, source_session_id, source_item_seq)
    if caller is not None:
        caller.check_sources(project_id, source_run_id, source_session_id)
    has_provenance = bool(source_run_id or source_session_id or actor.user is not None)
    verdict = _with_sessions(write_policy.evaluate(
        write_policy.policy_for(project=project_id, scope=scope), content=content, has_provenance=has_provenance
    ), project_id, scope, scope_key, source_run_id, source_session_id)
    now = timezone.now()
    with transaction.atomic():
        if verdict.decision == PolicyDecision.REJECT:
            _audit(project_id, actor, "memory.write_rejected", Project(pk=project_id),
                   scope=scope, scope_key=scope_key, code=verdict.code, reason=verdict.reason)
            return WriteResult(Outcome.REJECTED, verdict.code, verdict.reason, None)
        digest = write_policy.content_hash(content)
        live = memory_records(project=project_id).filter(scope=scope, scope_key=scope_key, status__in=LIVE)
        status = MemoryStatus.HELD if verdict.decision == PolicyDecision.HOLD else MemoryStatus.ACTIVE
        # Bounded: each pass loses only to a concurrent insert or to the duplicate leaving the live set.
        for _attempt in range(3):
            existing = live.filter(content_hash=digest).first()
            if existing is not None:
                merged = _merge(project_id, actor, existing, now, valid_until=valid_until, expires_at=expires_at)
                if merged is not None:
                    return merged
                continue
            try:
                with transaction.atomic():
                    record = MemoryRecord.objects.create(
                        project_id=project_id, scope=scope, scope_key=scope_key, subject=subject, content=content,
                        content_hash=digest, provenance_kind=provenance_kind, source_run_id=source_run_id,
                        source_session_id=source_session_id, source_item_seq=source_item_seq,
                        source_person=actor.user, source_note=actor.label, valid_until=valid_until,
                        expires_at=expires_at, status=status, policy_decision=verdict.decision,
                        policy_reason=verdict.reason[:300],
                    )
            except IntegrityError:
                continue
            outcome = Outcome.HELD if status == MemoryStatus.HELD else Outcome.ACCEPTED
            conflicts = [r.pk for r in memory_conflicts_of(project=project_id, record=record)]
            _audit(project_id, actor, f"memory.{outcome}", record, scope=scope, scope_key=scope_key,
                   code=verdict.code, conflicts=conflicts)
            return WriteResult(outcome, verdict.code, verdict.reason, record, conflicts)
    raise ConflictError("Concurrent changes to the same fact kept this write from landing; retry.", code="write_race")


def _with_sessions(verdict: write_policy.Verdict, project_id: int, scope: str, scope_key: str,
                   source_run_id: int | None, source_session_id: int | None) -> write_policy.Verdict:
    """The scope's verdict, unless the sessions the write is made in the context of say more (seed 002: a session's
    role and memory policy bind its writes too, not only its context projection): a session that keeps no memory
    refuses it, a role whose writes a person reviews holds it (memory_app.policy.session_verdict). A refusal by
    the scope's own rules stands first."""
    if verdict.decision == PolicyDecision.REJECT:
        return verdict
    from runs_app.models import Run
    from sessions_app.models import Session

    ids = {source_session_id} if source_session_id is not None else set()
    if scope == MemoryScope.SESSION and scope_key.isdigit():
        ids.add(int(scope_key))
    if not ids and source_run_id is None:
        return verdict
    named = Q(pk__in=ids)
    if source_run_id is not None:
        named |= Q(pk__in=Run.objects.filter(project_id=project_id, pk=source_run_id).values("session_id"))
    found = Session.objects.filter(named, project_id=project_id).order_by("pk").values_list(
        "pk", "memory_policy", "role")
    return write_policy.session_verdict(list(found)) or verdict


def _merge(
    project_id: int,
    actor: Actor,
    existing: MemoryRecord,
    now: dt.datetime,
    *,
    valid_until: dt.datetime | None,
    expires_at: dt.datetime | None,
) -> WriteResult | None:
    """Fold a write into a live duplicate; None if it left the live set meanwhile."""
    from memory_app.selectors import is_fresh

    updates: dict[str, Any] = {"last_confirmed_at": now, "updated_at": now}
    if not is_fresh(existing, now=now):
        # Observing a lapsed fact again renews it with the new write's freshness.
        updates.update(valid_until=valid_until, expires_at=expires_at, version=F("version") + 1)
    if not memory_records(project=project_id).filter(pk=existing.pk, status__in=LIVE).update(**updates):
        return None
    existing.refresh_from_db()
    _audit(project_id, actor, "memory.merged", existing, scope=existing.scope, scope_key=existing.scope_key)
    reason = f"Same content as record {existing.pk} in this scope: merged, not stored twice."
    conflicts = [r.pk for r in memory_conflicts_of(project=project_id, record=existing)]
    return WriteResult(Outcome.MERGED, "duplicate", reason, existing, conflicts)


def memory_supersede(
    *,
    project: Project | int,
    actor: Actor,
    record_id: int,
    content: str | None = None,
    replacement_id: int | None = None,
    subject: str | None = None,
    provenance_kind: str | None = None,
    source_run_id: int | None = None,
    source_session_id: int | None = None,
    source_item_seq: int | None = None,
    valid_until: dt.datetime | None = None,
    expires_at: dt.datetime | None = None,
    expected_version: int | None = None,
    reason: str = "",
) -> MemoryRecord:
    """Replace an active record with a new version (`content`) or with another live record
    (`replacement_id`, how a conflict is resolved). Returns the record that now stands.

    1. Operators may supersede any record of their projects; an agent only what it wrote.
    2. New content passes the scope's size, pattern and provenance rules; an agent's edit in a
       scope that holds writes for review is refused (the reviewed fact stays until reviewed).
    3. New content equal to another live record's in the scope resolves onto that record.
    4. Insert the new version, then one conditional UPDATE moves the old one active -> superseded
       and links it: of concurrent supersedes exactly one lands, the rest get a conflict and
       their inserts roll back.
    Freshness left as None is inherited from the old record. A person's edit with new content needs a `reason`
    (recorded in the audit entry with the old and new content's hashes, never the content itself).
    """
    project_id = _project_id(project)
    _require_writer(actor, project_id)
    caller = MemoryCaller.of(actor.token)
    old = _get(project_id, record_id, caller)
    if caller is not None:
        caller.write_key(project_id, old.scope, old.scope_key)
    if actor.is_agent and old.source_note != actor.label:
        raise Forbidden("An agent supersedes only records it wrote.", code="not_owner")
    if content is None and replacement_id is not None:
        return _supersede_onto(project_id, actor, old, _get(project_id, replacement_id, caller), expected_version,
                               reason=reason.strip()[:REASON_MAX])
    if content is None or replacement_id is not None:
        raise ValidationFailed("Give either content or replacement_id.", code="invalid")
    reason = _person_reason(actor, reason, "edit")
    _validate_sources(project_id, source_run_id, source_session_id, source_item_seq)
    if caller is not None:
        caller.check_sources(project_id, source_run_id, source_session_id)
    if provenance_kind is not None and provenance_kind not in ProvenanceKind.values:
        raise ValidationFailed(f"provenance_kind is one of {', '.join(ProvenanceKind.values)}.", code="invalid")
    has_provenance = bool(source_run_id or source_session_id or actor.user is not None)
    verdict = _with_sessions(write_policy.evaluate(
        write_policy.policy_for(project=project_id, scope=old.scope), content=content, has_provenance=has_provenance
    ), project_id, old.scope, old.scope_key, source_run_id, source_session_id)
    if verdict.decision == PolicyDecision.REJECT:
        raise ValidationFailed(verdict.reason, code=verdict.code, outcome=Outcome.REJECTED)
    if verdict.decision == PolicyDecision.HOLD and actor.is_agent:
        raise Forbidden("This scope holds writes for review: an operator must make this edit.", code="review_required")
    digest = write_policy.content_hash(content)
    if digest == old.content_hash:
        raise ValidationFailed("The content is unchanged.", code="unchanged")
    live = memory_records(project=project_id).filter(scope=old.scope, scope_key=old.scope_key, status__in=LIVE)
    duplicate = live.filter(content_hash=digest).exclude(pk=old.pk).first()
    if duplicate is not None:
        return _supersede_onto(project_id, actor, old, duplicate, expected_version, reason=reason)
    kind = ProvenanceKind.EDITED if not actor.is_agent else (provenance_kind or old.provenance_kind)
    with transaction.atomic():
        try:
            with transaction.atomic():
                new = MemoryRecord.objects.create(
                    project_id=project_id, scope=old.scope, scope_key=old.scope_key,
                    subject=old.subject if subject is None else subject.strip()[:200], content=content,
                    content_hash=digest, provenance_kind=kind, source_run_id=source_run_id,
                    source_session_id=source_session_id, source_item_seq=source_item_seq,
                    source_person=actor.user, source_note=actor.label,
                    valid_until=valid_until if valid_until is not None else old.valid_until,
                    expires_at=expires_at if expires_at is not None else old.expires_at,
                    policy_decision=PolicyDecision.ACCEPT, policy_reason=f"Supersedes record {old.pk}.",
                )
        except IntegrityError:
            # A concurrent writer stored the same content first: resolve onto it (or lose the race).
            duplicate = live.filter(content_hash=digest).exclude(pk=old.pk).first()
            if duplicate is None:
                raise
            return _supersede_onto(project_id, actor, old, duplicate, expected_version, reason=reason)
        _supersede_row(project_id, old.pk, expected_version, {"superseded_by": new})
        _audit(project_id, actor, "memory.superseded", old, by=new.pk, version=new.version, reason=reason,
               **_edit_facts(old, new))
        return new


def _supersede_row(project_id: int, record_id: int, expected_version: int | None, updates: dict[str, Any]) -> None:
    """The old record's move active -> superseded. Of concurrent supersedes one lands; the others are told
    `already_superseded` (experiment 24), not an illegal superseded -> superseded transition: they lost a race,
    they asked for nothing illegal."""
    try:
        cas_transition(
            memory_records(project=project_id), pk=record_id, machine=MEMORY_MACHINE, to=MemoryStatus.SUPERSEDED,
            expected_version=expected_version, updates=updates,
        )
    except ConflictError as exc:
        if exc.current_status != MemoryStatus.SUPERSEDED:
            raise
        raise ConflictError(
            f"Memory record {record_id} was superseded by another edit first; read it again.",
            code="already_superseded", current_status=exc.current_status, current_version=exc.current_version,
        ) from None


def _edit_facts(old: MemoryRecord, new: MemoryRecord) -> dict[str, Any]:
    """What an edit changed, for its audit entry: hashes and lengths stand for the content, which the audit table
    must not hold (it cannot be rewritten when a person is erased)."""
    facts: dict[str, Any] = {
        "scope": old.scope, "scope_key": old.scope_key,
        "content_hash": {"from": old.content_hash, "to": new.content_hash},
        "content_length": {"from": len(old.content), "to": len(new.content)},
    }
    if old.subject != new.subject:
        facts["subject"] = {"from": old.subject, "to": new.subject}
    return facts


def _supersede_onto(
    project_id: int, actor: Actor, old: MemoryRecord, keep: MemoryRecord, expected_version: int | None,
    *, reason: str = "",
) -> MemoryRecord:
    if keep.pk == old.pk:
        raise ValidationFailed("A record cannot supersede itself.", code="invalid")
    if keep.status != MemoryStatus.ACTIVE or (keep.scope, keep.scope_key) != (old.scope, old.scope_key):
        raise ValidationFailed(
            "The replacement must be an active record in the same scope.", code="invalid_replacement"
        )
    with transaction.atomic():
        _supersede_row(project_id, old.pk, expected_version, {"superseded_by_id": keep.pk})
        _audit(project_id, actor, "memory.superseded", old, by=keep.pk, resolved_onto_existing=True, reason=reason,
               **_edit_facts(old, keep))
    return keep


def memory_review(
    *, project: Project | int, actor: Actor, record_id: int, approve: bool, expected_version: int | None = None
) -> MemoryRecord:
    """An operator's decision on a held record: held -> active, or held -> rejected."""
    project_id = _project_id(project)
    _require_operator(actor, project_id)
    to = MemoryStatus.ACTIVE if approve else MemoryStatus.REJECTED
    decision = PolicyDecision.ACCEPT if approve else PolicyDecision.REJECT
    reason = f"{'Approved' if approve else 'Rejected'} by {actor.label} on review."
    with transaction.atomic():
        # A held store put approved replaces its key's active value (memory_put): that one is superseded first, as
        # a key holds one active value.
        held = memory_records(project=project_id).filter(pk=record_id, status=MemoryStatus.HELD).exclude(key="") \
            .values_list("namespace", "key").first()
        current = None
        if approve and held is not None:
            current = memory_records(project=project_id).filter(
                namespace=held[0], key=held[1], status=MemoryStatus.ACTIVE).select_for_update().first()
            if current is not None:
                _supersede_row(project_id, current.pk, current.version, {"superseded_by_id": record_id})
        record = cas_transition_row(
            memory_records(project=project_id), pk=record_id, machine=MEMORY_MACHINE, to=to,
            expected_version=expected_version, updates={"policy_decision": decision, "policy_reason": reason[:300]},
        )
        _audit(project_id, actor, f"memory.review_{'approved' if approve else 'rejected'}", record)
        if current is not None:
            _audit(project_id, actor, "memory.superseded", current, by=record.pk, version=record.version,
                   reason="store put approved on review", **_edit_facts(current, record))
        return record


def memory_expire(
    *,
    project: Project | int,
    actor: Actor,
    record_id: int,
    at: dt.datetime | None = None,
    expected_version: int | None = None,
) -> MemoryRecord:
    """Set a live record's expiry (now by default): it leaves retrieval and stays in storage."""
    project_id = _project_id(project)
    _require_operator(actor, project_id)
    at = at or timezone.now()
    with transaction.atomic():
        records = memory_records(project=project_id).filter(pk=record_id, status__in=LIVE)
        if expected_version is not None:
            records = records.filter(version=expected_version)
        if not records.update(expires_at=at, version=F("version") + 1, updated_at=timezone.now()):
            current = _get(project_id, record_id)
            # A live record at another version lost a race (version_conflict, as every stale write answers); a
            # record that is no longer live cannot be expired at any version (not_expirable).
            if current.status in LIVE and expected_version is not None and current.version != expected_version:
                raise ConflictError(
                    f"Memory record {record_id} is at version {current.version}, not {expected_version}.",
                    code="version_conflict", current_status=current.status, current_version=current.version,
                )
            raise ConflictError(
                "Only a live record can be expired.", code="not_expirable",
                current_status=current.status, current_version=current.version,
            )
        record = _get(project_id, record_id)
        _audit(project_id, actor, "memory.expired", record, expires_at=at.isoformat())
        return record


def memory_delete(
    *, project: Project | int, actor: Actor, record_id: int, reason: str, expected_version: int | None = None
) -> MemoryRecord:
    """Tombstone a record: it leaves retrieval; who deleted it, when and why are kept (the why in the audit)."""
    project_id = _project_id(project)
    _require_operator(actor, project_id)
    reason = _person_reason(actor, reason, "delete")
    with transaction.atomic():
        record = cas_transition_row(
            memory_records(project=project_id), pk=record_id, machine=MEMORY_MACHINE, to=MemoryStatus.DELETED,
            expected_version=expected_version, updates={"deleted_by": actor.label, "deleted_at": timezone.now()},
        )
        _audit(project_id, actor, "memory.deleted", record, reason=reason, scope=record.scope,
               scope_key=record.scope_key, subject=record.subject, version=record.version,
               content_hash=record.content_hash)
        return record


def memory_erase(*, project: Project | int, actor: Actor, record_id: int, include_history: bool = True) -> list[int]:
    """Delete a record and remove its content everywhere it is stored. Returns the erased ids.

    1. The record and, with `include_history`, every earlier version it replaced.
    2. Each is tombstoned (if not already) and its content, subject and content hash wiped.
    3. Every context snapshot that handed one of them to a model has that entry's text wiped, and
       so has every stored Idempotency-Key reply of the memory API that carried it.
    4. The audit entry names the ids only.
    """
    project_id = _project_id(project)
    _require_operator(actor, project_id)
    with transaction.atomic():
        ids = [record_id]
        if include_history:
            ids = [r.pk for r in memory_chain(project=project_id, record_id=record_id).before] + [record_id]
        now = timezone.now()
        records = memory_records(project=project_id)
        for pk in ids:
            # A store item's value, key and namespace path are the caller's words too.
            wipe: dict[str, Any] = {"content": "", "subject": "", "content_hash": f"erased:{pk}", "erased_at": now,
                                    "value": None, "key": "", "namespace": []}
            current = records.filter(pk=pk).values_list("status", flat=True).first()
            if current is None:
                raise NotFoundError(f"Memory record {pk} does not exist.")
            if current == MemoryStatus.DELETED:
                records.filter(pk=pk, status=MemoryStatus.DELETED).update(
                    **wipe, version=F("version") + 1, updated_at=now
                )
            else:
                cas_transition(
                    records, pk=pk, machine=MEMORY_MACHINE, to=MemoryStatus.DELETED, expected_version=None,
                    updates={**wipe, "deleted_by": actor.label, "deleted_at": now},
                )
        snapshot_ids = _scrub_snapshots(project_id, set(ids))
        replies = _scrub_idempotent_replies(set(ids))
        _audit(project_id, actor, "memory.erased", _get(project_id, record_id), erased=ids, snapshots=snapshot_ids,
               replies=replies)
        return ids


def _scrub_snapshots(project_id: int, ids: set[int]) -> list[int]:
    match = Q()
    for pk in ids:
        match |= Q(memory_ids__contains=[pk])
    snapshots = ContextSnapshot.objects.filter(project_id=project_id).filter(match)
    scrubbed: list[int] = []
    for snapshot in snapshots.select_for_update().only("id", "memory_ids", "content"):
        if not ids.intersection(snapshot.memory_ids):
            continue
        content = dict(snapshot.content)
        content["memory"] = [
            {"id": entry.get("id"), "erased": True, "content": "", "subject": ""}
            if entry.get("id") in ids else entry
            for entry in content.get("memory", [])
        ]
        ContextSnapshot.objects.filter(pk=snapshot.pk).update(content=content)
        scrubbed.append(snapshot.pk)
    return scrubbed


def _wipe_entry(entry: Any, ids: set[int]) -> bool:
    if isinstance(entry, dict) and entry.get("id") in ids and ("content" in entry or "value" in entry):
        # A store item's value, key and namespace path are the writer's words too (memory_put's replies).
        wiped: dict[str, Any] = {"content": "", "subject": "", "value": None, "key": "", "namespace": []}
        entry.update({name: blank for name, blank in wiped.items() if name in entry})
        return True
    return False


def _scrub_idempotent_replies(ids: set[int]) -> int:
    """Wipe erased content from replayable replies, keeping their shape (a retry still gets a valid reply)."""
    from harness.models import IdempotentRequest

    match = Q()
    for pk in ids:
        match |= (
            Q(response_body__contains={"id": pk})
            | Q(response_body__contains={"record": {"id": pk}})
            | Q(response_body__contains={"memory_ids": [pk]})
        )
    replies = IdempotentRequest.objects.filter(
        path__startswith="/api/v1/memory/", response_body__isnull=False).filter(match)
    scrubbed = 0
    for reply in replies.select_for_update().only("id", "path", "response_body"):
        body = reply.response_body
        if not isinstance(body, dict):
            continue
        # A context reply's own `id` is its snapshot's, not a record's: only its memory entries are records.
        is_record = not reply.path.startswith("/api/v1/memory/context/")
        changed = (is_record and _wipe_entry(body, ids)) | _wipe_entry(body.get("record"), ids)
        context = body.get("content")
        if isinstance(context, dict):
            for entry in context.get("memory", []):
                changed |= _wipe_entry(entry, ids)
        if changed:
            IdempotentRequest.objects.filter(pk=reply.pk).update(response_body=body)
            scrubbed += 1
    return scrubbed


def memory_bulk_delete(*, project: Project | int, actor: Actor, record_ids: list[int], reason: str) -> BulkResult:
    """Delete each record in its own transaction; one refusal does not undo the others. One reason for all, asked
    for before anything is touched."""
    reason = _person_reason(actor, reason, "delete")
    return _bulk(record_ids, lambda pk: memory_delete(project=project, actor=actor, record_id=pk, reason=reason))


def memory_bulk_expire(
    *, project: Project | int, actor: Actor, record_ids: list[int], at: dt.datetime | None = None
) -> BulkResult:
    at = at or timezone.now()
    return _bulk(record_ids, lambda pk: memory_expire(project=project, actor=actor, record_id=pk, at=at))


def _bulk(record_ids: list[int], apply: Callable[[int], object]) -> BulkResult:
    if len(record_ids) > MAX_BULK:
        raise ValidationFailed(f"At most {MAX_BULK} records at once.", code="batch_too_large")
    done: list[int] = []
    failed: dict[int, str] = {}
    for pk in dict.fromkeys(record_ids):
        try:
            apply(pk)
            done.append(pk)
        except (ConflictError, NotFoundError) as exc:
            failed[pk] = exc.detail
    return BulkResult(done=done, failed=failed)


# --- the LangGraph store's writes (memory_app.store_keys; harness_client.langgraph_store) -----------------------

GRAPH_FIELDS = ("thread_id", "checkpoint_ns", "checkpoint_id", "node")
MAX_TTL_SECONDS = 10 * 365 * 24 * 3600


def _graph_source(project_id: int, caller: MemoryCaller | None, graph: dict[str, Any] | None) -> tuple[
        dict[str, str], int | None]:
    """A put's graph provenance, checked, and the run of its thread when the thread is one of the project's (and,
    for a narrowed token, of its end user's sessions: another's thread is not there for it)."""
    from runs_app.models import Run

    source = {name: str(value)[:1000] for name, value in (graph or {}).items()
              if name in GRAPH_FIELDS and isinstance(value, str) and "\x00" not in value}
    thread_id = source.get("thread_id", "")
    if not thread_id or len(thread_id) > 64:
        return source, None
    runs = Run.objects.filter(project_id=project_id, ref=thread_id)
    if caller is not None and caller.end_user is not None:
        runs = runs.filter(session__in=caller._sessions(project_id))
    return source, runs.values_list("pk", flat=True).first()


def memory_put(
    *,
    project: Project | int,
    actor: Actor,
    namespace: list[str],
    key: str,
    value: dict[str, Any],
    ttl_seconds: int | None = None,
    graph: dict[str, Any] | None = None,
    source_run_id: int | None = None,
    source_session_id: int | None = None,
) -> WriteResult:
    """Put one value under (namespace, key), as LangGraph's store does; the scope's write policy decides.

    1. The namespace names the scope (memory_app.store_keys); the caller must be able to write it (scoping).
    2. The graph's provenance (thread, checkpoint, node) is kept, and the thread's run named as the source run.
    3. The policy judges the value's JSON text, as it judges any write (size, patterns, provenance, the sessions'
       rules): a rejection stores nothing.
    4. The same value as the key's live one is merged into it (confirmed; its TTL restarts). A held put waits
       beside the key's active value (one held per key: another is 409 `store_key_held`). An accepted put of a new
       value supersedes the key's active record: the old one stays in the chain, linked to the new.
    """
    from memory_app.store_keys import content_of, key_of, namespace_of

    project_id = _project_id(project)
    _require_writer(actor, project_id)
    caller = MemoryCaller.of(actor.token)
    where = namespace_of(namespace)
    key = key_of(key)
    content = content_of(value)
    scope_key = where.scope_key
    if caller is not None and caller.write_key(project_id, where.scope, scope_key) != scope_key:
        raise Forbidden("A namespace names its scope key: this token's is another.", code="end_user_scope")
    scope_key = _validate_scope(project_id, where.scope, scope_key)
    if ttl_seconds is not None and not 1 <= ttl_seconds <= MAX_TTL_SECONDS:
        raise ValidationFailed(f"ttl is between 1 second and {MAX_TTL_SECONDS} seconds.", code="invalid_ttl")
    source, thread_run = _graph_source(project_id, caller, graph)
    source_run_id = source_run_id or thread_run
    _validate_sources(project_id, source_run_id, source_session_id, None)
    if caller is not None:
        caller.check_sources(project_id, source_run_id, source_session_id)
    has_provenance = bool(source_run_id or source_session_id or source.get("thread_id") or actor.user is not None)
    verdict = _with_sessions(write_policy.evaluate(
        write_policy.policy_for(project=project_id, scope=where.scope), content=content, has_provenance=has_provenance
    ), project_id, where.scope, scope_key, source_run_id, source_session_id)
    labels = list(where.labels)
    if verdict.decision == PolicyDecision.REJECT:
        _audit(project_id, actor, "memory.write_rejected", Project(pk=project_id),
               scope=where.scope, scope_key=scope_key, code=verdict.code, reason=verdict.reason)
        return WriteResult(Outcome.REJECTED, verdict.code, verdict.reason, None)
    digest = write_policy.content_hash(content)
    status = MemoryStatus.HELD if verdict.decision == PolicyDecision.HOLD else MemoryStatus.ACTIVE
    now = timezone.now()
    expires_at = now + dt.timedelta(seconds=ttl_seconds) if ttl_seconds is not None else None
    subject = "/".join([*labels[1 if where.scope == MemoryScope.PROJECT else 2:], key])[:200]
    keyed = memory_records(project=project_id).filter(namespace=labels, key=key)
    with transaction.atomic():
        for _attempt in range(3):
            same = keyed.filter(status__in=LIVE, content_hash=digest).first()
            if same is not None:
                renewed = keyed.filter(pk=same.pk, status__in=LIVE).update(
                    last_confirmed_at=now, updated_at=now, expires_at=expires_at, ttl_seconds=ttl_seconds,
                    version=F("version") + 1)
                if not renewed:
                    continue
                same.refresh_from_db()
                _audit(project_id, actor, "memory.merged", same, scope=same.scope, scope_key=same.scope_key)
                if same.status == MemoryStatus.HELD:  # the same value still waits for review: it is still held
                    return WriteResult(Outcome.HELD, "held_for_review", f"Same value as record {same.pk}, which is "
                                       "held for review.", same)
                return WriteResult(Outcome.MERGED, "duplicate", f"Same value as record {same.pk} under this key: "
                                   "confirmed, not stored twice.", same)
            if status == MemoryStatus.HELD and keyed.filter(status=MemoryStatus.HELD).exists():
                raise ConflictError("A put to this key is already waiting for review; an operator decides it first.",
                                    code="store_key_held", current_status=MemoryStatus.HELD)
            current = keyed.filter(status=MemoryStatus.ACTIVE).select_for_update().first()
            try:
                with transaction.atomic():
                    if status == MemoryStatus.ACTIVE and current is not None:
                        _supersede_row(project_id, current.pk, current.version, {})
                    record = MemoryRecord.objects.create(
                        project_id=project_id, scope=where.scope, scope_key=scope_key, subject=subject,
                        content=content, content_hash=digest, namespace=labels, key=key, value=value,
                        ttl_seconds=ttl_seconds, expires_at=expires_at, source_graph=source,
                        provenance_kind=ProvenanceKind.OBSERVED, source_run_id=source_run_id,
                        source_session_id=source_session_id, source_person=actor.user, source_note=actor.label,
                        status=status, policy_decision=verdict.decision, policy_reason=verdict.reason[:300],
                    )
                    if status == MemoryStatus.ACTIVE and current is not None:
                        memory_records(project=project_id).filter(pk=current.pk).update(superseded_by=record)
            except (IntegrityError, ConflictError):
                continue  # a concurrent put to the key landed first: judged again against it
            outcome = Outcome.HELD if status == MemoryStatus.HELD else Outcome.ACCEPTED
            _audit(project_id, actor, f"memory.{outcome}", record, scope=where.scope, scope_key=scope_key,
                   code=verdict.code, key=True)
            if status == MemoryStatus.ACTIVE and current is not None:
                _audit(project_id, actor, "memory.superseded", current, by=record.pk, version=record.version,
                       reason="", **_edit_facts(current, record))
            return WriteResult(outcome, verdict.code, verdict.reason, record)
    raise ConflictError("Concurrent puts to the same key kept this one from landing; retry.", code="write_race")


def memory_key_delete(*, project: Project | int, actor: Actor, namespace: list[str], key: str) -> list[int]:
    """A store's delete: tombstone the key's live records (its value and a put waiting for review), as
    memory_delete does (erasure scrubs them later); the history stays. Returns their ids; none for an absent key.
    An agent deletes in the scopes it may write (memory_app.scoping)."""
    from memory_app.store_keys import key_of, namespace_of

    project_id = _project_id(project)
    _require_writer(actor, project_id)
    where = namespace_of(namespace)
    key = key_of(key)
    caller = MemoryCaller.of(actor.token)
    if caller is not None and caller.write_key(project_id, where.scope, where.scope_key) != where.scope_key:
        raise Forbidden("A namespace names its scope key: this token's is another.", code="end_user_scope")
    deleted: list[int] = []
    with transaction.atomic():
        live = memory_records(project=project_id).filter(namespace=list(where.labels), key=key, status__in=LIVE)
        for pk in live.order_by("pk").values_list("pk", flat=True):
            try:
                record = cas_transition_row(
                    memory_records(project=project_id), pk=pk, machine=MEMORY_MACHINE, to=MemoryStatus.DELETED,
                    expected_version=None, updates={"deleted_by": actor.label, "deleted_at": timezone.now()},
                )
            except ConflictError:
                continue  # left the live set meanwhile (a concurrent delete or put): nothing of it to delete
            _audit(project_id, actor, "memory.deleted", record, reason="store delete", scope=record.scope,
                   scope_key=record.scope_key, subject=record.subject, version=record.version,
                   content_hash=record.content_hash)
            deleted.append(pk)
    return deleted


def memory_ttl_refresh(*, project: Project | int, record_ids: list[int]) -> int:
    """A store read that refreshes: each record's expiry moves to now + its TTL (one UPDATE; records with no TTL
    are left as they are). A read's touch: the content, status and version stay, and no audit entry is written."""
    now = timezone.now()
    records = memory_records(project=_project_id(project)).filter(
        pk__in=record_ids, status=MemoryStatus.ACTIVE, ttl_seconds__isnull=False)
    return records.update(expires_at=RawSQL('%s::timestamptz + make_interval(secs => "ttl_seconds")', (now,),
                                            output_field=DateTimeField()))
