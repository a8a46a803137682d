"""The seed's scene, built through the real services: session S-42 with runs R-100..R-102, R-101
waiting for approval of a high-risk tool call, task T-7 with a forked checkpoint lineage, and memory.
"""

from dataclasses import dataclass

from harness.actors import Actor
from harness.models import Project
from memory_app.models import MemoryRecord
from memory_app.services import memory_write
from runs_app.models import ApprovalRequest, Checkpoint, HumanQuestion, Run, RunStatus, Task
from runs_app.services import (
    approval_request_create,
    checkpoint_create,
    run_event_append,
    run_transition,
)
from runs_app.services.questions import question_ask
from sessions_app.models import Session
from sessions_app.services import session_items_append
from tests import factories


@dataclass
class Scene:
    project: Project
    session: Session
    task: Task
    run: Run
    approval: ApprovalRequest
    checkpoints: list[Checkpoint]
    fork: Checkpoint
    memory: MemoryRecord
    question: HumanQuestion



def build_scene(project: Project, *, suffix: str = "") -> Scene:
    session = factories.make_session(project, ref=f"S-42{suffix}")
    task = factories.make_task(
        project, ref=f"T-7{suffix}", objective="Fix the login bug", plan=["locate", "patch", "test"]
    )
    session_items_append(project=project, session_id=session.pk, items=[
        {"role": "user", "content": {"text": "Help me analyse the repo"}},
        {"role": "assistant", "content": {"text": "The bug is in auth.py line 42"}},
        {"role": "user", "content": {"text": "Go on, fix this bug"}},
    ])
    factories.make_run(project, session, ref=f"R-100{suffix}", active_agent="coder")
    run = factories.make_run(project, session, task_id=task.pk, ref=f"R-101{suffix}", active_agent="coder")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    session_items_append(project=project, session_id=session.pk, items=[
        {"role": "assistant", "content": {"text": "I need to push the patch"}, "run_id": run.pk},
    ])
    root = checkpoint_create(project=project, run_id=run.pk, label="cloned", cursor={"node": "locate"},
                             state={"files": ["auth.py"], "step": 1}, artifact_fingerprints={"repo": "abc"})
    located = checkpoint_create(project=project, run_id=run.pk, parent_id=root.pk, label="located",
                                cursor={"node": "patch"}, state={"files": ["auth.py"], "step": 2, "root_cause": "L42"})
    fork = checkpoint_create(project=project, run_id=run.pk, parent_id=root.pk, label="alt-branch",
                             cursor={"node": "patch"}, state={"files": ["auth.py", "db.py"], "step": 2})
    patched = checkpoint_create(project=project, run_id=run.pk, parent_id=located.pk, label="patched",
                                cursor={"node": "test"}, state={"files": ["auth.py"], "step": 3, "patch": "p1"},
                                artifact_fingerprints={"repo": "def"})
    approval = approval_request_create(
        project=project, run_id=run.pk, tool="git.push",
        arguments={"branch": "fix/login", "remote": "origin", "force": False},
        idempotency_key=f"push-{run.pk}", risk="high", reason="Push the fix", actor=Actor.for_agent("coder"),
    )
    run_event_append(project=project, run_id=run.pk, kind="note", data={"text": "waiting"})
    factories.make_run(project, session, ref=f"R-102{suffix}", active_agent="tester")
    memory = memory_write(
        project=project, actor=Actor.for_agent("coder"), scope="project", scope_key="",
        content=f"The login bug lives in auth.py{suffix}", subject="login-bug", provenance_kind="observed",
        source_run_id=run.pk,
    ).record
    assert memory is not None
    question = question_ask(project=project, actor=Actor.for_agent("coder"), run_id=run.pk,
                            question=f"Which branch should the fix go to{suffix}?", idempotency_key="q-branch",
                            answer_schema={"type": "string", "enum": ["main", "release"]})
    run.refresh_from_db()
    return Scene(project, session, task, run, approval, [root, located, fork, patched], fork, memory, question)
