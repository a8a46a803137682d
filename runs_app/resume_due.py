"""When a run's resume is due: the recovery pass's condition, declared once for the pass and the console.

The recovery pass (worker.recovery) queues every run this selects; the console's "re-queue the resume"
(runs_app.services.run_actions) is offered for a run it selects and refused for any other, so an operator
can do by hand exactly what the next pass would do, and nothing it would not.

runs_app never imports the worker: whether a task's plan is one the worker drives (every remaining node has a
handler) is the caller's `worker_plan` (worker.handlers.is_worker_plan for the pass).
"""

from collections.abc import Callable, Sequence

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Now

from runs_app.models import ApprovalStatus, EffectStatus, ExternalEffect, HandoffStatus, Run, RunStatus, Task

# The prefix of every resume worker's lease owner (worker.lease builds it; an agent's lease never has it).
WORKER_OWNER_PREFIX = "worker:"
UNKNOWN_EFFECT = "unknown_effect"
# The key, in a blocked run's `error`, of an operator's retry of its approval's resume
# (runs_app.services.run_actions): the next resume re-validates it from the start; a new block overwrites it.
RETRY_MARK = "retry"
DECIDED = (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED, ApprovalStatus.EXPIRED, ApprovalStatus.CANCELLED)


def lease_free() -> Q:
    # Expired by the database's clock (STATEMENT_TIMESTAMP()), as the claim decides it: a recovery pass on a
    # host whose clock runs fast must not take a live lease for expired (issue 19, defect 4).
    return Q(lease_owner="") | Q(lease_expires_at__lte=Now())


def decided_effects() -> Q:
    """The effects a person has decided (their run, blocked at `unknown_effect`, can be resumed)."""
    return Q(status__in=(EffectStatus.DELIVERED, EffectStatus.ABANDONED)) | Q(
        status=EffectStatus.UNKNOWN, retry_authorized=True)


def retry_marked() -> Q:
    return Q(error__has_key=RETRY_MARK)


def remaining_nodes(plan: Sequence[str] | None, completed: Sequence[str] | None) -> list[str]:
    done = set(completed or [])
    return [node for node in plan or [] if node not in done]


def node_configured(node: str) -> bool:
    """Whether settings name a handler for the node (the worker imports it, and refuses to start when it cannot)."""
    return bool(settings.HARNESS_NODE_HANDLERS.get(node))


def plan_handled(task: Task | None, *, gate: str = "", handled: Callable[[str], bool] = node_configured) -> bool:
    """A task the worker drives: a plan whose remaining nodes (but the approval gate) all have handlers."""
    if task is None or not task.plan:
        return False
    return all(handled(node) for node in remaining_nodes(task.plan, task.completed_nodes) if node != gate)


def resume_due(runs: QuerySet[Run], *, worker_plan: Callable[[Task | None], bool] = plan_handled) -> list[int]:
    """The ids of `runs` that need a resume now, oldest first.

    1. Waiting for an approval that is decided (or expired), with no live lease.
    2. Driven by a worker whose lease expired (it died mid-plan or mid-call).
    3. Running, unleased, on a task plan the worker drives.
    4. Waiting on a handoff whose result has returned, with no live lease.
    5. Blocked at `unknown_effect`, unleased, once a person decided the effect (worker.steps.load).
    6. Blocked, unleased, with an operator's retry of its approval's resume not yet taken (RETRY_MARK).
    """
    decided = runs.filter(lease_free(), status=RunStatus.WAITING_APPROVAL, pending_approval__status__in=DECIDED)
    orphaned = runs.filter(
        status__in=(RunStatus.RUNNING, RunStatus.WAITING_APPROVAL),
        lease_owner__startswith=WORKER_OWNER_PREFIX, lease_expires_at__lte=Now(),
    )
    # A worker plan that nobody drives (a person moved it from blocked back to running, say).
    undriven = runs.filter(lease_free(), status=RunStatus.RUNNING, task__isnull=False).exclude(
        task__plan=[]
    ).select_related("task")
    returned = runs.filter(lease_free(), status=RunStatus.WAITING_EXTERNAL, handoffs__status=HandoffStatus.RETURNED)
    effect_decided = runs.filter(lease_free(), status=RunStatus.BLOCKED, blocked_step=UNKNOWN_EFFECT).filter(
        Exists(ExternalEffect.objects.filter(decided_effects(), run_id=OuterRef("pk"),
                                             approval_id=OuterRef("pending_approval_id"))))
    retried = runs.filter(retry_marked(), lease_free(), status=RunStatus.BLOCKED)
    ids = set(decided.values_list("pk", flat=True)) | set(orphaned.values_list("pk", flat=True))
    ids |= set(retried.values_list("pk", flat=True))
    ids |= set(returned.values_list("pk", flat=True)) | set(effect_decided.values_list("pk", flat=True))
    ids |= {run.pk for run in undriven if worker_plan(run.task)}
    return sorted(ids)
