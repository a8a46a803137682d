"""Node handlers for worker-driven task plans, registered by name in `settings.HARNESS_NODE_HANDLERS`.

A task whose remaining plan nodes all have handlers is driven by the resume worker itself, node
after node, with a NodeExecution row and a checkpoint after each (worker.drive). A handler is a plain
function

    def draft(*, task: Task, run: Run, node: str, artifacts: dict, context: dict) -> dict

that returns the node's artifact (stored in `task.artifact_refs[node]`). Handlers must be
deterministic and free of external side effects: a crash mid-node re-runs the node (a new attempt).
An external side effect belongs to an approved tool call (worker.adapters), never to a node.
A handler's exception may carry a `failure_category` (runs_app.models.FailureCategory: `transient`,
`invalid_input`, ...); without one the node's failure is `semantic` (it could not produce its artifact).

A configured path that does not import is a configuration error, not "no handler" (which would
leave the task waiting for an agent that never comes): the worker refuses to start
(`check_configuration`, called from worker.tasks at `worker_init`).
"""

from typing import Any, Protocol

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from runs_app.models import FailureCategory, Run, Task
from runs_app.resume_due import plan_handled
from worker.adapters import AdapterConfigError, adapter_resolve


class NodeHandler(Protocol):
    """A node handler's signature (the module docstring); artifacts and context are the task's JSON."""

    def __call__(self, *, task: Task, run: Run, node: str, artifacts: dict[str, Any], context: dict[str, Any]
                 ) -> dict[str, Any]: ...


def node_handler(name: str) -> NodeHandler | None:
    """The handler configured for a node, or None when the node has none (an agent works it)."""
    path = settings.HARNESS_NODE_HANDLERS.get(name)
    if not path:
        return None
    try:
        handler: NodeHandler = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(f"HARNESS_NODE_HANDLERS[{name!r}] = {path!r} cannot be imported: {exc}") from exc
    if not callable(handler):
        raise ImproperlyConfigured(f"HARNESS_NODE_HANDLERS[{name!r}] = {path!r} is not callable")
    return handler


def failure_category_of(exc: BaseException) -> str:
    """The category a handler's exception names, or `semantic`."""
    category = getattr(exc, "failure_category", "")
    return category if category in FailureCategory.values else FailureCategory.SEMANTIC


def is_worker_plan(task: Task | None, *, gate: str = "") -> bool:
    """A task the worker drives: a plan whose remaining nodes (but the approval gate) all have handlers that import."""
    return plan_handled(task, gate=gate, handled=lambda node: node_handler(node) is not None)


def check_configuration() -> list[str]:
    """Import every configured node handler and tool adapter; raise ImproperlyConfigured naming the
    first that fails. Returns the names checked. The worker calls this at start (worker.tasks)."""
    checked = []
    for name in settings.HARNESS_NODE_HANDLERS:
        node_handler(name)
        checked.append(f"node:{name}")
    for name in settings.HARNESS_TOOL_ADAPTERS:
        try:
            adapter_resolve(name)
        except AdapterConfigError as exc:
            raise ImproperlyConfigured(f"HARNESS_TOOL_ADAPTERS[{name!r}]: {exc}") from exc
        checked.append(f"tool:{name}")
    return checked
