"""Node handlers for worker-driven task plans, registered by name in `settings.HARNESS_NODE_HANDLERS`.

A task whose remaining plan nodes all have handlers is driven by the resume worker itself, node
after node, with a NodeExecution row and a checkpoint after each. A handler is a plain function

    def draft(*, task: Task, run: Run, node: str, artifacts: dict, context: dict) -> dict

that returns the node's artifact (stored in `task.artifact_refs[node]`). Handlers must be
deterministic and free of external side effects: a crash mid-node re-runs the node (a new attempt).
An external side effect belongs to an approved tool call (runs_app.adapters), never to a node.
"""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from harness.canonical import digest

NodeHandler = Callable[..., dict]


def node_handler(name: str) -> NodeHandler | None:
    path = getattr(settings, "HARNESS_NODE_HANDLERS", {}).get(name)
    if not path:
        return None
    try:
        return import_string(path)
    except ImportError:
        return None


def artifact_fingerprint(value: Any) -> str:
    """An artifact's fingerprint, as bare hex.

    A ref that carries its own `sha256`, or is a string (a content address such as "sha256:<hex>",
    or a path@version), is its own identity; any other ref is identified by its canonical digest.
    """
    if isinstance(value, dict) and isinstance(value.get("sha256"), str):
        value = value["sha256"]
    if isinstance(value, str):
        return value.removeprefix("sha256:")
    return digest(value)


def artifact_fingerprints(artifact_refs: dict) -> dict[str, str]:
    """What a checkpoint records about the task's artifacts, for the resume to verify."""
    return {name: artifact_fingerprint(value) for name, value in sorted((artifact_refs or {}).items())}


def remaining_nodes(plan: list, completed: list) -> list[str]:
    done = set(completed or [])
    return [node for node in plan or [] if node not in done]
