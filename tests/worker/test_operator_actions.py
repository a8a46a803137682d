"""An operator's retry and re-queue (runs_app.services.run_actions), carried out by real worker processes: the
retried resume checks everything again and runs the approved action once; a re-queued resume that was lost
is resumed without waiting for a recovery pass."""

import datetime as dt

import pytest
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from harness.actors import Actor
from runs_app.models import ApprovalRequest, EffectStatus, ExternalEffect, NodeExecution, Run, RunStatus, Task
from runs_app.resume_due import resume_due
from runs_app.services import checkpoint_create, run_act, run_transition, task_save
from tests import factories
from tests.worker.support import approve, demo_run, events, reviewer, wait_for, wait_status
from worker import tasks
from worker.pipeline import resume_run_by_id

pytestmark = pytest.mark.django_db(transaction=True)
OWNER = "worker:test:1"


def _operator_client(run: Run) -> Client:
    client = Client()
    client.force_login(factories.make_user("otto", role="operator", projects=[run.project]))
    return client


def _console(client: Client, name: str, run: Run, reason: str) -> None:
    run.refresh_from_db()
    assert "A resume is queued" in client.get(reverse(f"runs:{name}", args=[run.pk])).content.decode()
    response = client.post(reverse(f"runs:{name}", args=[run.pk]), {"version": run.version, "reason": reason})
    assert response.status_code == 302, response.content.decode()[-2000:]


@pytest.mark.worker
def test_a_run_blocked_for_a_missing_adapter_is_retried_after_the_fix_and_publishes_once(  # type: ignore[no-untyped-def]
    workers, fake_service
) -> None:
    run = demo_run()
    fixed = dict(workers.adapters)
    workers.adapters = {"publish_chapter": None}
    broken = workers.start("broken")
    approve(run, reviewer(run.project))
    blocked = wait_status(run.pk, RunStatus.BLOCKED)
    assert blocked.blocked_step == "capability" and not fake_service.requests
    broken.stop()

    workers.adapters = fixed  # the fix: the adapter is configured, a worker with it started
    workers.start("fixed")
    _console(_operator_client(run), "run_retry", run, "publish_chapter adapter deployed")

    done = wait_status(run.pk, RunStatus.SUCCEEDED)
    key = ApprovalRequest.objects.get(run=run).idempotency_key
    assert fake_service.requests[key] == 1
    assert ExternalEffect.objects.get(run=run).status == EffectStatus.CONSUMED
    assert done.status == RunStatus.SUCCEEDED and resume_due(Run.objects.filter(pk=run.pk)) == []
    [retry] = events(run.pk, "operator.retry")
    later = [e.kind for e in events(run.pk) if e.seq > retry.seq]
    assert "resume.capability" in later and "status.succeeded" in later


@pytest.mark.worker
def test_a_lost_resume_is_re_queued_by_an_operator_and_the_worker_takes_it(  # type: ignore[no-untyped-def]
    workers, fake_service, monkeypatch
) -> None:
    run = demo_run()
    # No recovery pass but the one at start: only the operator's re-queue can bring the run back. The start pass
    # must be over before the decision, or it finds the run due and resumes it itself. A quiet pass logs nothing
    # (harness.ops.logs), so it is given one thing to do that it logs: another project's approval past its deadline.
    decoy = demo_run(factories.make_project("decoy"))
    ApprovalRequest.objects.filter(run=decoy).update(expires_at=timezone.now() - dt.timedelta(minutes=1))
    worker = workers.start("a", extra_env={"HARNESS_RECOVERY_INTERVAL_SECONDS": "3600"})
    wait_for(lambda: "recovery: expired approvals" in worker.log(), what="the worker's first recovery pass")
    with monkeypatch.context() as lost:
        lost.setattr(tasks, "enqueue_resume", lambda run_id: None)  # the decision's message is lost
        approve(run, reviewer(run.project))
    assert resume_due(Run.objects.filter(pk=run.pk)) == [run.pk]
    assert Run.objects.get(pk=run.pk).status == RunStatus.WAITING_APPROVAL

    _console(_operator_client(run), "run_requeue", run, "the decision's message was lost")

    wait_status(run.pk, RunStatus.SUCCEEDED)
    assert fake_service.requests[ApprovalRequest.objects.get(run=run).idempotency_key] == 1


def test_a_retry_that_fails_again_stays_blocked_at_the_step_and_is_not_due_any_more(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(tasks, "enqueue_resume", lambda run_id: None)
    run = demo_run()
    approve(run, reviewer(run.project))
    with override_settings(HARNESS_TOOL_ADAPTERS={}):
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"
        run.refresh_from_db()
        operator = factories.make_user("otto", role="operator", projects=[run.project])
        run_act(project=run.project_id, run_id=run.pk, actor=Actor.for_user(operator), action="retry",
                reason="thought it was fixed", expected_version=run.version)
        assert resume_due(Run.objects.filter(pk=run.pk)) == [run.pk]
        assert resume_run_by_id(run.pk, owner=OWNER) == "blocked"  # still no adapter
    run.refresh_from_db()
    assert (run.status, run.blocked_step, run.lease_owner) == (RunStatus.BLOCKED, "capability", "")
    assert "retry" not in run.error and resume_due(Run.objects.filter(pk=run.pk)) == []
    assert not ExternalEffect.objects.filter(run=run).exists()


def test_a_run_routed_to_its_repair_node_from_the_console_is_driven_through_it_by_the_worker(  # type: ignore[no-untyped-def]
    monkeypatch, settings
) -> None:
    monkeypatch.setattr(tasks, "enqueue_resume", lambda run_id: None)
    settings.HARNESS_NODE_HANDLERS = {**settings.HARNESS_NODE_HANDLERS, "recheck": "demo.nodes.outline"}
    project = factories.make_project("acme")
    task = factories.make_task(project, plan=["outline", "draft", "summarize"])
    task = task_save(project=project, task_id=task.pk, expected_version=task.version,
                     completed_nodes=["outline", "draft"])
    run = factories.make_run(project, task_id=task.pk)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None,
                   updates={"current_node": "summarize"})
    checkpoint_create(project=project, run_id=run.pk, label="gate", pending_gate={"on_reject": "recheck"})
    run = run_transition(project=project, run_id=run.pk, to=RunStatus.BLOCKED, expected_version=None,
                         blocked_step="continue_from_cursor", error={"reason": "the summary is wrong"})
    operator = factories.make_user("otto", role="operator", projects=[project])
    run_act(project=project, run_id=run.pk, actor=Actor.for_user(operator), action="repair",
            reason="check the outline again", expected_version=run.version)
    assert resume_due(Run.objects.filter(pk=run.pk)) == [run.pk]  # a lost message: the recovery pass finds it

    assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    done = Task.objects.get(pk=task.pk)
    assert done.plan == ["outline", "draft", "recheck", "summarize"]
    assert done.completed_nodes == ["outline", "draft", "recheck", "summarize"]
    ran = list(NodeExecution.objects.filter(run=run).order_by("pk").values_list("node", "status"))
    assert ran == [("recheck", "succeeded"), ("summarize", "succeeded")]
