"""A task's page as the console shows it: its plan with each node's state, and its saved states with what each
changed against the one before it (from the rows runs_app.selectors.tasks reads)."""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from runs_app.models import NodeExecution, Task, TaskStateVersion

TASK_STATE_FIELDS = ("objective", "constraints", "plan", "plan_version", "completed_nodes", "pending_nodes",
                     "artifact_refs", "schema_version")


@dataclass(frozen=True)
class PlanNode:
    name: str
    state: str  # completed | current | pending | planned (in the plan, in neither list)
    execution: NodeExecution | None  # its latest execution, if the worker drove it


def _node_name(node: Any) -> str:
    """A plan's node as text: a name as it is, any other JSON value written out (as the worker keys it)."""
    return node if isinstance(node, str) else json.dumps(node, sort_keys=True, ensure_ascii=False, default=str)


def task_plan(task: Task, latest: dict[str, NodeExecution]) -> list[PlanNode]:
    """The plan in order, each node with its state and its latest execution (`latest`, by node name:
    runs_app.selectors.tasks.task_node_executions)."""
    completed = {_node_name(n) for n in task.completed_nodes or []}
    pending = [_node_name(n) for n in task.pending_nodes or []]
    nodes = []
    for name in (_node_name(n) for n in task.plan or []):
        if name in completed:
            state = "completed"
        elif pending and name == pending[0]:
            state = "current"
        elif name in pending:
            state = "pending"
        else:
            state = "planned"
        nodes.append(PlanNode(name, state, latest.get(name)))
    return nodes


@dataclass(frozen=True)
class StateChange:
    version: TaskStateVersion
    changed: list[tuple[str, str]]  # (field, its new value as JSON) against the version before it
    state_json: str


def task_state_history(rows: Sequence[TaskStateVersion], limit: int) -> list[StateChange]:
    """The saved states (`rows`, newest first, one more than `limit` when there are more:
    runs_app.selectors.tasks.task_state_versions), each with what it changed against the one before it."""
    changes = []
    for index, row in enumerate(rows[:limit]):
        before = rows[index + 1].state if index + 1 < len(rows) else {}
        changed = [(name, json.dumps(row.state.get(name), ensure_ascii=False, sort_keys=True, default=str))
                   for name in TASK_STATE_FIELDS if row.state.get(name) != before.get(name) or not before]
        changes.append(StateChange(row, changed, json.dumps(row.state, indent=2, ensure_ascii=False,
                                                             sort_keys=True, default=str)))
    return changes
