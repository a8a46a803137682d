"""A console fork can be run (issue 32): its page is titled by the run (not "Run run 6"), says it is a fork and what
will continue it, and offers that: "Run with the worker" (a worker plan: the resume is queued) or "Start and notify
the agent" (the run.status_changed webhook is recorded for the project's subscriptions). Operators only."""

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from harness.actors import Actor
from harness.models import Project
from notify_app.models import Webhook, WebhookDelivery
from runs_app.models import Run, RunStatus
from runs_app.services import checkpoint_create, checkpoint_fork
from runs_app.signals import resume_requested
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued() -> Any:
    runs: list[int] = []

    def listen(sender: Any, run_id: int, **kwargs: Any) -> None:
        runs.append(run_id)

    resume_requested.connect(listen, dispatch_uid="test-fork-continue")
    yield runs
    resume_requested.disconnect(dispatch_uid="test-fork-continue")


def _fork(project: Project, operator: Any, **run_fields: Any) -> Run:
    run = factories.make_run(project, factories.make_session(project), ref=f"R-src-{Run.objects.count()}",
                             active_agent="writer", **run_fields)
    source = checkpoint_create(project=project, run_id=run.pk, label="drafted", state={"title": "A"})
    return checkpoint_fork(project=project, checkpoint_id=source.pk, actor=Actor.of(operator), reason="try B",
                           state={"title": "B"}).run


def _start(client: Client, fork: Run, capture: Any) -> Any:
    with capture(execute=True):  # the resume is queued after commit
        return client.post(reverse("runs:run_start", args=[fork.pk]), {"reason": "go on", "version": fork.version})


def test_an_agents_fork_is_started_and_its_agent_told_by_webhook(project, operator, operator_client,  # type: ignore[no-untyped-def]
                                                                 reviewer_client, queued,
                                                                 django_capture_on_commit_callbacks) -> None:
    Webhook.objects.create(project=project, url="https://agent.example/hook", events=["run.status_changed"],
                           secret="s" * 32, created_by="test")
    fork = _fork(project, operator)
    page = operator_client.get(reverse("runs:run_inspector", args=[fork.pk])).content.decode()
    assert "Run run" not in page and f"<title>Run #{fork.pk} · writer · fork of run #" in page
    assert 'id="fork-origin"' in page and "try B" in page
    assert "Its agent continues it" in page and "Start and notify the agent (webhook)" in page

    assert _start(reviewer_client, fork, django_capture_on_commit_callbacks).status_code == 403
    assert Run.objects.get(pk=fork.pk).status == RunStatus.CREATED
    assert _start(operator_client, fork, django_capture_on_commit_callbacks).status_code == 302
    assert Run.objects.get(pk=fork.pk).status == RunStatus.RUNNING
    assert queued == []  # no worker plan: nothing queued, the agent continues it
    delivery = WebhookDelivery.objects.get(event="run.status_changed", payload__data__run_id=fork.pk)
    assert (delivery.url, delivery.payload["data"]["status"]) == ("https://agent.example/hook", "running")


def test_a_worker_plans_fork_runs_with_the_worker(project, operator, operator_client, queued,  # type: ignore[no-untyped-def]
                                                  django_capture_on_commit_callbacks) -> None:
    task = factories.make_task(project, plan=["outline", "draft", "summarize"])  # the demo's handlers
    fork = _fork(project, operator, task_id=task.pk)
    page = operator_client.get(reverse("runs:run_inspector", args=[fork.pk])).content.decode()
    assert "The worker continues it" in page and "Run with the worker" in page
    preview = operator_client.get(reverse("runs:run_start", args=[fork.pk])).content.decode()
    assert "A resume is queued" in preview
    assert _start(operator_client, fork, django_capture_on_commit_callbacks).status_code == 302
    assert Run.objects.get(pk=fork.pk).status == RunStatus.RUNNING and queued == [fork.pk]
