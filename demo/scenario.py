"""The demo run R-101 waiting for its approval, built through the services (the worker, browser and
reliability tests start from it).

Contract with `load_demo`: project "novelforge", task T-7 (plan outline/draft/publish/summarize,
outline and draft completed), run R-101 waiting for the approval of `publish_chapter` with
{"chapter": 3, "title": "The Lighthouse"}. `demo_scenario_create` builds exactly that through the
services; `load_demo` may call it.
"""

from typing import Any

from demo.nodes import draft, outline
from harness.actors import Actor
from harness.models import Project
from runs_app.artifacts import artifact_fingerprints
from runs_app.models import Run, RunStatus, TaskStatus
from runs_app.services import (
    approval_request_create,
    checkpoint_create,
    run_create,
    run_transition,
    task_create,
    task_transition,
)

DEMO_PLAN = ["outline", "draft", "publish", "summarize"]
DEMO_ACTION = {"chapter": 3, "title": "The Lighthouse"}


def demo_scenario_create(*, project: Project, requested_by: Actor | None = None, repair_node: str = "") -> Run:
    """Build T-7 and R-101 waiting for approval (returns the existing R-101 if there is one).

    1. Task T-7 with the demo plan; outline and draft completed with their artifacts.
    2. Session and run R-101 on T-7, running at node "publish", checkpointed with the artifact
       fingerprints and the pending gate.
    3. The approval request for publish_chapter, which moves R-101 to waiting_approval.
    `repair_node`: the gate declares it as the node a rejection routes to (worker.repair).
    """
    existing = Run.objects.filter(project=project, ref="R-101").first()
    if existing is not None:
        return existing
    from sessions_app.services import session_create

    task = task_create(project=project, objective="Write and publish chapter 3 of the novel", ref="T-7",
                       plan=list(DEMO_PLAN))
    artifacts: dict[str, Any] = {}
    for name, handler in (("outline", outline), ("draft", draft)):
        artifacts[name] = handler(task=task, run=Run(), node=name, artifacts=artifacts, context={})
    from runs_app.services import task_save

    task = task_save(project=project, task_id=task.pk, expected_version=task.version,
                     completed_nodes=["outline", "draft"], pending_nodes=["publish", "summarize"],
                     artifact_refs=artifacts)
    task = task_transition(project=project, task_id=task.pk, to=TaskStatus.ACTIVE, expected_version=None)
    session = session_create(project=project, role="writer", memory_policy="bounded", ref="S-42")
    run = run_create(project=project, session_id=session.pk, task_id=task.pk, ref="R-101", task_mode="novel",
                     active_agent="writer-1", cursor={"node": "outline"})
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None,
                   updates={"current_node": "publish"})
    checkpoint_create(
        project=project, run_id=run.pk, label="before publish", cursor={"node": "publish", "index": 2},
        state={"plan_version": task.plan_version, "completed_nodes": ["outline", "draft"]},
        artifact_fingerprints=artifact_fingerprints(artifacts),
        pending_gate={"tool": "publish_chapter", "arguments": DEMO_ACTION,
                      **({"on_reject": repair_node} if repair_node else {})},
    )
    approval_request_create(
        project=project, run_id=run.pk, tool="publish_chapter", arguments=dict(DEMO_ACTION),
        idempotency_key=f"{project.slug}:R-101:publish:chapter-3", risk="high",
        reason="Publishing chapter 3 is visible to readers and cannot be undone.",
        actor=requested_by or Actor.for_agent("writer-1"),
    )
    return Run.objects.get(pk=run.pk)
