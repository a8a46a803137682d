"""Routing a rejected gate of a worker-driven plan to a declared repair node (seed 002, section 07: "stop or
route repair, never continue silently under a stale assumption").

A plan declares its repair with the gate: the gate checkpoint's `pending_gate` names `"on_reject": "<node>"`
(kept on the waiting checkpoint an approval request writes: runs_app.services.checkpoints.checkpoint_waiting).
On a rejection, instead of failing the run:

1. the repair node goes into the task's plan just before the gate (again, if it ran before: it is taken out
   of the completed nodes), the plan's version moves on, and the run's cursor records the repair (its node,
   the gate, the rejected action and the rejection) with a `repair.routed` event;
2. the worker drives the repair node like any other (its handler sees the rejection in `context["rejection"]`);
3. once it is done, the gate's action is asked for again: a new approval request for the same tool with the
   arguments the repair produced (`artifact["arguments"]`, else the rejected ones), under the rejected key
   with `:repair-<n>` appended; the run waits for it, and a decision resumes it as any other.

A gate is repaired at most MAX_REPAIRS times; after that a rejection fails the run as before. Without a
declaration, or with no handler for the node, nothing changes: the run fails.
"""

from typing import Any

from django.db import transaction

from harness.actors import Actor
from harness.models import Project
from runs_app.models import Task
from runs_app.services import approval_request_create, run_event_append, run_set_current_node, task_save
from runs_app.services.run_actions import MAX_REPAIRS
from worker.handlers import node_handler
from worker.state import Resume


def repair_node(r: Resume) -> str | None:
    """The repair node the gate declared, when it has a handler and repairs are left; else None."""
    gate = r.gate  # as the load read it: the binding's checkpoint has been written since
    node = gate.get("on_reject") if isinstance(gate, dict) else None
    if not isinstance(node, str) or not node or node_handler(node) is None or r.task is None:
        return None
    if int((r.run.cursor or {}).get("repairs") or 0) >= MAX_REPAIRS:
        return None
    return node


def route_to_repair(r: Resume) -> bool:
    """Step 1 of the module's docstring, in one transaction under our lease; False when there is nothing to route."""
    node, approval = repair_node(r), r.approval
    if node is None or approval is None or r.task is None:
        return False
    gate = r.run.current_node or approval.tool
    rounds = int((r.run.cursor or {}).get("repairs") or 0) + 1
    rejection = {"approval": approval.pk, "reason": approval.decision_reason,
                 "by": approval.decided_by.get_username() if approval.decided_by else ""}
    with transaction.atomic():
        task = Task.objects.get(pk=r.task.pk)
        plan = list(task.plan or [])
        if node not in plan:
            plan.insert(plan.index(gate) if gate in plan else len(plan), node)
        r.task = task_save(project=r.project_id, task_id=task.pk, expected_version=task.version, plan=plan,
                           plan_version=task.plan_version + 1,
                           completed_nodes=[n for n in task.completed_nodes if n != node])
        cursor = {**(r.run.cursor or {}), "repairs": rounds,
                  "repair": {"node": node, "gate": gate, "tool": approval.tool, "arguments": approval.arguments,
                             "key": approval.idempotency_key, "round": rounds, "rejection": rejection}}
        run_set_current_node(project=r.project_id, run_id=r.run_id, owner=r.owner, node=node, cursor=cursor)
        r.run.cursor = cursor
        run_event_append(project=r.project_id, run_id=r.run_id, kind="repair.routed",
                         data={"node": node, "gate": gate, "round": rounds, "rejection": rejection})
    r.context = {**r.context, "rejection": rejection}
    return True


def repair_done(cursor: dict[str, Any] | None, node: str) -> dict[str, Any] | None:
    """The repair the run's cursor records, when `node` is its repair node."""
    repair = (cursor or {}).get("repair")
    return repair if isinstance(repair, dict) and repair.get("node") == node else None


def ask_again(r: Resume, cursor: dict[str, Any], artifact: Any) -> None:
    """Step 3 of the module's docstring: the gate's action asked for again, the run waiting for it (lease released)."""
    repair = cursor["repair"]
    arguments = artifact.get("arguments") if isinstance(artifact, dict) else None
    if not isinstance(arguments, dict):
        arguments = repair["arguments"]
    cursor = {key: value for key, value in cursor.items() if key != "repair"}
    with transaction.atomic():
        run_set_current_node(project=r.project_id, run_id=r.run_id, owner=r.owner, node=repair["gate"], cursor=cursor)
        r.run.cursor = cursor
        approval_request_create(
            project=Project.objects.get(pk=r.project_id), run_id=r.run_id, tool=repair["tool"], arguments=arguments,
            idempotency_key=f"{repair['key']}:repair-{repair['round']}"[:200], actor=Actor.for_worker(r.owner),
            reason=f"Repaired by {repair['node']} after the rejection: {repair['rejection']['reason']}",
            gate={"on_reject": repair["node"]},  # the next rejection may be repaired too, up to MAX_REPAIRS
            lease_owner=r.owner,
        )
    r.leased = False
