"""Acting on a run from the console (issue 17, part 3): each action's preview, then the action as previewed,
by role, bound to the version shown, audited and logged on the run."""

import datetime as dt
import html
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from harness.actors import Actor
from harness.audit import audit_chain_verify
from harness.models import AuditEntry
from runs_app.models import ApprovalRequest, ApprovalStatus, Run, RunEvent, RunStatus, Task
from runs_app.services import (
    approval_decide,
    approval_request_create,
    checkpoint_create,
    run_claim,
    run_transition,
    task_save,
)
from runs_app.signals import resume_requested
from tests import factories
from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db
XSS = "<script>alert('x')</script>"


@pytest.fixture
def queued() -> Any:
    """The resumes the console asks for (runs_app.signals.resume_requested: the worker listens)."""
    runs: list[int] = []

    def listen(sender: Any, run_id: int, **kwargs: Any) -> None:
        runs.append(run_id)

    resume_requested.connect(listen, dispatch_uid="test-run-actions")
    yield runs
    resume_requested.disconnect(dispatch_uid="test-run-actions")


def _blocked(project, *, step: str = "capability", **run_fields: Any) -> Run:  # type: ignore[no-untyped-def]
    run = factories.make_run(project, ref=f"R-blocked-{Run.objects.count()}", **run_fields)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return run_transition(project=project, run_id=run.pk, to=RunStatus.BLOCKED, expected_version=None,
                          blocked_step=step, error={"step": step, "reason": "the adapter is missing"})


def _events(run: Run, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in RunEvent.objects.filter(run=run, kind=kind).order_by("seq")]


def _audits(run: Run, action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(target_type="run", target_id=str(run.pk), action=action))


@pytest.fixture
def act(django_capture_on_commit_callbacks) -> Any:  # type: ignore[no-untyped-def]
    """POST an action, running what it queues after commit (the resume's message) as a real commit would."""
    def post(client: Client, name: str, obj_id: int, **data: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(reverse(f"runs:{name}", args=[obj_id]), data)
    return post


def test_cancel_previews_the_move_and_does_it_with_the_reason_audited(act, scene: Scene, operator_client,  # type: ignore[no-untyped-def]
                                                                     queued) -> None:
    run = scene.run  # waiting for approval of git.push; its agent holds the lease
    run_claim(project=run.project_id, run_id=run.pk, owner="agent-coder", lease_seconds=60)
    run.refresh_from_db()
    version = run.version
    page = operator_client.get(reverse("runs:run_cancel", args=[run.pk])).content.decode()
    assert "The run goes waiting_approval -&gt; cancelled." in page
    assert "Its lease, held by agent-coder, is released" in page
    assert f"Its pending approval #{scene.approval.pk} goes pending -&gt; cancelled." in page
    assert "No resume is queued: nothing runs after this." in page

    response = act(operator_client, "run_cancel", run.pk, version=run.version, reason="superseded by R-102")
    assert response.status_code == 302 and response["Location"] == reverse("runs:run_inspector", args=[run.pk])
    run.refresh_from_db()
    assert (run.status, run.version, run.lease_owner) == (RunStatus.CANCELLED, version + 1, "")
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.CANCELLED
    [event] = _events(run, "operator.cancel")
    assert (event["by"], event["reason"], event["from"]) == ("user:otto", "superseded by R-102", "waiting_approval")
    [entry] = _audits(run, "run.cancelled")
    assert entry.actor == "user:otto" and entry.data["reason"] == "superseded by R-102"
    assert entry.data["plan"][0] == "The run goes waiting_approval -> cancelled."
    assert not any(report.breaks for report in audit_chain_verify(project_ids=[run.project_id]))
    assert queued == []  # a cancelled run is not resumed


def test_a_finished_run_offers_no_action_and_refuses_a_cancel(act, scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    run = factories.make_run(scene.project, ref="R-done")
    run = run_transition(project=scene.project, run_id=run.pk, to=RunStatus.CANCELLED, expected_version=None)
    page = operator_client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()
    assert 'id="run-actions"' not in page
    assert "Refused: the run is cancelled already" in operator_client.get(
        reverse("runs:run_cancel", args=[run.pk])).content.decode()
    response = act(operator_client, "run_cancel", run.pk, version=run.version, reason="again")
    assert response.status_code == 409
    assert not _audits(run, "run.cancelled")


def test_retry_of_a_blocked_worker_plan_moves_it_to_running_and_queues_the_resume(act,   # type: ignore[no-untyped-def]
    project, operator_client, queued
) -> None:
    task = factories.make_task(project, plan=["outline", "draft", "summarize"])  # the demo's handlers
    run = _blocked(project, step="continue_from_cursor", task_id=task.pk)
    Run.objects.filter(pk=run.pk).update(current_node="draft")
    run.refresh_from_db()
    page = operator_client.get(reverse("runs:run_retry", args=[run.pk])).content.decode()
    assert "The run goes blocked -&gt; running." in page
    assert "A resume is queued: the worker resumes from the node draft (blocked at continue_from_cursor)." in page

    assert act(operator_client, "run_retry", run.pk, version=run.version, reason="fixed the model key"
                 ).status_code == 302
    run.refresh_from_db()
    assert (run.status, run.blocked_step) == (RunStatus.RUNNING, "")
    assert _events(run, "operator.retry")[0]["blocked_step"] == "continue_from_cursor"
    assert _audits(run, "run.running")[0].data["action"] == "retry"
    assert queued == [run.pk]


def test_retry_of_an_agents_blocked_run_hands_it_back_and_queues_nothing(act, project, operator_client,  # type: ignore[no-untyped-def]
                                                                         queued) -> None:
    run = _blocked(project, step="agent_lease_expired")
    page = operator_client.get(reverse("runs:run_retry", args=[run.pk])).content.decode()
    assert "No resume is queued: the run&#x27;s agent continues it from its cursor." in page
    assert act(operator_client, "run_retry", run.pk, version=run.version, reason="agent is back").status_code == 302
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING and queued == []


def test_retry_of_a_blocked_approval_resume_keeps_it_blocked_marked_for_the_worker(act,   # type: ignore[no-untyped-def]
    scene: Scene, operator_client, reviewer, queued
) -> None:
    approval_decide(project=scene.project, approval_id=scene.approval.pk, actor=Actor.for_user(reviewer),
                    decision="approve")
    queued.clear()
    run = run_transition(project=scene.project, run_id=scene.run.pk, to=RunStatus.BLOCKED, expected_version=None,
                         blocked_step="capability", error={"reason": "no adapter for git.push"})
    page = operator_client.get(reverse("runs:run_retry", args=[run.pk])).content.decode()
    assert "The run stays blocked while the queued resume checks everything again" in page
    assert f"approval #{scene.approval.pk} (approved)" in page
    assert act(operator_client, "run_retry", run.pk, version=run.version, reason="adapter installed"
                 ).status_code == 302
    run.refresh_from_db()
    assert run.status == RunStatus.BLOCKED and run.version == scene.run.version + 2
    assert run.error["retry"]["reason"] == "adapter installed" and run.error["reason"] == "no adapter for git.push"
    assert queued == [run.pk]
    # Should the run go on and block again (here with no error given), the old retry does not resume it.
    run_transition(project=scene.project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    run = run_transition(project=scene.project, run_id=run.pk, to=RunStatus.BLOCKED, expected_version=None)
    assert "retry" not in run.error and run.error["reason"] == "no adapter for git.push"


def test_fail_records_the_reason_in_the_runs_error(act, project, operator_client) -> None:  # type: ignore[no-untyped-def]
    run = _blocked(project)
    preview = operator_client.get(reverse("runs:run_fail", args=[run.pk])).content.decode()
    assert "The run goes blocked -&gt; failed." in preview and "Its lease" not in preview
    assert act(operator_client, "run_fail", run.pk, version=run.version, reason="cannot be fixed").status_code == 302
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.error == {"by": "user:otto", "reason": "cannot be fixed"}
    assert _audits(run, "run.failed")


def test_retry_and_fail_are_refused_for_a_run_that_is_not_blocked(act, scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    for name in ("run_retry", "run_fail", "run_repair"):
        page = operator_client.get(reverse(f"runs:{name}", args=[scene.run.pk])).content.decode()
        assert "Refused: only a blocked run" in page and "confirm-" not in page
        assert act(operator_client, name, scene.run.pk, version=scene.run.version, reason="x").status_code == 409
    assert Run.objects.get(pk=scene.run.pk).status == RunStatus.WAITING_APPROVAL


def test_repair_routes_a_blocked_run_to_the_node_its_plan_declares(act, project, operator_client, settings,  # type: ignore[no-untyped-def]
                                                                 queued) -> None:
    settings.HARNESS_NODE_HANDLERS = {**settings.HARNESS_NODE_HANDLERS, "revise": "tests.worker.tools.revise"}
    task = factories.make_task(project, plan=["outline", "draft", "summarize"])
    task = task_save(project=project, task_id=task.pk, expected_version=task.version,
                     completed_nodes=["outline", "draft"])
    run = _blocked(project, step="continue_from_cursor", task_id=task.pk)
    checkpoint_create(project=project, run_id=run.pk, label="gate", pending_gate={"on_reject": "revise"})
    Run.objects.filter(pk=run.pk).update(current_node="summarize")
    run = Run.objects.get(pk=run.pk)
    page = operator_client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()
    assert 'id="act-repair"' in page
    page = operator_client.get(reverse("runs:run_repair", args=[run.pk])).content.decode()
    assert "The repair node revise goes into the task&#x27;s plan before the blocked step." in page
    assert act(operator_client, "run_repair", run.pk, version=run.version, reason="summary too long"
                 ).status_code == 302
    run.refresh_from_db()
    assert (run.status, run.current_node, run.cursor["repairs"]) == (RunStatus.RUNNING, "revise", 1)
    assert Task.objects.get(pk=task.pk).plan == ["outline", "draft", "revise", "summarize"]
    assert _events(run, "operator.repair")[0]["repair_node"] == "revise" and queued == [run.pk]


def test_repair_is_refused_where_the_plan_declares_none(project, operator_client) -> None:  # type: ignore[no-untyped-def]
    run = _blocked(project)
    page = operator_client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()
    assert 'id="act-retry"' in page and 'id="act-fail"' in page and 'id="act-repair"' not in page
    assert "declares no repair node" in operator_client.get(reverse("runs:run_repair", args=[run.pk])).content.decode()


def test_repair_is_refused_while_a_gate_the_worker_does_not_drive_is_ahead(project, operator_client,  # type: ignore[no-untyped-def]
                                                                          settings) -> None:
    settings.HARNESS_NODE_HANDLERS = {**settings.HARNESS_NODE_HANDLERS, "revise": "tests.worker.tools.revise"}
    task = factories.make_task(project, plan=["outline", "draft", "publish", "summarize"])
    run = _blocked(project, task_id=task.pk)
    checkpoint_create(project=project, run_id=run.pk, label="gate", pending_gate={"on_reject": "revise"})
    page = operator_client.get(reverse("runs:run_repair", args=[run.pk])).content.decode()
    assert "a gate waits for an approval" in page and "confirm-repair" not in page


def test_requeue_is_offered_only_when_the_resume_is_due(act, scene: Scene, operator_client, reviewer,  # type: ignore[no-untyped-def]
                                                      queued) -> None:
    run = scene.run
    assert "Refused: the run&#x27;s resume is not due" in operator_client.get(
        reverse("runs:run_requeue", args=[run.pk])).content.decode()
    assert act(operator_client, "run_requeue", run.pk, version=run.version, reason="stuck?").status_code == 409

    approval_decide(project=scene.project, approval_id=scene.approval.pk, actor=Actor.for_user(reviewer),
                    decision="approve")
    queued.clear()  # the decision's own message, "lost"
    run.refresh_from_db()
    assert 'id="act-requeue"' in operator_client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()
    page = operator_client.get(reverse("runs:run_requeue", args=[run.pk])).content.decode()
    assert "The run stays waiting_approval." in page and "the worker resumes from the approval&#x27;s decision" in page
    assert act(operator_client, "run_requeue", run.pk, version=run.version, reason="message lost").status_code == 302
    assert queued == [run.pk] and _events(run, "operator.requeue")[0]["reason"] == "message lost"
    assert Run.objects.get(pk=run.pk).status == RunStatus.WAITING_APPROVAL


def test_a_run_that_changed_since_the_preview_is_refused_not_acted_on(act, project, operator_client) -> None:  # type: ignore[no-untyped-def]
    run = _blocked(project)
    shown = run.version
    assert f'name="version" value="{shown}"' in operator_client.get(
        reverse("runs:run_fail", args=[run.pk])).content.decode()
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)  # someone else
    response = act(operator_client, "run_fail", run.pk, version=shown, reason="stale")
    body = response.content.decode()
    assert response.status_code == 409 and "The run changed since the preview" in body
    assert "Refused: only a blocked run can be failed" in body  # the preview as the run is now
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING and not _audits(run, "run.failed")


def test_only_operators_act_members_see_no_buttons_and_get_403(act, scene: Scene, project, client_for,  # type: ignore[no-untyped-def]
                                                               reviewer_client, operator_client) -> None:
    run = _blocked(project)
    member = client_for(factories.make_user("mia", projects=[project]))
    for client in (member, reviewer_client):
        page = client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()
        assert 'id="run-actions"' not in page and "act-retry" not in page
        for name in ("run_cancel", "run_retry", "run_fail", "run_requeue", "run_repair"):
            assert client.get(reverse(f"runs:{name}", args=[run.pk])).status_code == 403
            assert act(client, name, run.pk, version=run.version, reason="x").status_code == 403
    assert Run.objects.get(pk=run.pk).status == RunStatus.BLOCKED
    assert 'id="act-retry"' in operator_client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()


def test_another_projects_run_is_a_404(act, other_scene: Scene, operator_client) -> None:  # type: ignore[no-untyped-def]
    run = other_scene.run
    assert operator_client.get(reverse("runs:run_cancel", args=[run.pk])).status_code == 404
    assert act(operator_client, "run_cancel", run.pk, version=run.version, reason="x").status_code == 404
    assert Run.objects.get(pk=run.pk).status == RunStatus.WAITING_APPROVAL


def test_a_post_without_the_csrf_token_is_refused(project, operator) -> None:  # type: ignore[no-untyped-def]
    run = _blocked(project)
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    response = client.post(reverse("runs:run_fail", args=[run.pk]), {"version": run.version, "reason": "x"})
    assert response.status_code == 403
    assert Run.objects.get(pk=run.pk).status == RunStatus.BLOCKED


def test_a_reason_is_required_and_a_script_in_it_executes_nothing(act, project, operator_client) -> None:  # type: ignore[no-untyped-def]
    run = _blocked(project)
    response = act(operator_client, "run_fail", run.pk, version=run.version, reason="   ")
    assert response.status_code == 400 and "Say why" in response.content.decode()
    assert Run.objects.get(pk=run.pk).status == RunStatus.BLOCKED

    assert act(operator_client, "run_fail", run.pk, version=run.version, reason=XSS).status_code == 302
    page = operator_client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()
    assert XSS not in page and html.escape(XSS) in page  # in the error and the events, escaped
    # A refused form shows the typed reason again, escaped too.
    other = _blocked(project)
    stale = act(operator_client, "run_cancel", other.pk, version=other.version - 1, reason=XSS).content.decode()
    assert XSS not in stale and html.escape(XSS) in stale


def test_the_preview_is_an_htmx_panel(project, operator_client) -> None:  # type: ignore[no-untyped-def]
    run = _blocked(project)
    page = operator_client.get(reverse("runs:run_inspector", args=[run.pk])).content.decode()
    assert f'hx-get="{reverse("runs:run_retry", args=[run.pk])}?part=action-panel"' in page
    assert ">Cancel the run</a>" in page and ">Fail the run</a>" in page
    panel = operator_client.get(reverse("runs:run_retry", args=[run.pk]) + "?part=action-panel",
                                HTTP_HX_REQUEST="true").content.decode()
    assert panel.lstrip().startswith('<section class="card action-panel" id="action-panel"') and "<html" not in panel
    response = operator_client.post(reverse("runs:run_retry", args=[run.pk]), {"version": run.version, "reason": "ok"},
                                    HTTP_HX_REQUEST="true")
    assert response["HX-Redirect"] == reverse("runs:run_inspector", args=[run.pk])


# --- pending approvals ---------------------------------------------------------------------


def _expiring(scene: Scene, hours: int = 2) -> ApprovalRequest:
    run = factories.make_run(scene.project, ref="R-exp")
    run_transition(project=scene.project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=scene.project, run_id=run.pk, tool="deploy", arguments={"env": "prod"},
                                   idempotency_key="deploy-1", actor=Actor.for_agent("coder"),
                                   expires_at=timezone.now() + dt.timedelta(hours=hours))


def test_a_reviewer_cancels_a_pending_approval_and_the_run_is_resumed_into_its_check(act,   # type: ignore[no-untyped-def]
    scene: Scene, reviewer_client, queued
) -> None:
    approval = scene.approval
    page = reviewer_client.get(reverse("runs:approval_cancel", args=[approval.pk])).content.decode()
    assert "The approval goes pending -&gt; cancelled" in page
    assert act(reviewer_client, "approval_cancel", approval.pk, version=approval.version,
                 reason="wrong branch").status_code == 302
    approval.refresh_from_db()
    assert (approval.status, approval.decision_reason) == (ApprovalStatus.CANCELLED, "wrong branch")
    assert AuditEntry.objects.filter(action="approval.cancelled", target_id=str(approval.pk),
                                     actor="user:rita").exists()
    assert _events(scene.run, "approval.cancelled")[0]["reason"] == "wrong branch"
    assert queued == [scene.run.pk]


def test_a_reviewer_extends_an_approval_within_the_maximum(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    approval = _expiring(scene)
    before = approval.expires_at
    url = reverse("runs:approval_extend", args=[approval.pk])
    assert "The approval stays pending; it expires at" in reviewer_client.get(url + "?hours=24").content.decode()
    assert "an approval waits at most 7 days" in reviewer_client.get(url + "?hours=168").content.decode()
    assert reviewer_client.post(url, {"version": approval.version, "hours": 168, "reason": "x"}).status_code == 409

    assert reviewer_client.post(url, {"version": approval.version, "hours": 24, "reason": "owner on leave"}
                                ).status_code == 302
    approval.refresh_from_db()
    assert approval.status == ApprovalStatus.PENDING and approval.expires_at == before + dt.timedelta(hours=24)
    entry = AuditEntry.objects.get(action="approval.extended", target_id=str(approval.pk))
    assert entry.data["hours"] == 24 and entry.data["reason"] == "owner on leave"


def test_approval_actions_are_the_reviewers_and_bound_to_the_version(act, scene: Scene, operator_client,  # type: ignore[no-untyped-def]
                                                                   reviewer_client) -> None:
    approval = _expiring(scene)
    for name in ("approval_cancel", "approval_extend"):
        assert operator_client.get(reverse(f"runs:{name}", args=[approval.pk])).status_code == 403
        assert act(operator_client, name, approval.pk, version=approval.version, hours=1, reason="x"
                     ).status_code == 403
    stale = act(reviewer_client, "approval_cancel", approval.pk, version=approval.version + 1, reason="x")
    assert stale.status_code == 409 and "changed since the preview" in stale.content.decode()
    assert ApprovalRequest.objects.get(pk=approval.pk).status == ApprovalStatus.PENDING
    inspector = reviewer_client.get(reverse("runs:run_inspector", args=[approval.run_id])).content.decode()
    assert f'id="cancel-approval-{approval.pk}"' in inspector and f'id="extend-approval-{approval.pk}"' in inspector


def test_the_admins_run_actions_go_through_the_same_service(project, admin_client) -> None:  # type: ignore[no-untyped-def]
    run = _blocked(project)
    response = admin_client.post("/admin/runs_app/run/", {"action": "move_to_failed", "_selected_action": [run.pk]})
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    [entry] = _audits(run, "run.failed")
    assert entry.data["plan"][0] == "The run goes blocked -> failed." and entry.data["reason"].startswith("admin")
