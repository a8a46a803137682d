"""The recovery pass: the database, not the broker, guarantees that no approved run is forgotten.

It runs at worker start and every HARNESS_RECOVERY_INTERVAL_SECONDS (celery beat). A lost message
(kill -9 on the filesystem transport, a broker restart, an enqueue that failed after commit) only
delays a resume until the next pass. Enqueueing a run twice is harmless: the resume takes the lease.
"""

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Now

from harness.actors import Actor, ActorKind
from harness.audit import audit_record
from harness.http.errors import ConflictError, NotFoundError
from harness.imports import imported_ids
from runs_app.fencing import UNFENCED
from runs_app.limits import DEADLINE
from runs_app.models import (
    EffectStatus,
    ExternalEffect,
    FailureCategory,
    Run,
    RunStatus,
)
from runs_app.resume_due import WORKER_OWNER_PREFIX, resume_due
from runs_app.selectors.runs import stale_past_grace
from runs_app.services import approval_expire_due, effect_mark_unknown, handoff_expire_due, run_transition
from runs_app.services.questions import questions_expire_due
from worker.handlers import is_worker_plan

log = logging.getLogger(__name__)

# The states a run goes on from (not created, blocked or finished): the ones a deadline stops.
_GOING = (RunStatus.RUNNING, RunStatus.WAITING_APPROVAL, RunStatus.WAITING_EXTERNAL)


def recovery_candidates() -> list[int]:
    """Run ids that need a resume now, oldest first (runs_app.resume_due: the console's re-queue asks the same)."""
    # A run imported from another instance is read-only (bundles_app): no pass writes to it.
    return resume_due(Run.objects.exclude(pk__in=imported_ids("run")), worker_plan=is_worker_plan)


def effects_reconcile() -> list[int]:
    """Effects left `dispatched` by a worker whose lease is gone become `unknown` (reconciled on resume)."""
    stale = ExternalEffect.objects.filter(status=EffectStatus.DISPATCHED, run__isnull=False).exclude(
        run_id__in=imported_ids("run")).filter(
        Q(run__lease_owner="") | Q(run__lease_expires_at__lte=Now())
    )
    marked: list[int] = []
    for effect_id, project_id in stale.values_list("pk", "project_id"):
        try:
            effect_mark_unknown(project=project_id, effect_id=effect_id)
        except (ConflictError, NotFoundError) as exc:
            # A concurrent resume moved it on (or it is gone): nothing to reconcile.
            log.info("recovery: effect %s left as it is: %s", effect_id, exc)
            continue
        marked.append(effect_id)
    return marked


AGENT_LEASE_EXPIRED = "agent_lease_expired"
# The event and audit action of a run blocked because its agent's lease stayed expired past the grace.
STALE_BLOCKED = "run.stale_blocked"
RECOVERY_ACTOR = Actor(ActorKind.WORKER, "recovery")

# What a block records of the run it blocks, beside its error: (event and audit action, its data), or None.
Record = Callable[[Run, str], tuple[str, dict[str, Any]] | None]


def _block_each(runs: QuerySet[Run], step: str, reason: Callable[[Run], str], category: str,
                record: Record = lambda run, reason: None) -> list[int]:
    """Block each run (a compare-and-set at the version read: a run that moved on meanwhile is left alone),
    its lease released and the reason in its error and its `status.blocked` event; what `record` returns is
    an event before that one and an audit entry, in the same transaction."""
    blocked: list[int] = []
    for run in runs.only("pk", "project_id", "version", "lease_owner", "lease_expires_at", "deadline"):
        why = reason(run)
        error = {"step": step, "reason": why, "category": category}
        recorded = record(run, why)
        try:
            with transaction.atomic():
                # The recovery pass ends the lease (UNFENCED) at the version it read.
                moved = run_transition(
                    project=run.project_id, run_id=run.pk, to=RunStatus.BLOCKED, expected_version=run.version,
                    lease_owner=UNFENCED, blocked_step=step, error=error, failure_category=category,
                    actor=RECOVERY_ACTOR, updates={"lease_owner": "", "lease_expires_at": None},
                    events=[recorded] if recorded else None)
                if recorded:
                    action, data = recorded
                    audit_record(project=run.project_id, actor=RECOVERY_ACTOR, action=action, target=moved,
                                 data={**data, "from": RunStatus.RUNNING, "to": RunStatus.BLOCKED})
        except (ConflictError, NotFoundError) as exc:
            log.info("recovery: run %s left as it is: %s", run.pk, exc)
            continue
        blocked.append(run.pk)
    return blocked


def runs_past_deadline_block() -> list[int]:
    """Runs past their deadline, not finished and not blocked, are blocked at `deadline` (runs_app.limits):
    a waiting run never makes its next call, and an agent's next write is refused. A run a live worker
    holds is left to it: the worker checks the deadline before each call (worker.limits)."""
    due = Run.objects.filter(status__in=_GOING, deadline__lte=Now()).exclude(
        lease_owner__startswith=WORKER_OWNER_PREFIX, lease_expires_at__gt=Now()).exclude(pk__in=imported_ids("run"))

    def reason(run: Run) -> str:
        return f"the run's deadline {run.deadline.isoformat() if run.deadline else ''} has passed (recovery pass)"

    return _block_each(due, DEADLINE, reason, FailureCategory.PERMISSION)


def agent_leases_expired_block() -> list[int]:
    """A `running` run whose agent's lease expired is noticed, not left `running` forever (seed 001): shown as
    stale meanwhile (runs_app.selectors.runs.stale_runs), and once stale past its project's grace it is blocked
    at `agent_lease_expired`, with a `run.stale_blocked` event and audit entry naming the owner, when its lease
    ran out and the grace, for a person to decide: an operator's retry hands it back to its agent, or they fail
    or cancel it. The session can go on in a new run (which inherits none of this run's node)."""
    def reason(run: Run) -> str:
        expired = run.lease_expires_at.isoformat() if run.lease_expires_at else "?"
        return (f"the lease of {run.lease_owner} expired at {expired} and was not renewed within the project's "
                f"grace of {run.grace_seconds} s")  # type: ignore[attr-defined]  # stale_past_grace's annotation

    def record(run: Run, why: str) -> tuple[str, dict[str, Any]]:
        return STALE_BLOCKED, {
            "reason": why, "lease_owner": run.lease_owner, "grace_seconds": run.grace_seconds,  # type: ignore[attr-defined]
            "lease_expired_at": run.lease_expires_at.isoformat() if run.lease_expires_at else None,
            "version": run.version}

    return _block_each(stale_past_grace(Run.objects.exclude(pk__in=imported_ids("run"))), AGENT_LEASE_EXPIRED, reason,
                       FailureCategory.TRANSIENT, record)


def recovery_pass(*, enqueue: Callable[[int], None]) -> dict[str, list[int]]:
    """Expire due approvals and handoffs, mark orphaned effects unknown, block runs past their deadline and runs
    whose agent's lease expired, and `enqueue` every run that needs a resume."""
    expired = approval_expire_due()
    expired_questions = questions_expire_due()
    expired_handoffs = handoff_expire_due()
    unknown = effects_reconcile()
    past_deadline = runs_past_deadline_block()
    lost_agents = agent_leases_expired_block()
    runs = recovery_candidates()
    for run_id in runs:
        enqueue(run_id)
    if expired_questions:
        log.info("recovery: expired questions %s", expired_questions)
    if expired or expired_handoffs or unknown or runs or past_deadline or lost_agents:
        log.info("recovery: expired approvals %s, expired handoffs %s, unknown effects %s, runs past deadline %s, "
                 "runs whose agent's lease expired %s, enqueued runs %s", expired, expired_handoffs, unknown,
                 past_deadline, lost_agents, runs)
    return {"expired_approvals": expired, "expired_questions": expired_questions,
            "expired_handoffs": expired_handoffs, "unknown_effects": unknown,
            "deadline_blocked": past_deadline, "agent_lease_expired": lost_agents, "enqueued_runs": runs}
