"""Step `bind_result`: the approved action's result, through its effect record: reuse a bound one, else call once.

The orchestrator runs `dispatch` at the end of its pre-call transaction, then `call` with no
transaction open, then `deliver` in a transaction of its own; `run` does all three.
"""

import logging
import time
from typing import Any

from django.conf import settings
from django.db import transaction

from harness.actors import Actor
from harness.canonical import digest
from harness.http.errors import ConflictError
from runs_app.models import (
    ApprovalStatus,
    EffectStatus,
    ExternalEffect,
    FailureCategory,
)
from runs_app.policies import reject_option_of
from runs_app.resume_due import UNKNOWN_EFFECT  # the block a person decides (services.effects.effect_resolve)
from runs_app.services import (
    Resend,
    effect_deliver,
    effect_dispatch,
    effect_intend,
    effect_mark_unknown,
    effect_refuse,
    run_forked_from,
    run_heartbeat,
)
from worker import faults, handoff
from worker.adapters import AdapterError, ToolAdapter, ToolRefused
from worker.keepalive import lease_kept
from worker.limits import check_limits
from worker.state import Resume, ResumeMode, Retry, StepFailed, Stop, trace, trace_event

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any] | None:
    """Get the approved action's result through its effect record: reuse a bound one, else call once.

    1. The agent runs the tool itself (executor "agent"): bind the decision (the approved arguments and
       fingerprint, or the rejection or expiry and its reason); nothing is executed here.
       Rejected: bind the rejection and its reason; nothing is executed.
    2. Intend the effect under the approval's idempotency key (the same key returns the same record).
    3. Delivered or consumed already (by the tool, its lookup, or a person with the evidence): reuse its
       result, no call. Refused by the tool: blocked, never re-sent. Abandoned by a person: bound like a
       rejection, nothing is called.
    4. Left `dispatched` by a crash: mark it `unknown`. An unknown effect is sent again under the same key
       only when a person allowed it or its adapter honours idempotency keys; an adapter that can look the
       outcome up by key is asked first (in `call`); with neither, the run blocks at `unknown_effect` and
       a person decides (seed 002, section 12). Nothing is guessed.
    5. The run's budget and deadline hold (worker.limits), else it blocks at `budget` or `deadline`.
    6. Dispatch (committed before the call), call, deliver the result (committed, not yet consumed).

    The orchestrator runs 1-4 and the dispatch in its pre-call transaction, then `call` and
    `deliver` itself; called on its own, this does all of it.
    """
    data = dispatch(r)
    if data is not None:
        return data
    result = call(r)
    with transaction.atomic():
        data = deliver(r, result)
    faults.point("after_deliver")
    return data


def dispatch(r: Resume) -> dict[str, Any] | None:
    """Steps 1-4 of `run` and the dispatch; the step's trace data, or None when a call follows."""
    if r.mode == ResumeMode.HANDOFF:  # nothing to call: the receiver returned the result (worker.handoff)
        return handoff.verify(r)
    if r.mode != ResumeMode.APPROVAL:
        return {"bound": None}
    approval = r.approval
    if approval is None:  # approval_preconditions refused this already
        raise StepFailed("the run waits for approval but has no pending approval")
    if r.agent_executes:
        r.bound = agent_decision(r)
        return {"decision": r.bound["decision"], "executed": False, "executor": "agent"}
    if approval.status == ApprovalStatus.REJECTED:
        r.bound = {"decision": "rejected", "approval": approval.pk, "reason": approval.decision_reason,
                   "by": approval.decided_by.get_username() if approval.decided_by else "",
                   **rejection_option(approval)}
        return {"decision": "rejected", "executed": False}
    try:
        effect, _ = effect_intend(
            project=r.project_id, idempotency_key=approval.idempotency_key, tool=approval.tool,
            arguments=approval.approved_arguments, run_id=r.run_id, approval_id=approval.pk,
            actor=Actor.for_worker(r.owner),
        )
    except ConflictError as exc:
        raise StepFailed(f"the idempotency key names another action: {exc.detail}") from exc
    if effect.run_id not in (None, r.run_id):
        # Time travel (issue 20): a fork that reaches an action its origin run already consumed under this key
        # gets the stored result bound, never a second call. Anything else of another run's stays refused: a
        # result delivered and not consumed is the other run's to consume.
        if not (effect.status == EffectStatus.CONSUMED
                and run_forked_from(project_id=r.project_id, run_id=r.run_id, ancestor_run_id=effect.run_id)):
            raise StepFailed("the idempotency key belongs to another run's effect", effect=effect.pk)
        r.effect, r.result, r.inherited = effect, effect.result, True
        return {"effect": effect.pk, "executed": False, "reason": "consumed by the run this one was forked from",
                "forked_from_run": effect.run_id}
    if effect.status == EffectStatus.CONFLICT:
        raise StepFailed("the effect is in conflict (two results for one key)", effect=effect.pk,
                         category=FailureCategory.IRREVERSIBLE)
    if effect.status == EffectStatus.REFUSED:
        raise StepFailed("the tool refused this action", effect=effect.pk, answer=effect.answer,
                         category=effect.failure_category or FailureCategory.INVALID_INPUT)
    if effect.status == EffectStatus.ABANDONED:
        resolution = effect.resolution or {}
        r.abandoned, r.effect = True, None
        r.bound = {"decision": "abandoned", "approval": approval.pk, "tool": approval.tool, "effect": effect.pk,
                   "reason": resolution.get("reason", ""), "by": resolution.get("by", "")}
        return {"decision": "abandoned", "effect": effect.pk, "executed": False}
    if effect.status in (EffectStatus.DELIVERED, EffectStatus.CONSUMED):
        r.effect, r.result = effect, effect.result
        return {"effect": effect.pk, "executed": False, "reason": f"already {effect.status}"}
    if effect.status == EffectStatus.DISPATCHED:
        # We hold the lease, so whoever dispatched it is gone: its outcome is unknown.
        effect = effect_mark_unknown(project=r.project_id, effect_id=effect.pk)
    resend = _resend(r, effect) if effect.status == EffectStatus.UNKNOWN else Resend.NONE
    check_limits(r.run)
    if time.monotonic() - r.claimed_at > r.lease_seconds / 3:
        # The claim (this transaction's, holding the row) is not fresh any more: renew it before the call.
        try:
            run_heartbeat(project=r.project_id, run_id=r.run_id, owner=r.owner, lease_seconds=r.lease_seconds)
        except ConflictError:
            raise Stop("the lease was lost before the call") from None
    reconciled = effect.status == EffectStatus.UNKNOWN
    if r.look_up_first:  # `call` asks the adapter what became of the key before anything is sent
        r.dispatched = effect
        r.bind_data = {"effect": effect.pk, "executed": False, "reconciled": True}
        return None
    # The trace of the steps before (this transaction's) is written by the dispatch's own statement.
    events, r.events = r.events, []
    try:
        r.dispatched = effect_dispatch(project=r.project_id, effect_id=effect.pk, resend=resend, run_id=r.run_id,
                                       events=events)
    except BaseException:
        r.events = events + r.events  # not written: flushed, or rolled back, with the transaction (worker.pipeline)
        raise
    r.bind_data = {"effect": effect.pk, "executed": True, "reconciled": reconciled,
                   **({"resend": resend} if reconciled else {})}
    return None


def _resend(r: Resume, effect: ExternalEffect) -> str:
    """Who allows an unknown effect to leave again; sets `look_up_first` when the adapter must be asked, and
    blocks the run at `unknown_effect` when nobody can say (seed 002, section 12)."""
    adapter = _adapter(r)
    if effect.retry_authorized:
        return Resend.PERSON
    if adapter.honours_idempotency_key:
        if effect.attempts >= settings.HARNESS_EFFECT_MAX_ATTEMPTS:
            raise StepFailed(f"the tool call's outcome is still unknown after {effect.attempts} attempts",
                             effect=effect.pk, category=FailureCategory.TRANSIENT)
        return Resend.ADAPTER
    if adapter.can_look_up:
        r.look_up_first = True
        return Resend.NONE
    raise StepFailed(
        f"the outcome of the {effect.tool!r} call is unknown and its adapter neither honours idempotency keys "
        "nor looks outcomes up: a person decides (mark it delivered with the evidence, retry, or abandon)",
        block_as=UNKNOWN_EFFECT, category=FailureCategory.IRREVERSIBLE, effect=effect.pk, attempts=effect.attempts)


def _adapter(r: Resume) -> ToolAdapter:
    if r.adapter is None:  # capability resolved it for an approved worker-executed action
        raise StepFailed("the approved action has no adapter to call")
    return r.adapter


def rejection_option(approval: Any) -> dict[str, Any]:
    """A rejection's reject option for the agent ({"reject_option": name, "agent_text": what to do instead}), or
    nothing for a plain rejection (runs_app.policies.reject_option_of)."""
    option = reject_option_of(approval)
    return {"reject_option": option["name"], "agent_text": option["agent_text"]} if option else {}


def agent_decision(r: Resume) -> dict[str, Any]:
    """What the run's `bound_result` tells the agent that runs the tool itself: the decision, and for an
    approval exactly what to run (the approved arguments, their fingerprint, the key to run it under)."""
    approval = r.approval
    if approval is None:  # dispatch checked it
        raise StepFailed("the run waits for approval but has no pending approval")
    bound: dict[str, Any] = {
        "decision": approval.status, "approval": approval.pk, "executor": "agent", "tool": approval.tool,
        "idempotency_key": approval.idempotency_key,
        "by": approval.decided_by.get_username() if approval.decided_by else "",
    }
    if approval.status == ApprovalStatus.APPROVED:
        bound.update(arguments=approval.approved_arguments, fingerprint=approval.approved_fingerprint,
                     edited=approval.approved_fingerprint != approval.action_fingerprint)
    elif approval.status == ApprovalStatus.REJECTED:
        bound.update(reason=approval.decision_reason, **rejection_option(approval))
    else:  # expired: nobody decided in time
        bound["reason"] = "the approval expired before a decision"
    return bound


def call(r: Resume) -> Any:
    """Call the tool for the dispatched effect (its dispatch committed, no transaction open).

    An unknown effect whose adapter can look outcomes up is looked up first: found, its result is delivered
    with no call; definitely never happened, it is dispatched (one committed statement) and called.
    """
    effect, approval, adapter = r.dispatched, r.approval, r.adapter
    if effect is None or approval is None or adapter is None:  # dispatch and capability set them
        raise StepFailed("the approved action has no dispatched effect or no adapter to call")
    faults.point("before_call")
    if r.look_up_first:
        r.look_up_first = False
        try:
            found = adapter.lookup(idempotency_key=approval.idempotency_key)
        except AdapterError as exc:
            trace(r, "bind_result", False, f"the outcome could not be looked up, will retry: {exc}",
                  effect=effect.pk)
            raise Retry(str(exc)) from exc
        if found.found:
            r.bind_data["looked_up"] = "found"
            return found.result
        r.bind_data.update(looked_up="not_found", executed=True)
        r.dispatched = effect = effect_dispatch(project=r.project_id, effect_id=effect.pk, resend=Resend.ADAPTER)
    try:
        # The call may outlast the lease: renewed while it runs, no second worker takes the run mid-call.
        with lease_kept(project_id=r.project_id, run_id=r.run_id, owner=r.owner,
                        lease_seconds=r.lease_seconds) as keeper:
            result = adapter.call(approval.approved_arguments, idempotency_key=approval.idempotency_key)
    except ToolRefused as exc:
        effect_refuse(project=r.project_id, effect_id=effect.pk, answer=exc.answer, category=exc.category)
        raise StepFailed(f"the tool refused the call: {exc}", effect=effect.pk, category=exc.category) from exc
    except AdapterError as exc:
        effect_mark_unknown(project=r.project_id, effect_id=effect.pk)
        if not (adapter.honours_idempotency_key or adapter.can_look_up):
            # Nobody can say whether it happened, and sending it again might do it twice: stop here.
            raise StepFailed(f"the outcome of the {approval.tool!r} call is unknown ({exc}) and its adapter "
                             "neither honours idempotency keys nor looks outcomes up: a person decides",
                             block_as=UNKNOWN_EFFECT, category=FailureCategory.IRREVERSIBLE,
                             effect=effect.pk) from exc
        trace(r, "bind_result", False, f"the tool is unreachable, will retry: {exc}", effect=effect.pk)
        raise Retry(str(exc)) from exc
    faults.point("after_call")
    if keeper.renewals or keeper.lost:
        r.bind_data.update(lease_renewals=keeper.renewals, lease_lost=keeper.lost)
    return result


def deliver(r: Resume, result: Any) -> dict[str, Any] | None:
    """Record the call's result as delivered (not consumed yet): the tool's own answer, or its lookup by key, so it
    settles an effect left `unknown` too (`settles_unknown`: the proof an agent's delivery does not have).

    The step's trace (and whatever this transaction traced before it) rides in the delivery's statement, after
    the effect's `effect.delivered` event, as the pre-call trace rides with the dispatch: None then (traced).
    A delivery that takes the locked path (already delivered, a conflict) writes no trace: the step's trace data
    is returned for the pipeline to write, and a conflict's failure is traced as any other.
    """
    effect, approval = r.dispatched, r.approval
    if effect is None or approval is None:  # `call` had both
        raise StepFailed("the approved action's result has no dispatched effect to deliver to")
    # The hash the delivery will record (a different one is a conflict, which fails the step below).
    data = {**r.bind_data, "attempt": effect.attempts, "result_hash": digest(result)}
    events, r.events = [*r.events, trace_event(r, "bind_result", True, **data)], []
    try:
        delivery = effect_deliver(project=r.project_id, idempotency_key=approval.idempotency_key, result=result,
                                  consume=False, run_id=r.run_id, events=events, settles_unknown=True)
    except BaseException:
        r.events = events[:-1] + r.events  # not written: flushed, or rolled back, with the transaction
        raise
    if not delivery.events_written:
        r.events = events[:-1] + r.events
    if delivery.outcome == "conflict":
        raise StepFailed("the tool returned a different result for the same idempotency key", effect=effect.pk)
    r.effect, r.result, r.dispatched = delivery.effect, delivery.effect.result, None
    data["result_hash"] = delivery.effect.result_hash
    return None if delivery.events_written else data
