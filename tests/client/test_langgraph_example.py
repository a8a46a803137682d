"""examples/langgraph_checkpointer.py against a live server and a real resume worker: the graph stops at its
high-risk step, a reviewer approves with edited arguments through the API, the worker binds the decision, and
the example's graph resumes with it and finishes; a rejection is bound and resumed the same way."""

import ast
import os
import subprocess
import sys
import time
from typing import Any

import pytest
from harness_client import HarnessClient

from runs_app.models import ApprovalRequest, Checkpoint, Run
from tests.client.conftest import Live
from tests.subprocesses import ROOT
from tests.worker.conftest import broker, fake_service, workers  # noqa: F401 - the real worker's fixtures
from tests.worker.support import Workers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]
EXAMPLE = ROOT / "examples" / "langgraph_checkpointer.py"


def _example(live: Live, thread: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HARNESS_URL": live.url, "HARNESS_TOKEN": live.agent_token}
    return subprocess.Popen([sys.executable, str(EXAMPLE), "--thread", thread, "--timeout", "60"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _pending_approval(live: Live, example: subprocess.Popen[str]) -> ApprovalRequest:
    deadline = time.monotonic() + 60
    while (approval := ApprovalRequest.objects.filter(project=live.project, status="pending").first()) is None:
        assert example.poll() is None, example.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the example never asked for an approval"
        time.sleep(0.1)
    return approval


def published(out: str) -> Any:
    line = next(line for line in out.splitlines() if line.startswith("published: "))
    return ast.literal_eval(line.removeprefix("published: "))


def _decide(live: Live, approval_id: int, **decision: Any) -> None:
    with live.client(live.reviewer_token) as reviewer:
        version = reviewer.get_approval(approval_id).version  # the version it read: a decision is a compare-and-set
        reviewer.decide_approval(approval_id, **decision, expected_version=version)


def test_the_example_waits_for_the_reviewer_and_resumes_with_the_decision(
    live: Live, hc: HarnessClient, workers: Workers,  # noqa: F811
) -> None:
    workers.start("w")
    example = _example(live, "chapter-3")
    try:
        approval = _pending_approval(live, example)
        assert (approval.tool, approval.arguments, approval.executor) == (
            "publish_chapter", {"chapter": 3, "title": "The Lighthouse Keeper"}, "agent")
        run = Run.objects.get(project=live.project, ref="chapter-3")
        assert approval.run_id == run.pk and run.status == "waiting_approval"
        _decide(live, approval.id, decision="approve", reason="with a shorter title",
                edited_arguments={"chapter": 3, "title": "Keeper"})
        out, err = example.communicate(timeout=90)
    finally:
        if example.poll() is None:
            example.kill()
    assert example.returncode == 0, err
    assert f"/approvals/{approval.id}/" in out and "decided: approved" in out
    assert published(out) == {"status": "published", "by": "client-reviewer", "chapter": 3, "title": "Keeper"}
    # The graph ran the approved tool itself and said so: the console does not leave it "waiting for the agent".
    assert "reported: approved_ran" in out
    assert ApprovalRequest.objects.get(pk=approval.id).outcome == "ran"
    # The thread's history is in the console: its lineage ends with the published state.
    newest = hc.get_thread_checkpoint(thread_id="chapter-3")
    assert newest is not None and newest.channel_values["published"]["title"] == "Keeper"
    assert Checkpoint.objects.filter(run=run).exclude(external_id="").count() >= 5
    assert Run.objects.get(pk=run.pk).status == "running"

    # The same thread again: finished already, nothing asked twice.
    again = _example(live, "chapter-3")
    out, _ = again.communicate(timeout=60)
    assert "finished already" in out and ApprovalRequest.objects.filter(run=run).count() == 1

    # The resume worker checkpointed the run too (its parent: the thread's checkpoint at the interrupt); deleting
    # the thread takes that one with the thread's, and leaves the run with its approval.
    worker_checkpoints = Checkpoint.objects.filter(run=run, external_id="")
    assert worker_checkpoints.exists() and all(c.parent.external_id for c in worker_checkpoints)
    deleted = hc.delete_thread("chapter-3")
    assert deleted.checkpoints >= 6 and not Checkpoint.objects.filter(run=run).exists()
    assert ApprovalRequest.objects.filter(run=run).count() == 1


def test_a_rejection_resumes_the_graph_too(live: Live, workers: Workers) -> None:  # noqa: F811
    workers.start("w")
    example = _example(live, "chapter-4")
    try:
        approval = _pending_approval(live, example)
        _decide(live, approval.id, decision="reject", reason="not this week")
        out, err = example.communicate(timeout=90)
    finally:
        if example.poll() is None:
            example.kill()
    assert example.returncode == 0, err
    assert "decided: rejected" in out
    assert published(out) == {"status": "rejected", "reason": "not this week"}
