"""Step `continue`: consume the result and move the run on from its saved cursor."""

import logging
from typing import Any

from runs_app.models import (
    FailureCategory,
)
from runs_app.services import (
    effect_deliver,
    node_execution_finish,
    node_execution_start,
)
from worker import handoff
from worker.progress import task_complete_node
from worker.state import Resume, ResumeMode, StepFailed

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """Consume the result and move the run on from its cursor (call inside the binding transaction).

    1. Approved: consume the delivered result once (a receipt); bind it, with the receipt, to the run.
       A person abandoned its effect (bind_result bound that, as a rejection is bound): nothing to consume.
       An effect the run it was forked from consumed (`r.inherited`) is bound with its receipt, not consumed again.
    2. A worker-driven run: the gate node is completed with the result (or failed by a rejection), the
       run stays `running` under our lease for `drive_nodes`.
    3. An agent-driven run (or an approval whose tool the agent runs itself): back to `running` with
       `bound_result` set and the lease released, for the agent to claim.
    The run's move is left in `r.move`: the pipeline makes it as the binding transaction's last statement.
    """
    if r.mode == ResumeMode.HANDOFF:  # the returned result, consumed once and bound (worker.handoff)
        return handoff.consume(r)
    if r.mode != ResumeMode.APPROVAL:
        return {"cursor": r.run.cursor, "mode": r.mode}
    approval = r.approval
    if approval is None:  # approval_preconditions refused this already
        raise StepFailed("the run waits for approval but has no pending approval")
    if r.approved and not r.agent_executes and not r.abandoned:  # bind_result bound the others
        if r.effect is None:  # bind_result delivered it, not_yet_consumed locked it
            raise StepFailed("the approved action has no delivered effect to consume")
        if r.inherited:
            # A fork's repeat of an action its origin consumed: the stored result and the original receipt.
            r.bound = {"decision": "approved", "approval": approval.pk, "tool": approval.tool,
                       "result": r.effect.result, "effect": r.effect.pk, "receipt": r.effect.receipt,
                       "result_hash": r.effect.result_hash, "forked_from_run": r.effect.run_id}
        else:
            delivery = effect_deliver(project=r.project_id, idempotency_key=approval.idempotency_key,
                                      result=r.result)
            if delivery.outcome != "consumed":
                raise StepFailed(f"the effect could not be consumed ({delivery.outcome})", effect=r.effect.pk)
            r.effect = delivery.effect
            r.bound = {"decision": "approved", "approval": approval.pk, "tool": approval.tool, "result": r.result,
                       "effect": r.effect.pk, "receipt": delivery.receipt, "result_hash": r.effect.result_hash}
    if r.bound is None:  # bound above, or by bind_result for a rejection
        raise StepFailed("the decision was not bound to the run")
    gate = r.run.current_node
    if r.worker_driven:  # a task's plan (worker.handlers.is_worker_plan): task_complete_node has its task
        execution = node_execution_start(run=r.run, node=gate or approval.tool)
        if r.approved and not r.abandoned:
            task_complete_node(r, gate, {"kind": "effect", "tool": approval.tool, "result": r.result,
                                          "receipt": r.bound["receipt"], "sha256": r.bound["result_hash"]})
            node_execution_finish(execution=execution, ok=True, output=r.bound)
        else:
            why = (f"abandoned: {r.bound.get('reason', '')}" if r.abandoned
                   else f"rejected: {approval.decision_reason}")
            node_execution_finish(execution=execution, ok=False, error=why,
                                  failure_category=FailureCategory.IRREVERSIBLE if r.abandoned
                                  else FailureCategory.SEMANTIC)
    # The move itself (back to running, the result bound, the approval answered and, handed back to the agent,
    # the lease released) is the binding transaction's last statement (worker.pipeline._move_on), with the
    # trace: the checkpoint after this is still written under our lease.
    r.move = {"bound": r.bound, "clear_approval": True, "hand_back": not r.worker_driven}
    return {"decision": r.bound["decision"], "receipt": r.bound.get("receipt", ""), "node": gate,
            "driven_by": "worker" if r.worker_driven else "agent"}
