"""External effects: intent, dispatch, delivery and consume-once, keyed by the idempotency key; a refusal;
and a person's decision on an effect whose outcome cannot be proven (seed 002, section 12)."""

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_record
from harness.canonical import action_fingerprint, digest
from harness.db import fetch_instance, returning
from harness.http.errors import ConflictError, DomainError, Forbidden, NotFoundError, ValidationFailed
from harness.models import Project
from harness.tenancy import Role, acting_filter, decision_refusal, decision_scope
from harness.transitions import cas_transition, cas_transition_row
from runs_app.machines import EFFECT_MACHINE, RUN_MACHINE, run_acting_statuses
from runs_app.models import (
    ApprovalRequest,
    ApprovalStatus,
    EffectDecision,
    EffectStatus,
    ExternalEffect,
    FailureCategory,
    Run,
    RunStatus,
)
from runs_app.services.runs import events_json, run_event_append, run_events_append, run_transition
from runs_app.signals import resume_requested


def effect_intend(
    *,
    project: Project | int,
    idempotency_key: str,
    tool: str,
    arguments: Any = None,
    run_id: int | None = None,
    approval_id: int | None = None,
    actor: Actor | None = None,
) -> tuple[ExternalEffect, bool]:
    """Record the intent to cause an effect. The same key again returns the first record.

    A run that may not act may not declare an action (issue 30): a new intent for a run that is not acting
    (runs_app.machines.run_acting_statuses: running; for the resume worker, `actor` of kind worker, any run it
    resumes) is refused 409 `run_not_acting`, naming the run's status; a repeat of an intent recorded before
    still answers the first record.

    An approval's key belongs to the action it approves (issue 19, defect 1): otherwise any agent token could
    plant another action under that key, or name the approval beside other arguments, and the approved call
    would end blocked at `bind_result` (the key names another action). So, checked inside the INSERT:
    - an effect that names an approval is that approval's approved action: the approval is `approved`, and
      its key, tool and approved fingerprint are the effect's;
    - under a key that a pending approval of the project holds, nothing is intended before the decision (the
      reviewer may still edit the arguments); under an approved one's, only its approved action.
    """
    project_id = project if isinstance(project, int) else project.pk
    if not idempotency_key or len(idempotency_key) > 200:
        raise ValidationFailed("An idempotency key is 1 to 200 characters.", code="invalid")
    arguments_digest = digest(arguments) if arguments is not None else ""
    fingerprint = action_fingerprint(tool, arguments)
    acting = sorted(run_acting_statuses(actor.kind if actor is not None else None))
    # The first intent is one statement (the run and approval checked in this project inside it; the key and tool
    # are text throughout, one type per parameter for a server-side bound statement);
    # a key seen before, a missing run or approval, or an approval the effect does not match takes the
    # path below to say which.
    created = fetch_instance(ExternalEffect, _INTEND_SQL, {
        "pid": project_id, "key": idempotency_key, "tool": tool, "digest": arguments_digest, "run": run_id,
        "approval": approval_id, "status": EffectStatus.INTENDED, "now": timezone.now(), "fp": fingerprint,
        "pending": ApprovalStatus.PENDING, "approved": ApprovalStatus.APPROVED, "acting": acting,
    })
    if created is not None:
        return created, True
    effects = ExternalEffect.objects.filter(project_id=project_id)
    run = None if run_id is None else Run.objects.filter(project_id=project_id, pk=run_id).values(
        "status", "version").first()
    if run_id is not None and run is None:
        raise NotFoundError(f"Run {run_id} does not exist.")
    refusal = _approval_refusal(project_id, idempotency_key, tool, fingerprint, approval_id)
    if refusal is not None:
        raise refusal
    if run is not None and run["status"] not in acting and not effects.filter(idempotency_key=idempotency_key).exists():
        raise ConflictError(
            f"Run {run_id} is {run['status']}: a run that may not act may not declare an action (only a running run "
            "does).", code="run_not_acting", current_status=run["status"], current_version=run["version"],
            run=run_id, run_status=run["status"],
        )
    try:
        with transaction.atomic():
            effect = ExternalEffect.objects.create(
                project_id=project_id, idempotency_key=idempotency_key, tool=tool,
                arguments_digest=arguments_digest, run_id=run_id, approval_id=approval_id,
            )
            return effect, True
    except IntegrityError:
        effect = effects.get(idempotency_key=idempotency_key)
        if (effect.tool, effect.arguments_digest) != (tool, arguments_digest):
            raise ConflictError(
                "This idempotency key already names a different action.",
                code="idempotency_key_reused", current_status=effect.status, current_version=effect.version,
            ) from None
        return effect, False


def _approval_refusal(
    project_id: int, idempotency_key: str, tool: str, fingerprint: str, approval_id: int | None
) -> DomainError | None:
    """Why the intent's approval checks (`_INTEND_SQL`) refused it, read after the refusal; None if they pass."""
    fields = ("pk", "status", "version", "idempotency_key", "tool", "approved_fingerprint")
    approvals = ApprovalRequest.objects.filter(project_id=project_id)
    if approval_id is not None:
        named = approvals.filter(pk=approval_id).values(*fields).first()
        if named is None:
            return NotFoundError(f"Approval {approval_id} does not exist.")
        if named["status"] != ApprovalStatus.APPROVED:
            return ConflictError(
                f"Approval {approval_id} is {named['status']}: an effect names only an approved approval.",
                code="approval_not_approved", current_status=named["status"], current_version=named["version"],
            )
        if named["idempotency_key"] != idempotency_key:
            return ConflictError(
                f"Approval {approval_id} was asked under the idempotency key {named['idempotency_key']!r}, not "
                f"{idempotency_key!r}.", code="approval_mismatch", current_status=named["status"],
                current_version=named["version"],
            )
        if (named["tool"], named["approved_fingerprint"]) != (tool, fingerprint):
            return ConflictError(
                f"This is not the action approval {approval_id} approved (its tool and arguments have another "
                "fingerprint).", code="approval_mismatch", current_status=named["status"],
                current_version=named["version"], approved_fingerprint=named["approved_fingerprint"],
                fingerprint=fingerprint,
            )
    holder = approvals.filter(idempotency_key=idempotency_key).filter(
        Q(status=ApprovalStatus.PENDING)
        | (Q(status=ApprovalStatus.APPROVED) & ~Q(tool=tool, approved_fingerprint=fingerprint))
    ).order_by("-pk").values(*fields).first()
    if holder is None:
        return None
    if holder["status"] == ApprovalStatus.PENDING:
        return ConflictError(
            f"Approval {holder['pk']} is pending under this idempotency key: nothing is intended under it before "
            "the decision.", code="approval_not_approved", current_status=holder["status"],
            current_version=holder["version"],
        )
    return ConflictError(
        f"This idempotency key names the action approval {holder['pk']} approved, not this one.",
        code="idempotency_key_reused", current_status=holder["status"], current_version=holder["version"],
    )


_INTEND_SQL = """
INSERT INTO runs_app_externaleffect (project_id, idempotency_key, tool, arguments_digest, run_id, approval_id, status,
    version, attempts, result, result_hash, conflicting_hash, receipt, created_at, updated_at)
SELECT %(pid)s, %(key)s::text, %(tool)s::text, %(digest)s, %(run)s, %(approval)s, %(status)s, 1, 0, NULL, '', '',
       '', %(now)s, %(now)s
 WHERE (%(run)s::bigint IS NULL OR EXISTS (SELECT 1 FROM runs_app_run WHERE id = %(run)s AND project_id = %(pid)s
                                                                  AND status = ANY(%(acting)s)))
   AND (%(approval)s::bigint IS NULL
        OR EXISTS (SELECT 1 FROM runs_app_approvalrequest
                    WHERE id = %(approval)s AND project_id = %(pid)s AND status = %(approved)s
                      AND idempotency_key = %(key)s::text AND tool = %(tool)s::text AND approved_fingerprint = %(fp)s))
   AND NOT EXISTS (SELECT 1 FROM runs_app_approvalrequest
                    WHERE project_id = %(pid)s AND idempotency_key = %(key)s::text
                      AND (status = %(pending)s
                           OR (status = %(approved)s AND (tool <> %(tool)s::text OR approved_fingerprint <> %(fp)s))))
ON CONFLICT (project_id, idempotency_key) DO NOTHING
""" + returning(ExternalEffect) + """
"""  # noqa: S608 - the RETURNING list is the model's columns (harness.db.returning); every value is bound


class Resend:
    """Who allows an unknown effect to be dispatched again under its key (`effect_dispatch`'s `resend`)."""

    NONE = ""  # only a first dispatch (from `intended`)
    ADAPTER = "adapter"  # the tool's adapter declares that it honours idempotency keys
    PERSON = "person"  # a person decided to retry it (`effect_resolve`): spent by this dispatch


def effect_dispatch(
    *, project: Project | int, effect_id: int, resend: str = Resend.NONE, run_id: int | None = None,
    events: list[tuple[str, dict[str, Any]]] | None = None,
) -> ExternalEffect:
    """Mark the call as about to leave (attempts + 1) before it leaves: a crash after this is `unknown`.

    An unknown effect leaves again only with a reason to believe that is safe (`resend`); otherwise the
    write's condition holds only for an intended one, and a refused write is a 409. A person's retry is
    spent by the dispatch (`retry_authorized` back to false in the same statement).
    One statement on PostgreSQL: the transition's UPDATE returns the dispatched row. `events` are appended
    to run `run_id` (of this project) with the next seqs in the same statement, and only when the dispatch
    is written: the resume's trace of the steps before it (worker.steps.bind_result), committed with it.
    """
    allowed = {Resend.NONE: Q(status=EffectStatus.INTENDED),
               Resend.PERSON: Q(status=EffectStatus.INTENDED) | Q(retry_authorized=True),
               Resend.ADAPTER: None}[resend]
    events = events or []
    if events and run_id is None:
        raise ValueError("effect_dispatch: events need the run they belong to (run_id)")
    if any(not kind or len(kind) > 64 for kind, _ in events):
        raise ValidationFailed("An event kind is 1 to 64 characters.", code="invalid")
    project_id = project if isinstance(project, int) else project.pk
    now = timezone.now()
    # The transition as one prepared statement (every resume of an approval dispatches: compiling the ORM's
    # UPDATE each time was a tenth of the resume's CPU); the same sources, conditions and values as below.
    dispatched = fetch_instance(ExternalEffect, _DISPATCH_SQL, {
        "id": effect_id, "pid": project_id, "now": now,
        "to": EffectStatus.DISPATCHED, "sources": sorted(EFFECT_MACHINE.sources_of(EffectStatus.DISPATCHED)),
        "resend": resend, "intended": EffectStatus.INTENDED, "adapter": Resend.ADAPTER, "person": Resend.PERSON,
        "rid": run_id, "n": len(events), "events": events_json(events),
    })
    if dispatched is not None:
        return dispatched
    # Refused: the table's own path says why (missing, illegal from its state, or the resend not allowed) and
    # writes no event; a dispatch it lets through (the effect changed in between) has them appended after it.
    effect = cas_transition_row(
        ExternalEffect.objects.filter(project=project), pk=effect_id, machine=EFFECT_MACHINE,
        to=EffectStatus.DISPATCHED, expected_version=None, extra_filter=allowed,
        updates={"attempts": F("attempts") + 1, "dispatched_at": now, "retry_authorized": False},
    )
    if events and run_id is not None:
        run_events_append(project=project_id, run_id=run_id, events=events)
    return effect


_DISPATCH_SQL = """
WITH w AS (
UPDATE runs_app_externaleffect
   SET status = %(to)s, version = version + 1, attempts = attempts + 1, dispatched_at = %(now)s,
       retry_authorized = false, updated_at = %(now)s
 WHERE id = %(id)s AND project_id = %(pid)s AND status = ANY(%(sources)s)
   AND (%(resend)s::text = %(adapter)s::text OR status = %(intended)s
        OR (%(resend)s::text = %(person)s::text AND retry_authorized))
""" + returning(ExternalEffect) + """
), bumped AS (
    UPDATE runs_app_run SET last_event_seq = last_event_seq + %(n)s
     WHERE id = %(rid)s AND project_id = %(pid)s AND %(n)s > 0 AND EXISTS (SELECT 1 FROM w)
 RETURNING id, last_event_seq - %(n)s AS base
), ev AS (
    INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
    SELECT bumped.id, bumped.base + e.ord, e.ev->>0, e.ev->1, now()
      FROM bumped, jsonb_array_elements(%(events)s::jsonb) WITH ORDINALITY AS e(ev, ord)
)
SELECT * FROM w
"""  # noqa: S608 - the RETURNING list is the model's columns (harness.db.returning); every value is bound


def effect_mark_unknown(*, project: Project | int, effect_id: int) -> ExternalEffect:
    return cas_transition_row(ExternalEffect.objects.filter(project=project), pk=effect_id, machine=EFFECT_MACHINE,
                              to=EffectStatus.UNKNOWN, expected_version=None)


def effect_refuse(*, project: Project | int, effect_id: int, answer: Any, category: str) -> ExternalEffect:
    """The tool definitely said no (an HTTP 4xx): the dispatched effect ends `refused` with its answer,
    logged on its run. Nothing happened, so nothing is ever re-sent under this key."""
    if category not in FailureCategory.values:
        raise ValidationFailed(f"category is one of {', '.join(FailureCategory.values)}.", code="invalid")
    effect = cas_transition_row(
        ExternalEffect.objects.filter(project=project), pk=effect_id, machine=EFFECT_MACHINE,
        to=EffectStatus.REFUSED, expected_version=None, updates={"answer": answer, "failure_category": category},
    )
    if effect.run_id:
        run_event_append(project=effect.project_id, run_id=effect.run_id, kind="effect.refused",
                         data={"key": effect.idempotency_key, "answer": answer, "category": category})
    return effect


_NOT_A_REVIEWER = "Only reviewers of the effect's project decide an effect whose outcome is unknown."


def effect_resolve(
    *,
    project: Project | int | None = None,
    project_ids: Sequence[int] | None = None,
    effect_id: int,
    actor: Actor,
    decision: str,
    reason: str = "",
    evidence: str = "",
    result: Any = None,
    expected_version: int | None = None,
) -> ExternalEffect:
    """A person's decision on an effect whose outcome is unknown: bound, audited, and its run resumed.

    1. Only a reviewer of the effect's project decides, not while it is frozen (harness.tenancy.decision_scope,
       as for an approval); the effect must be `unknown`.
    2. `mark_delivered` needs the evidence (what shows it happened) and the result: unknown -> delivered,
       hashed as any delivery. `retry` allows one more dispatch under the same key (the worker makes it,
       committed before the call, `effect_dispatch(resend=PERSON)`). `abandon` needs a reason: unknown ->
       abandoned, and the run is told as it is told of a rejection.
    3. One conditional write from `unknown` (at `expected_version` when given) records the decision on the
       effect (`resolution`: who, when, why, the evidence, the attempts it saw); the audit entry and the run's
       event go in the same transaction, and the run's resume is queued after commit.
    """
    user, visible = decision_scope(
        ExternalEffect.objects.all(), actor_user=actor.user, role=Role.REVIEWER, project=project,
        project_ids=project_ids,
        missing=f"Effect {effect_id} does not exist.", refused=_NOT_A_REVIEWER, code="not_a_reviewer")
    effects = visible.filter(acting_filter(user, Role.REVIEWER))
    reason, evidence = reason.strip(), evidence.strip()
    if decision not in EffectDecision.values:
        raise ValidationFailed(f"decision is one of {', '.join(EffectDecision.values)}.", code="invalid")
    if decision == EffectDecision.MARK_DELIVERED and (not evidence or result is None):
        raise ValidationFailed("Marking an effect delivered needs the evidence and the result.",
                               code="evidence_required")
    if decision == EffectDecision.ABANDON and not reason:
        raise ValidationFailed("Abandoning an effect needs a reason.", code="reason_required")
    now = timezone.now()
    resolution: dict[str, Any] = {"decision": decision, "by": user.get_username(), "at": now.isoformat(),
                                  "reason": reason, "evidence": evidence}
    unknown = Q(status=EffectStatus.UNKNOWN)
    with transaction.atomic():
        if decision == EffectDecision.RETRY:
            try:
                effect = _effect_retry_authorize(effects, effect_id, resolution, expected_version)
            except NotFoundError as missing:
                raise _scope_refusal(visible, effect_id, user) or missing from None
        else:
            updates: dict[str, Any] = {"resolution": resolution}
            to = EffectStatus.ABANDONED
            if decision == EffectDecision.MARK_DELIVERED:
                to = EffectStatus.DELIVERED
                resolution["result_hash"] = digest(result)
                updates.update(result=result, result_hash=resolution["result_hash"], delivered_at=now)
            try:
                effect = cas_transition_row(effects, pk=effect_id, machine=EFFECT_MACHINE, to=to,
                                            expected_version=expected_version, extra_filter=unknown, updates=updates)
            except NotFoundError as missing:
                raise _scope_refusal(visible, effect_id, user) or missing from None
            except ConflictError as exc:
                if exc.code not in ("guard_failed", "illegal_transition"):
                    raise
                raise ConflictError(
                    f"The effect is {exc.current_status}: only an unknown outcome is decided.",
                    code="effect_not_unknown", current_status=exc.current_status,
                    current_version=exc.current_version) from None
        audit_record(project=effect.project_id, actor=actor, action=f"effect.{decision}", target=effect, data={
            "key": effect.idempotency_key, "tool": effect.tool, "arguments_digest": effect.arguments_digest,
            "attempts": effect.attempts, "reason": reason, "evidence": evidence,
            "result_hash": resolution.get("result_hash", ""),
        })
        if effect.run_id:
            run_event_append(project=effect.project_id, run_id=effect.run_id, kind="effect.resolved",
                             data={"effect": effect.pk, "key": effect.idempotency_key, "decision": decision,
                                   "by": user.get_username()})
            run_id = effect.run_id
            transaction.on_commit(lambda: resume_requested.send(sender=Run, run_id=run_id))
        return effect


def _scope_refusal(visible: QuerySet[ExternalEffect], effect_id: int, user: User) -> DomainError | None:
    """Why the decision's write missed an effect the user can see: its project is frozen, or not one the user
    reviews in (harness.tenancy.acting_filter); None when the effect is not visible at all."""
    project_id = visible.filter(pk=effect_id).values_list("project_id", flat=True).first()
    if project_id is None:
        return None
    return decision_refusal(user, Role.REVIEWER, project_id, refused=_NOT_A_REVIEWER, code="not_a_reviewer")


def _effect_retry_authorize(
    effects: Any, effect_id: int, resolution: dict[str, Any], expected_version: int | None
) -> ExternalEffect:
    """Allow one more dispatch of an unknown effect (no status change: the dispatch is the transition)."""
    matching = effects.filter(pk=effect_id, status=EffectStatus.UNKNOWN)
    if expected_version is not None:
        matching = matching.filter(version=expected_version)
    updated = matching.update(retry_authorized=True, resolution=resolution, version=F("version") + 1,
                              updated_at=timezone.now())
    current = effects.filter(pk=effect_id).first()
    if current is None:
        raise NotFoundError(f"Effect {effect_id} does not exist.")
    if not updated:
        raise ConflictError(
            f"The effect is {current.status} at version {current.version}: only an unknown outcome is decided.",
            code="effect_not_unknown", current_status=current.status, current_version=current.version)
    effect: ExternalEffect = current
    return effect


@dataclass(frozen=True)
class Delivery:
    """What a delivery came to: `consumed` (first time), `already_consumed`, or `conflict`."""

    outcome: str
    effect: ExternalEffect
    events_written: bool = False  # the caller's `events` went in with the effect's own (effect_deliver)

    @property
    def receipt(self) -> str:
        return self.effect.receipt


def effect_deliver(
    *,
    project: Project | int,
    idempotency_key: str,
    result: Any,
    result_hash: str | None = None,
    consume: bool = True,
    run_id: int | None = None,
    events: list[tuple[str, dict[str, Any]]] | None = None,
    settles_unknown: bool = False,
) -> Delivery:
    """Deliver an effect's result, validate it, and (by default) consume it once.

    1. The server hashes the canonical result; a client-sent hash must match it.
    2. First delivery: intended/dispatched -> delivered, then -> consumed with a receipt. An `unknown` effect
       (its outcome could not be proven) is settled only by the resume worker with the tool's own answer (its
       result or its adapter's lookup by key: `settles_unknown`) or by a person (`effect_resolve`); anyone else
       (an agent's delivery) is refused 403 `not_a_person` and nothing changes (issue 30).
    3. The same hash again: `already_consumed`, with the original receipt; nothing changes.
    4. A different hash for the same key is a hard stop: the effect becomes `conflict`, its run
       `blocked`, and both stay that way after this returns (committed, not rolled back).

    `events` (for run `run_id`, the effect's own) are appended after the effect's `effect.<status>` event in the
    same statement, only by the usual delivery or consumption (`_effect_deliver_fast`); `Delivery.events_written`
    says whether they were: when not, they are the caller's to write (the resume's trace, worker.steps.bind_result).
    """
    if events and run_id is None:
        raise ValueError("effect_deliver: events need the run they belong to (run_id)")
    if any(not kind or len(kind) > 64 for kind, _ in events or ()):
        raise ValidationFailed("An event kind is 1 to 64 characters.", code="invalid")
    project_id = project if isinstance(project, int) else project.pk
    computed = digest(result)
    if result_hash is not None and result_hash != computed:
        raise ValidationFailed(
            "result_hash is not the SHA-256 of the result's canonical JSON.", code="result_hash_mismatch",
            expected_hash=computed,
        )
    fast = _effect_deliver_fast(project_id, idempotency_key, result, computed, consume=consume, run_id=run_id,
                                events=events or [], settles_unknown=settles_unknown)
    if fast is not None:
        return fast
    # Only the other cases build a queryset (building it on the fast path was a twentieth of a resume's CPU).
    effects = ExternalEffect.objects.filter(project_id=project_id)
    with transaction.atomic():
        effect = effects.select_for_update().filter(idempotency_key=idempotency_key).first()
        if effect is None:
            raise NotFoundError(f"No effect has the idempotency key {idempotency_key!r}.")
        if effect.status == EffectStatus.UNKNOWN and not settles_unknown:
            raise Forbidden(
                f"Effect {effect.pk}'s outcome could not be proven: a reviewer decides it on its page "
                f"(/effects/{effect.pk}/: mark delivered with the evidence, retry, or abandon), not a delivery.",
                code="not_a_person", effect=effect.pk, effect_status=effect.status, run=effect.run_id,
            )
        if effect.result_hash and effect.result_hash != computed:
            return _effect_conflict(project_id, effect, computed)
        if effect.status == EffectStatus.CONFLICT:
            return Delivery("conflict", effect)
        if effect.status == EffectStatus.CONSUMED or (effect.status == EffectStatus.DELIVERED and not consume):
            outcome = "already_consumed" if effect.status == EffectStatus.CONSUMED else "already_delivered"
            return Delivery(outcome, effect)
        now = timezone.now()
        if effect.status != EffectStatus.DELIVERED:
            if effect.status == EffectStatus.INTENDED:
                effect = cas_transition_row(
                    effects, pk=effect.pk, machine=EFFECT_MACHINE, to=EffectStatus.DISPATCHED,
                    expected_version=effect.version, updates={"dispatched_at": now, "attempts": F("attempts") + 1},
                )
            effect = cas_transition_row(
                effects, pk=effect.pk, machine=EFFECT_MACHINE, to=EffectStatus.DELIVERED,
                expected_version=effect.version,
                updates={"result": result, "result_hash": computed, "delivered_at": now},
            )
        if consume:
            effect = cas_transition_row(
                effects, pk=effect.pk, machine=EFFECT_MACHINE, to=EffectStatus.CONSUMED,
                expected_version=effect.version, updates={"receipt": uuid.uuid4().hex, "consumed_at": now},
            )
        if effect.run_id:
            run_event_append(
                project=project_id, run_id=effect.run_id, kind=f"effect.{effect.status}",
                data={"key": idempotency_key, "result_hash": computed, "receipt": effect.receipt},
            )
        return Delivery("consumed" if consume else "delivered", effect)


# The effect's own event (`effect.<status>`, on its run) goes in the same statement as the write: the run's
# next seq taken and the event inserted by the CTE's other members, as `run_event_append` does on its own.
# The caller's `events` (`%(n)s` of them) follow it when the effect's run is `%(rid)s`, with the seqs after it.
_EFFECT_EVENT_SQL = """
), bumped AS (
    UPDATE runs_app_run
       SET last_event_seq = last_event_seq + 1 + CASE WHEN id = %(rid)s::bigint THEN %(n)s::int ELSE 0 END
     WHERE id = (SELECT run_id FROM w) AND project_id = %(pid)s
 RETURNING id, last_event_seq, CASE WHEN id = %(rid)s::bigint THEN %(n)s::int ELSE 0 END AS extra
), ev AS (
    INSERT INTO runs_app_runevent (run_id, seq, kind, data, created_at)
    SELECT bumped.id, bumped.last_event_seq - bumped.extra, 'effect.' || w.status,
           jsonb_build_object('key', %(key)s::text, 'result_hash', %(hash)s::text, 'receipt', w.receipt), now()
      FROM bumped, w
    UNION ALL
    SELECT bumped.id, bumped.last_event_seq - bumped.extra + e.ord, e.ev->>0, e.ev->1, now()
      FROM bumped, jsonb_array_elements(%(events)s::jsonb) WITH ORDINALITY AS e(ev, ord)
     WHERE bumped.extra > 0
)
SELECT * FROM w
"""
_DELIVER_SQL = """
WITH w AS (
UPDATE runs_app_externaleffect
   SET status = %(delivered)s, version = version + 1, result = %(result)s::jsonb, result_hash = %(hash)s::text,
       delivered_at = %(now)s, updated_at = %(now)s
 WHERE project_id = %(pid)s AND idempotency_key = %(key)s::text AND status = ANY(%(sources)s) AND result_hash = ''
""" + returning(ExternalEffect) + _EFFECT_EVENT_SQL
_CONSUME_SQL = """
WITH w AS (
UPDATE runs_app_externaleffect
   SET status = %(consumed)s, version = version + 1, receipt = %(receipt)s, consumed_at = %(now)s,
       updated_at = %(now)s
 WHERE project_id = %(pid)s AND idempotency_key = %(key)s::text AND status = ANY(%(sources)s)
   AND result_hash = %(hash)s::text
""" + returning(ExternalEffect) + _EFFECT_EVENT_SQL


# What a consumption moves from: the table's edges into `consumed` (a delivered effect).
_CONSUMABLE = sorted(EFFECT_MACHINE.sources_of(EffectStatus.CONSUMED))


def _effect_deliver_fast(
    project_id: int, idempotency_key: str, result: Any, computed: str, *, consume: bool, run_id: int | None,
    events: list[tuple[str, dict[str, Any]]], settles_unknown: bool,
) -> Delivery | None:
    """The two usual deliveries as one conditional UPDATE each, with the effect's event, in one statement; or
    None for the rest.

    A dispatched effect (or an unknown one, when `settles_unknown`) delivered without consuming, and a delivered
    effect consumed with the result it holds: the row's status and hash are the guard, as `cas_transition`'s
    sources are.
    Anything else (a first delivery that also consumes, a repeat, a different hash) returns None and
    takes the locked path in `effect_deliver`, which says what it came to.
    """
    now = timezone.now()
    params = {"pid": project_id, "key": idempotency_key, "hash": computed, "now": now,
              "delivered": EffectStatus.DELIVERED, "consumed": EffectStatus.CONSUMED,
              "rid": run_id if events else None, "n": len(events), "events": events_json(events)}
    # The sources are the effect machine's (tests/runs_app/test_fast_sql_differential.py holds both statements to the
    # table's path, state by state).
    if consume:
        sql, params["receipt"] = _CONSUME_SQL, uuid.uuid4().hex
        params["sources"] = _CONSUMABLE
    else:
        sql, params["result"] = _DELIVER_SQL, json.dumps(result)
        unsettled = {EffectStatus.INTENDED} | (set() if settles_unknown else {EffectStatus.UNKNOWN})
        params["sources"] = sorted(EFFECT_MACHINE.sources_of(EffectStatus.DELIVERED) - unsettled)
    # One statement, atomic by itself: a conditional UPDATE that matches nothing changes nothing (no event
    # either), and the fallback says why.
    effect = fetch_instance(ExternalEffect, sql, params)
    if effect is None:
        return None
    return Delivery("consumed" if consume else "delivered", effect,
                    events_written=bool(events) and effect.run_id == run_id)


def _effect_conflict(project_id: int, effect: ExternalEffect, computed: str) -> Delivery:
    effects = ExternalEffect.objects.filter(project_id=project_id)
    if effect.status != EffectStatus.CONFLICT:
        cas_transition(
            effects, pk=effect.pk, machine=EFFECT_MACHINE, to=EffectStatus.CONFLICT,
            expected_version=effect.version, updates={"conflicting_hash": computed},
        )
    if effect.run_id:
        run = Run.objects.filter(pk=effect.run_id).values("status", "version").first()
        if run and RUN_MACHINE.can(run["status"], RunStatus.BLOCKED):
            run_transition(
                project=project_id, run_id=effect.run_id, to=RunStatus.BLOCKED, expected_version=None,
                blocked_step="effect_conflict",
                error={"step": "effect_conflict", "key": effect.idempotency_key,
                       "result_hash": effect.result_hash, "conflicting_hash": computed},
            )
    return Delivery("conflict", effects.get(pk=effect.pk))
