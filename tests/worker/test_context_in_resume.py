"""The resume's `sparse_context` step projects what the run's session policy admits and records why
(issue 16, section 2): the same `context_project` the API calls, with the session's budget, no memory unasked."""

import pytest

from harness.actors import Actor
from memory_app.models import ContextSnapshot
from memory_app.services import memory_write
from runs_app.models import Checkpoint, Run, RunEvent, RunStatus
from runs_app.services import approval_request_create, checkpoint_create, run_transition
from sessions_app.services import session_items_append
from tests import factories
from tests.worker.support import approve, reviewer
from worker.pipeline import resume_run_by_id

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_resume_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("worker.tasks.enqueue_resume", lambda run_id: None)


def _resumed(project, policy: str, *, checkpoint_state: dict | None = None):  # type: ignore[no-untyped-def]
    """An agent-executed approval's resume of a run whose session holds an earlier run's items and its own."""
    session = factories.make_session(project, role="writer", memory_policy=policy, context_budget_chars=300)
    earlier = factories.make_run(project, session)
    run = factories.make_run(project, session, active_agent="writer")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    session_items_append(project=project, session_id=session.pk, items=[
        {"role": "user", "content": {"text": "earlier turn"}, "run_id": earlier.pk},
        {"role": "user", "content": {"text": "this run's turn"}, "run_id": run.pk}])
    memory_write(project=project, actor=Actor.for_agent("writer"), scope="project", content="The lamp is lit.",
                 source_run_id=run.pk)
    checkpoint = None
    if checkpoint_state is not None:
        checkpoint = checkpoint_create(project=project, run_id=run.pk, label="before send", state=checkpoint_state)
    approval_request_create(project=project, run_id=run.pk, tool="send_invoice", arguments={"n": 1},
                            idempotency_key=f"k-{run.pk}", actor=Actor.for_agent("writer"), executor="agent")
    approve(Run.objects.get(pk=run.pk), reviewer(project, f"rita-{policy}"))
    assert resume_run_by_id(run.pk, owner="worker:test:1") == "done"
    snapshot = ContextSnapshot.objects.get(run=run)
    traced = RunEvent.objects.get(run=run, kind="resume.sparse_context").data
    return snapshot, traced, checkpoint


def test_a_none_session_resumes_with_only_its_own_runs_items_and_no_memory(project) -> None:  # type: ignore[no-untyped-def]
    snapshot, traced, _ = _resumed(project, "none")
    assert [i["text"] for i in snapshot.content["items"]] == ["this run's turn"]
    assert snapshot.memory_ids == [] and snapshot.budget_chars == 300
    assert [e["rule"] for e in snapshot.manifest["entries"]] == ["current_items"]
    assert (traced["policy"], traced["role"], traced["snapshot"]) == ("none", "writer", snapshot.pk)


def test_a_checkpoint_only_session_resumes_with_the_checkpoints_state_and_no_transcript(project) -> None:  # type: ignore[no-untyped-def]
    snapshot, traced, checkpoint = _resumed(project, "checkpoint_only", checkpoint_state={"scene": 4})
    assert snapshot.content["items"] == [] and snapshot.content["checkpoint"]["state"] == {"scene": 4}
    # The run's latest checkpoint: the one its approval request wrote as it started waiting (issue 16, section 5),
    # a child of the agent's with its state.
    waiting = Checkpoint.objects.get(parent=checkpoint)
    assert [(e["kind"], e["id"]) for e in snapshot.manifest["entries"]] == [("checkpoint", waiting.pk)]
    assert traced["policy"] == "checkpoint_only"


def test_a_session_policy_resumes_with_the_sessions_items(project) -> None:  # type: ignore[no-untyped-def]
    snapshot, _, _ = _resumed(project, "session")
    assert [i["text"] for i in snapshot.content["items"]] == ["earlier turn", "this run's turn"]
    assert snapshot.memory_ids == []  # kept, never injected unasked
