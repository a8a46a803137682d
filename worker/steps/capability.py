"""Step `capability`: the approved tool's adapter exists now and takes these arguments."""

import logging
from typing import Any

from runs_app.resume_due import remaining_nodes
from worker.adapters import AdapterConfigError, adapter_resolve
from worker.handlers import node_handler
from worker.state import Resume, StepFailed

log = logging.getLogger(__name__)


def run(r: Resume) -> dict[str, Any]:
    """The adapter for the approved tool exists now and takes these arguments; the plan's nodes have handlers."""
    data: dict[str, Any] = {}
    if r.agent_executes:  # the agent that asked runs the tool itself: no adapter to resolve here
        return {"adapter": None, "executor": "agent"}
    approval = r.approval if r.approved else None
    if approval is not None:
        try:
            adapter = adapter_resolve(approval.tool)
        except AdapterConfigError as exc:
            raise StepFailed(str(exc), tool=approval.tool) from exc
        if adapter is None:
            raise StepFailed(f"no adapter is registered for the tool {approval.tool!r}", tool=approval.tool)
        problem = adapter.incompatibility(approval.approved_arguments)
        if problem:
            raise StepFailed(f"the adapter for {approval.tool!r} cannot take this action: {problem}")
        r.adapter = adapter
        data["adapter"] = type(adapter).__name__
    if r.mode == "continue":
        if r.task is None:  # a run a worker left `running` without a task: no plan to continue
            raise StepFailed("the run has no task whose nodes the worker could drive")
        # A gate being repaired (worker.repair) is asked for again once its repair node is done: not a node to run.
        repaired_gate = ((r.run.cursor or {}).get("repair") or {}).get("gate")
        missing = [n for n in remaining_nodes(r.task.plan, r.task.completed_nodes)
                   if node_handler(n) is None and n != repaired_gate]
        if missing:
            raise StepFailed(f"no handler is registered for the nodes: {', '.join(missing)}", nodes=missing)
        data["nodes"] = remaining_nodes(r.task.plan, r.task.completed_nodes)
    return data
