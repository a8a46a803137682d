"""A task's DurableTaskState (seed 001): `pending_approvals` and `effect_records` are derived from the real approval
and effect rows of its runs, in the API and on the task page; a client can no longer write them (issue 30)."""

import pytest

from demo.scenario import demo_scenario_create
from runs_app.models import ApprovalRequest, RunStatus, Task
from runs_app.services import effect_intend, run_transition
from tests import factories
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene(project):  # type: ignore[no-untyped-def]
    run = demo_scenario_create(project=project)
    approval = ApprovalRequest.objects.get(pk=run.pending_approval_id)
    # R-101 waits for its approval and so may not declare an action: a second, running run of the task does.
    acting = factories.make_run(project, run.session, task_id=run.task_id)
    run_transition(project=project, run_id=acting.pk, to=RunStatus.RUNNING, expected_version=acting.version)
    effect, _ = effect_intend(project=project, idempotency_key="note-1", tool="note", arguments={"n": 1},
                              run_id=acting.pk)
    return run, approval, effect, ApiClient(factories.make_agent_token(project, name="writer")[1])


def test_the_task_detail_derives_pending_approvals_and_effect_records_from_the_rows(scene) -> None:  # type: ignore[no-untyped-def]
    run, approval, effect, agent = scene
    body = agent.get(f"/api/v1/tasks/{run.task_id}/").json()
    assert [a["id"] for a in body["pending_approvals"]] == [approval.pk]
    assert body["pending_approvals"][0]["action_fingerprint"] == approval.action_fingerprint
    assert body["pending_approvals"][0]["run"] == run.pk
    assert [(e["id"], e["idempotency_key"], e["status"]) for e in body["effect_records"]] == [
        (effect.pk, "note-1", "intended")]
    listed = agent.get("/api/v1/tasks/").json()["results"]
    assert next(t for t in listed if t["id"] == run.task_id)["effect_records"] == body["effect_records"]


@pytest.mark.parametrize("field", ["effect_records", "pending_approvals"])
def test_a_client_cannot_write_them(scene, field: str) -> None:  # type: ignore[no-untyped-def]
    run, _, _, agent = scene
    task = Task.objects.get(pk=run.task_id)
    saved = agent.patch(f"/api/v1/tasks/{task.pk}/", {"expected_version": task.version, field: [{"forged": 1}]})
    assert saved.status_code == 400 and saved.json()["code"] == "unknown_field"
    created = agent.post("/api/v1/tasks/", {"objective": "x", field: []})
    assert created.status_code == 400 and created.json()["code"] == "unknown_field"
    assert Task.objects.get(pk=task.pk).version == task.version


def test_the_task_page_shows_the_derived_state(scene, client) -> None:  # type: ignore[no-untyped-def]
    run, approval, _, _ = scene
    client.force_login(factories.make_user("olive", role="operator", projects=[run.project]))
    page = client.get(f"/tasks/{run.task_id}/").content.decode()
    assert "note-1" in page and approval.action_fingerprint in page
