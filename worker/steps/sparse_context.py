"""Step `sparse_context`: rebuild what the model may see, under the session's policy and budget, and record it."""

import logging
from typing import Any

from harness.canonical import digest
from harness.http.errors import DomainError
from memory_app.context import context_project
from runs_app.artifacts import artifact_fingerprints
from worker.state import Resume, StepFailed

log = logging.getLogger(__name__)



def run(r: Resume) -> dict[str, Any]:
    """Rebuild what the model may see, within a budget, and record it (never the transcript).

    1. The task's durable state (objective, plan, completed nodes, artifact fingerprints, the pending
       action): what a node handler is given.
    2. What the session's memory policy and role admit (memory_app.context's `context_project`: a received
       handoff's packet, items, a checkpoint's state) within the session's budget, stored with its manifest
       (a ContextSnapshot row); the trace names it. No memory is retrieved: nobody asked (DESIGN.md: memory
       is retrieved only on request, never injected because it is kept).
    """
    task = r.task
    state = {
        "objective": task.objective if task else "",
        "plan": task.plan if task else [],
        "completed_nodes": task.completed_nodes if task else [],
        "current_node": r.run.current_node,
        "cursor": r.run.cursor,
        "artifacts": artifact_fingerprints(task.artifact_refs) if task else {},
        "pending_action": ({"tool": r.approval.tool, "fingerprint": r.approval.action_fingerprint}
                           if r.approval else None),
    }
    try:
        snapshot = context_project(project=r.project_id, run_id=r.run_id)
    except DomainError as exc:
        raise StepFailed(f"the memory context could not be built: {exc}") from exc
    memory = snapshot.content
    data = {"state_digest": digest(state), "snapshot": snapshot.pk, "used_chars": snapshot.used_chars,
            "budget_chars": snapshot.budget_chars, "memory_ids": snapshot.memory_ids, "item_seqs": snapshot.item_seqs,
            "policy": snapshot.manifest["policy"], "role": snapshot.manifest["role"]}
    r.context = {"state": state, "memory": memory}
    return data
