"""What an operator may do to a run (cancel, retry, route to repair, fail, re-queue its resume), previewed by
the code that does it.

`run_action_plan` says what an action would do to a run as it is now: the move, where the worker resumes,
which of the run's effects would or would not be sent again, and why it is refused when it is. `run_act`
locks the run, recomputes the same plan from the row it locked, and carries it out, so a preview and its
action cannot disagree; a run that changed since the preview (another version) is refused, not acted on.
The console and the admin both call these; every action is audited and logged on the run.
"""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models import F

from harness.actors import Actor
from harness.audit import audit_record
from harness.http.errors import ConflictError, Forbidden, NotFoundError, ValidationFailed
from harness.models import Project
from harness.tenancy import Role, user_can_see_project, user_has_role
from harness.transitions import cas_transition_row
from runs_app.machines import APPROVAL_MACHINE, RUN_MACHINE
from runs_app.models import ApprovalRequest, ApprovalStatus, EffectStatus, ExternalEffect, Run, RunStatus, Task
from runs_app.resume_due import RETRY_MARK, UNKNOWN_EFFECT, node_configured, plan_handled, remaining_nodes, resume_due
from runs_app.services.runs import run_event_append, run_transition
from runs_app.services.tasks import task_save
from runs_app.signals import resume_requested

# A gate is routed to its repair at most this many times, by a rejection (worker.repair) or by a person.
MAX_REPAIRS = 3
REASON_MAX = 2000


class RunAction(models.TextChoices):
    CANCEL = "cancel"
    RETRY = "retry"
    REPAIR = "repair"
    FAIL = "fail"
    REQUEUE = "requeue"
    START = "start"  # a run not started yet (a console fork): to the worker when it drives the plan, else its agent


@dataclass(frozen=True)
class ActionGuard:
    """Which runs an action may act on, by status and block, and what the plan says to the others."""

    to: str  # the run's status after it ("" when the action moves no status: a re-queue)
    sources: frozenset[str]  # the statuses it acts from
    refusal: str  # the plan's refusal for a run in another status, formatted with its `status`
    # Blocks a person decides on another page, where the action is refused, and why.
    refused_blocks: tuple[tuple[str, str], ...] = ()

    def refusal_for(self, run: Run) -> str:
        """Why the action cannot act on `run` as read ("" when the guard admits it)."""
        if run.status not in self.sources:
            return self.refusal.format(status=run.status)
        return next((why for block, why in self.refused_blocks if run.blocked_step == block), "")


_LIVE = RUN_MACHINE.states - RUN_MACHINE.terminal
_BLOCKED = frozenset({RunStatus.BLOCKED})
_ONLY_BLOCKED = "only a blocked run can be {done} this way; this one is {{status}}"
_DECIDE_THE_EFFECT = ((UNKNOWN_EFFECT, "the run is blocked on an effect whose outcome is unknown: decide the effect "
                                       "on its page, and the run's resume is queued by that decision"),)

# The run-action guards, declared once, as data: the plan (run_action_plan, so the console, the admin and run_act)
# refuses what they refuse before it looks further. A re-queue acts from any status its resume is due in
# (runs_app.resume_due, the recovery pass's own condition), checked by the plan.
RUN_ACTION_GUARDS: dict[str, ActionGuard] = {
    RunAction.CANCEL: ActionGuard(RunStatus.CANCELLED, _LIVE, "the run is {status} already"),
    RunAction.RETRY: ActionGuard(RunStatus.RUNNING, _BLOCKED, _ONLY_BLOCKED.format(done="retried"),
                                 _DECIDE_THE_EFFECT),
    RunAction.REPAIR: ActionGuard(RunStatus.RUNNING, _BLOCKED, _ONLY_BLOCKED.format(done="routed to a repair node"),
                                  _DECIDE_THE_EFFECT),
    RunAction.FAIL: ActionGuard(RunStatus.FAILED, _BLOCKED, _ONLY_BLOCKED.format(done="failed")),
    RunAction.REQUEUE: ActionGuard("", RUN_MACHINE.states, ""),
    RunAction.START: ActionGuard(RunStatus.RUNNING, frozenset({RunStatus.CREATED}),
                                 "only a run not started yet (created) can be started; this one is {status}"),
}


@dataclass(frozen=True)
class EffectOutlook:
    """One of the run's external effects, and whether the action would lead to it being sent (again)."""

    effect_id: int
    key: str
    tool: str
    status: str
    resent: bool
    why: str


@dataclass(frozen=True)
class RunPlan:
    """What an action would do to the run at `version`; `refusal` says why it cannot, when it cannot."""

    action: str
    run_id: int
    version: int
    status: str
    to: str  # the run's status after it ("" when the action moves no status: a re-queue)
    refusal: str = ""
    resumes_from: str = ""  # where the worker resumes ("" when no resume is queued)
    hands_back: bool = False  # the run goes back to its agent, which continues it from its cursor
    notifies_agent: bool = False  # the agent hears of it by the run.status_changed webhook
    in_place: bool = False  # the run stays blocked until the queued resume has re-validated it
    repair_node: str = ""
    cancels_approval: int | None = None  # the run's pending approval, cancelled with the run's end
    releases_lease: str = ""  # who holds the lease a run's end takes away
    effects: tuple[EffectOutlook, ...] = ()

    @property
    def allowed(self) -> bool:
        return not self.refusal

    @property
    def enqueues(self) -> bool:
        return bool(self.resumes_from)

    def summary(self) -> list[str]:
        """The plan in sentences, as the preview shows it and the audit entry records it."""
        if self.refusal:
            return [f"Refused: {self.refusal}"]
        if self.in_place:
            lines = [f"The run stays {self.status} while the queued resume checks everything again, from the load: "
                     f"when every check passes it goes {self.status} -> {RunStatus.RUNNING}, otherwise it stays "
                     f"{self.status} at the step that fails."]
        else:
            lines = [f"The run goes {self.status} -> {self.to}." if self.to else f"The run stays {self.status}."]
        if self.repair_node:
            lines.append(f"The repair node {self.repair_node} goes into the task's plan before the blocked step.")
        if self.resumes_from:
            lines.append(f"A resume is queued: the worker resumes from {self.resumes_from}.")
        elif self.hands_back:
            lines.append("No resume is queued: the run's agent continues it from its cursor.")
            if self.notifies_agent:
                lines.append("Its agent is told by the run.status_changed webhook (to every subscription of the "
                             "project that asks for it; see the webhooks page); an agent with none must be "
                             "told another way.")
        else:
            lines.append("No resume is queued: nothing runs after this.")
        if self.releases_lease:
            lines.append(f"Its lease, held by {self.releases_lease}, is released: the holder's next write is refused.")
        if self.cancels_approval is not None:
            lines.append(f"Its pending approval #{self.cancels_approval} goes pending -> cancelled.")
        lines.extend(f"Effect {e.key} ({e.tool}, {e.status}) {'will' if e.resent else 'will not'} be sent: {e.why}"
                     for e in self.effects)
        return lines


def run_action_plan(*, run: Run, action: str) -> RunPlan:
    """What `action` would do to `run` as read (its status, version, task, checkpoint, effects)."""
    if action not in RunAction.values:
        raise ValidationFailed(f"action is one of {', '.join(RunAction.values)}.", code="invalid")
    base: dict[str, Any] = {"action": action, "run_id": run.pk, "version": run.version, "status": run.status}
    guard = RUN_ACTION_GUARDS[action]
    refusal = guard.refusal_for(run)
    if refusal:
        return RunPlan(**base, to=guard.to, refusal=refusal)
    if action == RunAction.REQUEUE:
        due = bool(resume_due(Run.objects.filter(pk=run.pk)))
        if not due:
            return RunPlan(**base, to="", refusal="the run's resume is not due: the recovery pass would not queue "
                                                  "it (nothing decided or returned to resume, or a live lease)")
        return RunPlan(**base, to="", resumes_from=_resume_point(run), effects=_effects(run, resuming=True))
    if action == RunAction.START:
        return _start(run, base)
    if action in (RunAction.CANCEL, RunAction.FAIL):
        return _ending(run, base, guard.to)
    if action == RunAction.RETRY:
        return _retry(run, base)
    return _repair(run, base)


def _ending(run: Run, base: dict[str, Any], to: str) -> RunPlan:
    approval = run.pending_approval
    pending = approval.pk if approval is not None and approval.status == ApprovalStatus.PENDING else None
    return RunPlan(**base, to=to, cancels_approval=pending, releases_lease=run.lease_owner,
                   effects=_effects(run, resuming=False))


def _retry(run: Run, base: dict[str, Any]) -> RunPlan:
    """Three kinds of blocked run, three retries:
    - a plan the worker drives (its remaining nodes all have handlers): blocked -> running, and the worker
      continues from the node it blocked at;
    - one blocked while resuming its decided approval (its gate still ahead): it stays blocked, marked
      (RETRY_MARK), and the worker's resume runs again from the load, every check, then the approved action;
    - anything else is its agent's: blocked -> running, handed back, nothing queued.
    """
    if plan_handled(run.task):
        return RunPlan(**base, to=RunStatus.RUNNING, resumes_from=_resume_point(run),
                       effects=_effects(run, resuming=True))
    approval = run.pending_approval
    if approval is not None and approval.status in (ApprovalStatus.APPROVED, ApprovalStatus.REJECTED):
        return RunPlan(**base, to="", in_place=True, effects=_effects(run, resuming=True),
                       resumes_from=f"the resume of approval #{approval.pk} ({approval.status}), every check again "
                                    f"from the load (it blocked at {run.blocked_step})")
    return RunPlan(**base, to=RunStatus.RUNNING, hands_back=True, effects=_effects(run, resuming=False))


def started_by_worker(run: Run) -> bool:
    """Whether the worker continues `run` once started: its task's remaining nodes all have handlers."""
    return plan_handled(run.task)


def _start(run: Run, base: dict[str, Any]) -> RunPlan:
    """A created run (a fork made in the console) goes created -> running, and one of two things continues it:
    - a worker plan (its task's remaining nodes all have handlers): its resume is queued, the worker drives the
      nodes from the fork's checkpoint;
    - anything else is its agent's: handed back; the move itself is the `run.status_changed` webhook the
      project's agents subscribe to (notify_app records it in the same transaction), which tells the agent."""
    if started_by_worker(run):
        return RunPlan(**base, to=RunStatus.RUNNING, resumes_from=_resume_point(run),
                       effects=_effects(run, resuming=True))
    return RunPlan(**base, to=RunStatus.RUNNING, hands_back=True, notifies_agent=True,
                   effects=_effects(run, resuming=False))


def _repair(run: Run, base: dict[str, Any]) -> RunPlan:
    node = declared_repair(run)
    refusal = ""
    if not node:
        refusal = "the run's plan declares no repair node (the gate's `on_reject`)"
    elif run.task is None:
        refusal = "the run has no task whose plan a repair node could join"
    elif not node_configured(node):
        refusal = f"the repair node {node} has no handler the worker could run"
    elif int((run.cursor or {}).get("repairs") or 0) >= MAX_REPAIRS:
        refusal = f"the gate was repaired {MAX_REPAIRS} times already"
    elif not plan_handled(run.task):
        # A gate still ahead (an approval the worker does not drive) would leave the worker unable to go on
        # after the repair: a rejected gate is routed to its repair by the worker itself (worker.repair).
        refusal = ("the plan's remaining nodes are not all the worker's (a gate waits for an approval): "
                   "reject the gate's approval and the worker routes it to its repair")
    return RunPlan(**base, to=RunStatus.RUNNING, refusal=refusal, repair_node=node,
                   resumes_from=f"the repair node {node}" if not refusal else "",
                   effects=_effects(run, resuming=True) if not refusal else ())


def declared_repair(run: Run) -> str:
    """The repair node the run's plan declares: the `on_reject` of the gate its latest checkpoint records
    (as worker.repair reads it), or ""."""
    checkpoint = run.last_checkpoint or (run.task.latest_checkpoint if run.task is not None else None)
    gate = checkpoint.pending_gate if checkpoint is not None else None
    node = gate.get("on_reject") if isinstance(gate, dict) else None
    return node if isinstance(node, str) else ""


def _gate(run: Run) -> str:
    approval = run.pending_approval
    return run.current_node or (approval.tool if approval is not None else "")


def _resume_point(run: Run) -> str:
    if run.status == RunStatus.WAITING_APPROVAL:
        return "the approval's decision (the full re-validation, then the approved action)"
    if run.status == RunStatus.WAITING_EXTERNAL:
        return "the returned handoff's result"
    pending = remaining_nodes(run.task.plan, run.task.completed_nodes) if run.task is not None else []
    if run.blocked_step and run.current_node:
        return f"the node {run.current_node} (blocked at {run.blocked_step})"
    return f"the node {pending[0]}" if pending else "its saved cursor"


def _effects(run: Run, *, resuming: bool) -> tuple[EffectOutlook, ...]:
    """Each of the run's effects and whether the run, as the action leaves it, would send it (again)."""
    adapters = getattr(settings, "HARNESS_TOOL_ADAPTERS", {})
    outlooks = []
    for effect in ExternalEffect.objects.filter(run_id=run.pk).order_by("pk"):
        resent, why = False, "the run ends here" if not resuming else ""
        if effect.status in (EffectStatus.DELIVERED, EffectStatus.CONSUMED):
            why = "its result is recorded; a delivered effect is never called again"
        elif effect.status in (EffectStatus.REFUSED, EffectStatus.ABANDONED, EffectStatus.CONFLICT):
            why = f"it is {effect.status}, which is final"
        elif not resuming:
            pass
        elif effect.status == EffectStatus.UNKNOWN:
            honours = bool((adapters.get(effect.tool) or {}).get("honours_idempotency_key"))
            resent = effect.retry_authorized or honours
            why = ("under the same key: " + ("a person allowed the retry" if effect.retry_authorized
                                             else "its tool honours idempotency keys")) if resent else (
                "its outcome is unknown and its tool does not honour keys: a person decides it first")
        elif effect.status == EffectStatus.DISPATCHED:
            why = "its outcome is reconciled first (it becomes unknown), never sent blindly"
        else:  # intended: not sent yet
            resent, why = True, "it was intended and never sent"
        outlooks.append(EffectOutlook(effect.pk, effect.idempotency_key, effect.tool, effect.status, resent, why))
    return tuple(outlooks)


def _operator_runs(actor: Actor, project: Project | int) -> Any:
    user = actor.user
    if user is None or not user_has_role(user, Role.OPERATOR):
        raise Forbidden("Only operators act on runs.", code="not_an_operator")
    project_id = project if isinstance(project, int) else project.pk
    if not user_can_see_project(user, project_id):
        raise NotFoundError("The run does not exist.")
    if not user_has_role(user, Role.OPERATOR, project_id):  # the role in the run's project (issue 17)
        raise Forbidden("Only operators of the run's project act on it.", code="not_an_operator")
    return Run.objects.filter(project_id=project_id)


def run_act(
    *, project: Project | int, run_id: int, actor: Actor, action: str, reason: str, expected_version: int
) -> Run:
    """Carry out an operator's action on a run, as its preview (`run_action_plan`) said.

    1. Only an operator (admins hold every role) who can see the project; a reason is required.
    2. Lock the run; a version other than the preview's is refused (409 version_conflict), as is an action
       the plan refuses now (409 action_refused).
    3. The move through RUN_MACHINE (a compare-and-set on the version) with an `operator.<action>` event
       naming who and why; a repair first puts its node into the task's plan; a run that ends cancels its
       pending approval. A re-queue moves nothing: its event is the record.
    4. The audit entry (who, why, the plan's sentences) in the same transaction, and the resume queued after
       commit when the plan resumes.
    """
    runs = _operator_runs(actor, project)
    reason = reason.strip()
    if not reason or len(reason) > REASON_MAX:
        raise ValidationFailed(f"A reason of 1 to {REASON_MAX} characters is required.", code="reason_required")
    with transaction.atomic():
        run = runs.select_for_update(of=("self",)).select_related(
            "task", "last_checkpoint", "pending_approval").filter(pk=run_id).first()
        if run is None:
            raise NotFoundError(f"Run {run_id} does not exist.")
        if run.version != expected_version:
            raise ConflictError(
                f"The run changed since the preview: it is {run.status} at version {run.version}, "
                f"not version {expected_version}. Nothing was done; look at it again.",
                code="version_conflict", current_status=run.status, current_version=run.version)
        plan = run_action_plan(run=run, action=action)
        if not plan.allowed:
            raise ConflictError(plan.refusal, code="action_refused", current_status=run.status,
                                current_version=run.version)
        event = {"by": actor.label, "reason": reason, "from": run.status, "version": run.version,
                 **({"resumes_from": plan.resumes_from} if plan.resumes_from else {}),
                 **({"blocked_step": run.blocked_step} if run.blocked_step else {})}
        if plan.repair_node:
            updates = _route_repair(run, plan.repair_node)
            event["repair_node"] = plan.repair_node
        else:
            updates = {}
        if plan.cancels_approval is not None:
            approvals = ApprovalRequest.objects.filter(project_id=run.project_id, run_id=run.pk)
            cas_transition_row(approvals, pk=plan.cancels_approval, machine=APPROVAL_MACHINE,
                               to=ApprovalStatus.CANCELLED, expected_version=None, updates={"decision_reason": reason})
            event["cancelled_approval"] = plan.cancels_approval
        if plan.to:
            error = {"by": actor.label, "reason": reason} if plan.to == RunStatus.FAILED else None
            run = run_transition(project=run.project_id, run_id=run.pk, to=plan.to, expected_version=run.version,
                                 error=error, updates=updates, events=[(f"operator.{action}", event)])
        else:
            run = _mark_in_place(run, event, action, retry=plan.in_place)
        # Named as every door names a person's move of a run (`run.<status>`, as the admin always has); an action
        # that moves no status by the action.
        audit_record(project=run.project_id, actor=actor, action=f"run.{plan.to or action}", target=run,
                     data={"action": action, "reason": reason, "from": plan.status, "to": plan.to,
                           "version": plan.version,
                           "plan": plan.summary()})
        if plan.enqueues:
            run_id_ = run.pk
            transaction.on_commit(lambda: resume_requested.send(sender=Run, run_id=run_id_))
        return run


def _mark_in_place(run: Run, event: dict[str, Any], action: str, *, retry: bool) -> Run:
    """An action that moves no status (a re-queue; a retry of an approval's resume, which marks the run's
    error with RETRY_MARK for the worker's load) is one conditional write at the version the preview showed,
    bumping it (so a second preview of the same state is refused), and its event."""
    updates: dict[str, Any] = {"version": F("version") + 1}
    if retry:
        error = run.error if isinstance(run.error, dict) else {"error": run.error}
        updates["error"] = {**error, RETRY_MARK: {"by": event["by"], "reason": event["reason"],
                                                  "step": run.blocked_step, "version": run.version}}
    bumped = Run.objects.filter(pk=run.pk, version=run.version, status=run.status).update(**updates)
    if not bumped:  # the row is locked by us: unreachable unless the lock was lost
        raise ConflictError("The run changed while it was being acted on.", code="version_conflict")
    run_event_append(project=run.project_id, run_id=run.pk, kind=f"operator.{action}", data=event)
    run.refresh_from_db()
    return run


def _route_repair(run: Run, node: str) -> dict[str, Any]:
    """Put the repair node into the task's plan just before the blocked node (again, if it ran before), as
    worker.repair does for a rejection, and count the repair in the run's cursor (MAX_REPAIRS)."""
    if run.task_id is None:  # the plan refuses a repair without a task: unreachable
        raise ConflictError("The run has no task whose plan a repair node could join.", code="action_refused")
    task = Task.objects.select_for_update().get(pk=run.task_id)
    gate = _gate(run)
    plan = list(task.plan or [])
    if node not in plan:
        plan.insert(plan.index(gate) if gate in plan else len(plan), node)
    task_save(project=run.project_id, task_id=task.pk, expected_version=task.version, plan=plan,
              plan_version=task.plan_version + 1, completed_nodes=[n for n in task.completed_nodes if n != node])
    cursor: dict[str, Any] = {**(run.cursor or {}), "repairs": int((run.cursor or {}).get("repairs") or 0) + 1}
    return {"cursor": cursor, "current_node": node}
