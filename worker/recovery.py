"""The recovery pass: the database, not the broker, guarantees that no approved run is forgotten.

It runs at worker start and every HARNESS_RECOVERY_INTERVAL_SECONDS (celery beat). A lost message
(kill -9 on the filesystem transport, a broker restart, an enqueue that failed after commit) only
delays a resume until the next pass. Enqueueing a run twice is harmless: the resume takes the lease.
"""

import logging
from collections.abc import Callable

from django.db.models import Q
from django.db.models.functions import Now

from harness.errors import ConflictError, NotFoundError
from runs_app.models import ApprovalStatus, EffectStatus, ExternalEffect, HandoffStatus, Run, RunStatus
from runs_app.services import approval_expire_due, effect_mark_unknown, handoff_expire_due
from worker.handlers import is_worker_plan
from worker.lease import WORKER_OWNER_PREFIX

log = logging.getLogger(__name__)

DECIDED = (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED, ApprovalStatus.EXPIRED, ApprovalStatus.CANCELLED)


def _lease_free() -> Q:
    # Expired by the database's clock (STATEMENT_TIMESTAMP()), as the claim decides it: a recovery pass on a
    # host whose clock runs fast must not take a live lease for expired (issue 19, defect 4).
    return Q(lease_owner="") | Q(lease_expires_at__lte=Now())


def recovery_candidates() -> list[int]:
    """Run ids that need a resume now, oldest first.

    1. Waiting for an approval that is decided (or expired), with no live lease.
    2. Driven by a worker whose lease expired (it died mid-plan or mid-call).
    3. Running, unleased, on a task plan the worker drives.
    4. Waiting on a handoff whose result has returned, with no live lease.
    """
    decided = Run.objects.filter(
        _lease_free(), status=RunStatus.WAITING_APPROVAL, pending_approval__status__in=DECIDED
    )
    orphaned = Run.objects.filter(
        status__in=(RunStatus.RUNNING, RunStatus.WAITING_APPROVAL),
        lease_owner__startswith=WORKER_OWNER_PREFIX, lease_expires_at__lte=Now(),
    )
    # A worker plan that nobody drives (a person moved it from blocked back to running, say).
    undriven = Run.objects.filter(_lease_free(), status=RunStatus.RUNNING, task__isnull=False).exclude(
        task__plan=[]
    ).select_related("task")
    returned = Run.objects.filter(_lease_free(), status=RunStatus.WAITING_EXTERNAL,
                                  handoffs__status=HandoffStatus.RETURNED)
    ids = set(decided.values_list("pk", flat=True)) | set(orphaned.values_list("pk", flat=True))
    ids |= set(returned.values_list("pk", flat=True))
    ids |= {run.pk for run in undriven if is_worker_plan(run.task)}
    return sorted(ids)


def effects_reconcile() -> list[int]:
    """Effects left `dispatched` by a worker whose lease is gone become `unknown` (reconciled on resume)."""
    stale = ExternalEffect.objects.filter(status=EffectStatus.DISPATCHED, run__isnull=False).filter(
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


def recovery_pass(*, enqueue: Callable[[int], None]) -> dict[str, list[int]]:
    """Expire due approvals and handoffs, mark orphaned effects unknown, and `enqueue` every run that needs a
    resume."""
    expired = approval_expire_due()
    expired_handoffs = handoff_expire_due()
    unknown = effects_reconcile()
    runs = recovery_candidates()
    for run_id in runs:
        enqueue(run_id)
    if expired or expired_handoffs or unknown or runs:
        log.info("recovery: expired approvals %s, expired handoffs %s, unknown effects %s, enqueued runs %s",
                 expired, expired_handoffs, unknown, runs)
    return {"expired_approvals": expired, "expired_handoffs": expired_handoffs, "unknown_effects": unknown,
            "enqueued_runs": runs}
