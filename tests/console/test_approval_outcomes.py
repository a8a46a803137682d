"""Honest outcomes and what changed (issue 32, parts 2 and 3): the checklist names only the steps of the approval's
executor; an approval the agent runs itself is "approved, waiting for the agent" until the agent reports it ran or
not (API), and every part of the page says so; the reviewer's edits are a key-by-key diff on the page, in the audit
entry and in the approval.decided webhook."""

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from harness.actors import Actor
from harness.models import AuditEntry, Project
from notify_app.models import WebhookDelivery
from notify_app.services import webhook_register
from runs_app.models import ApprovalRequest, RunEvent, RunStatus
from runs_app.resume import RESUME_CHECKS, resume_checks
from runs_app.services import approval_decide, approval_request_create, run_transition
from tests import factories
from tests.api.conftest import ApiClient

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
ASKED = {"chapter": 3, "meta": {"title": "Three", "tags": ["draft"]}}
EDITED = {"chapter": 4, "meta": {"title": "Three", "tags": ["draft", "final"]}, "colour": "red"}


def ask(project: Project, *, executor: str, ref: str = "R-1") -> ApprovalRequest:
    run = factories.make_run(project, factories.make_session(project, ref=f"S-{ref}"), ref=ref, active_agent="sdk")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool="publish_chapter", arguments=ASKED,
                                   idempotency_key=f"pub-{ref}", actor=Actor.for_agent("sdk"), executor=executor)


@pytest.fixture
def rita(project: Project) -> Any:
    return factories.make_user("rita", role="reviewer", projects=[project])


@pytest.fixture
def browser(rita: Any) -> Client:
    client = Client()
    client.force_login(rita)
    return client


@pytest.fixture
def agent(project: Project) -> ApiClient:
    return ApiClient(factories.make_agent_token(project, name="sdk")[1])


def page(client: Client, approval: ApprovalRequest, **extra: Any) -> str:
    response = client.get(reverse("runs:approval_detail", args=[approval.pk]), **extra)
    assert response.status_code == 200
    return response.content.decode()


def steps_listed(body: str) -> list[str]:
    return re.findall(r'<li data-step="([a-z_]+)">', body)


def test_the_checklist_names_only_the_steps_of_the_executor(project: Project, browser: Client) -> None:
    agents = resume_checks("agent")
    assert [key for key, _ in agents] == ["load", "compatibility", "authority_lease", "sparse_context",
                                          "artifact_fingerprints", "approval_preconditions", "argument_schema",
                                          "bind_result",
                                          "continue", "checkpoint"]
    assert not any("Execute" in label for _, label in agents)
    assert resume_checks("worker") == RESUME_CHECKS
    assert steps_listed(page(browser, ask(project, executor="agent"))) == [key for key, _ in agents]
    assert steps_listed(page(browser, ask(project, executor="worker", ref="R-2"))) == [k for k, _ in RESUME_CHECKS]
    body = page(browser, ask(project, executor="agent", ref="R-3"))
    assert "Execute the approved action once" not in body and "the worker runs nothing" in body


def test_an_agents_approval_waits_for_the_agent_then_says_ran_or_not_run(
        project: Project, browser: Client, agent: ApiClient, rita: Any) -> None:
    approval = ask(project, executor="agent")
    response = browser.post(reverse("runs:approval_approve", args=[approval.pk]), {"version": approval.version},
                            **HTMX)
    body = response.content.decode()
    # The decision's htmx answer restates every part of the page: the badge, the heading, the run's status.
    assert ('id="approval-status" data-outcome="approved_waiting_agent" hx-swap-oob="true">'
            "approved, waiting for the agent") in body
    assert 'id="action-heading" hx-swap-oob="true">The approved action' in body
    assert 'id="action-run-status" hx-swap-oob="true">waiting_approval' in body
    assert "has not reported running it yet" in body and 'data-polling="yes"' in body
    full = page(browser, approval)
    assert "The pending action" not in full and "approved, waiting for the agent" in full
    # The trace's poll brings the top card along too.
    polled = page(browser, approval, HTTP_HX_REQUEST="true", QUERY_STRING="part=trace")
    assert 'id="approval-status" data-outcome="approved_waiting_agent" hx-swap-oob="true"' in polled

    url = f"/api/v1/approvals/{approval.pk}/outcome/"
    assert agent.post(url, {"outcome": "not_run"}).json()["code"] == "reason_required"
    ran = agent.post(url, {"outcome": "ran"})
    assert ran.status_code == 200 and ran.json()["outcome"] == "ran"
    assert agent.post(url, {"outcome": "ran"}).status_code == 200  # the same report again: the same row
    assert agent.post(url, {"outcome": "not_run", "reason": "x"}).json()["code"] == "outcome_reported"
    assert RunEvent.objects.filter(run_id=approval.run_id, kind="approval.outcome").count() == 1
    assert AuditEntry.objects.filter(action="approval.ran", target_id=str(approval.pk)).count() == 1
    full = page(browser, approval)
    assert 'data-outcome="approved_ran"' in full and "approved, ran" in full and "The agent reported it ran" in full

    other = ask(project, executor="agent", ref="R-2")
    approval_decide(project=project, approval_id=other.pk, actor=Actor.for_user(rita), decision="approve")
    refused = agent.post(f"/api/v1/approvals/{other.pk}/outcome/",
                         {"outcome": "not_run", "reason": "the SDK cannot run edited arguments"})
    assert refused.status_code == 200 and refused.json()["outcome_reason"] == "the SDK cannot run edited arguments"
    full = page(browser, other)
    assert "approved, not run" in full and "the SDK cannot run edited arguments" in full
    assert "The approved action (not run)" in full


def test_only_an_approved_agent_action_has_an_outcome_and_only_in_its_project(
        project: Project, other_project: Project, agent: ApiClient, rita: Any) -> None:
    worker = ask(project, executor="worker")
    approval_decide(project=project, approval_id=worker.pk, actor=Actor.for_user(rita), decision="approve")
    pending = ask(project, executor="agent", ref="R-2")
    assert agent.post(f"/api/v1/approvals/{worker.pk}/outcome/", {"outcome": "ran"}).json()["code"] == \
        "not_agent_executed"
    assert agent.post(f"/api/v1/approvals/{pending.pk}/outcome/", {"outcome": "ran"}).json()["code"] == "not_approved"
    stranger = ApiClient(factories.make_agent_token(other_project, name="other")[1])
    assert stranger.post(f"/api/v1/approvals/{pending.pk}/outcome/", {"outcome": "ran"}).status_code == 404
    assert agent.post(f"/api/v1/approvals/{pending.pk}/outcome/", {"outcome": "ran", "executed": True}
                      ).json()["code"] == "unknown_field"


def test_an_edit_is_a_diff_on_the_page_in_the_audit_entry_and_in_the_webhook(
        project: Project, browser: Client, rita: Any) -> None:
    webhook_register(project=project, url="http://127.0.0.1:9/hook", events=["approval.decided"],
                     actor=Actor.for_agent("sdk"))
    approval = ask(project, executor="worker")
    response = browser.post(reverse("runs:approval_edit_approve", args=[approval.pk]),
                            {"version": approval.version, "arguments": json.dumps(EDITED), "reason": "chapter 4"},
                            **HTMX)
    assert response.status_code == 200
    expected = [
        {"path": "chapter", "kind": "changed", "before": 3, "after": 4},
        {"path": "colour", "kind": "added", "after": "red"},
        {"path": "meta.tags[1]", "kind": "added", "after": "final"},
    ]
    assert ApprovalRequest.objects.get(pk=approval.pk).arguments_changes == expected
    audit = AuditEntry.objects.get(action="approval.approved", target_id=str(approval.pk))
    assert audit.data["changes"] == expected
    delivery = WebhookDelivery.objects.get(event="approval.decided", payload__data__approval_id=approval.pk)
    assert delivery.payload["data"]["changes"] == expected and delivery.payload["data"]["edited"] is True
    for body in (response.content.decode(), page(browser, approval)):
        assert 'data-path="chapter" data-kind="changed"' in body
        assert '<code class="before">3</code>' in body and '<code class="after">4</code>' in body
        assert 'data-path="colour" data-kind="added"' in body and "&quot;red&quot;" in body
        assert 'data-path="meta.tags[1]" data-kind="added"' in body
    plain = ask(project, executor="worker", ref="R-2")
    approval_decide(project=project, approval_id=plain.pk, actor=Actor.for_user(rita), decision="approve")
    plain_delivery = WebhookDelivery.objects.get(event="approval.decided", payload__data__approval_id=plain.pk)
    assert plain_delivery.payload["data"]["changes"] == [] and plain_delivery.payload["data"]["edited"] is False
    assert "arguments-diff" not in page(browser, plain)


def test_the_checklist_reads_the_trace_for_the_executors_steps_only(project: Project) -> None:
    from runs_app.presentation.resume_checklist import resume_progress
    from runs_app.services import run_event_append

    approval = ask(project, executor="agent")
    for kind, ok in (("resume.load", True), ("resume.capability", True), ("resume.bind_result", False)):
        run_event_append(project=project, run_id=approval.run_id, kind=kind, data={"ok": ok, "reason": kind})
    trace = list(RunEvent.objects.filter(run_id=approval.run_id).order_by("seq"))
    progress = {step.key: step for step in resume_progress(trace, "agent")}
    assert "capability" not in progress and "not_yet_consumed" not in progress
    assert (progress["load"].state, progress["bind_result"].state, progress["continue"].state) == (
        "passed", "failed", "waiting")
    assert progress["bind_result"].text.startswith("Bind the decision to the run for the agent")
    assert {step.key for step in resume_progress(trace)} >= {"capability", "not_yet_consumed"}
