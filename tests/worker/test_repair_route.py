"""Issue 16, section 5: a rejected gate of a worker-driven plan routes to the repair node it declared, and the
repaired action is asked for again, instead of the run always ending `failed`."""

from collections.abc import Iterator

import pytest
from django.test import override_settings

from demo.scenario import demo_scenario_create
from harness.actors import Actor
from runs_app.models import ApprovalRequest, ApprovalStatus, ExternalEffect, NodeExecution, RunStatus, Task
from runs_app.services import approval_decide
from tests import factories
from tests.worker.support import FakeService, approve, events, reviewer
from worker.pipeline import resume_run_by_id

OWNER = "worker:test:1"
pytestmark = pytest.mark.django_db


@pytest.fixture
def service() -> Iterator[FakeService]:
    fake = FakeService().start()
    yield fake
    fake.stop()


def test_a_rejection_routes_to_the_declared_repair_node_and_the_repaired_action_is_asked_for_again(  # type: ignore[no-untyped-def]
    service, settings
) -> None:
    handlers = {**settings.HARNESS_NODE_HANDLERS, "revise": "tests.worker.tools.revise"}
    adapters = {"publish_chapter": {"kind": "http", "url": service.url, "honours_idempotency_key": True}}
    run = demo_scenario_create(project=factories.make_project("novelforge"), repair_node="revise")
    rita = reviewer(run.project)
    first = ApprovalRequest.objects.get(run=run)
    approval_decide(project=run.project_id, approval_id=first.pk, actor=Actor.for_user(rita), decision="reject",
                    reason="the title gives the ending away")

    with override_settings(HARNESS_NODE_HANDLERS=handlers, HARNESS_TOOL_ADAPTERS=adapters):
        assert resume_run_by_id(run.pk, owner=OWNER) == "done"

        run.refresh_from_db()
        assert (run.status, run.current_node, run.lease_owner, run.cursor.get("repairs")) == (
            RunStatus.WAITING_APPROVAL, "publish", "", 1)
        task = Task.objects.get(pk=run.task_id)
        assert task.plan == ["outline", "draft", "revise", "publish", "summarize"] and task.plan_version == 2
        assert task.completed_nodes == ["outline", "draft", "revise"]
        assert "gives the ending away" in task.artifact_refs["revise"]["content"]
        again = ApprovalRequest.objects.get(run=run, status=ApprovalStatus.PENDING)
        assert again.arguments == {"chapter": 3, "title": "The Keeper's Light"}
        assert again.idempotency_key == f"{first.idempotency_key}:repair-1" and "ending away" in again.reason
        assert [e.data["node"] for e in events(run.pk, "repair.routed")] == ["revise"]
        assert not service.requests and not ExternalEffect.objects.filter(run=run).exists()

        approve(run, rita)
        assert resume_run_by_id(run.pk, owner=OWNER) == "done"

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert dict(service.requests) == {again.idempotency_key: 1}
    assert Task.objects.get(pk=run.task_id).completed_nodes == ["outline", "draft", "revise", "publish", "summarize"]
    publish = list(NodeExecution.objects.filter(run=run, node="publish").values_list("status", flat=True))
    assert publish == ["failed", "succeeded"]


def test_without_a_declared_repair_node_a_rejection_still_fails_the_plan(service) -> None:  # type: ignore[no-untyped-def]
    run = demo_scenario_create(project=factories.make_project("novelforge"))
    approval_decide(project=run.project_id, approval_id=run.pending_approval_id,
                    actor=Actor.for_user(reviewer(run.project)), decision="reject", reason="not now")
    assert resume_run_by_id(run.pk, owner=OWNER) == "done"
    run.refresh_from_db()
    assert (run.status, run.failure_category) == (RunStatus.FAILED, "semantic")
    assert "not now" in run.error["reason"] and not events(run.pk, "repair.routed")
