"""After a decision every part of the approval page states the new status, without a reload (issue 32, part 2), the
reviewer's edit shows as a diff (part 3), and an agent's report of the outcome reaches the page by itself."""

import json

import pytest
from playwright.sync_api import Page, expect

from harness.actors import Actor
from runs_app.models import ApprovalRequest, RunStatus
from runs_app.services import approval_report_outcome, approval_request_create, run_transition
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_deciding_restates_the_page_and_the_agents_report_arrives_without_reload(  # type: ignore[no-untyped-def]
        page: Page, live_server, login) -> None:
    project = factories.make_project("sdk")
    factories.make_user("rita", role="reviewer", projects=[project])
    run = factories.make_run(project, factories.make_session(project, ref="S-1"), ref="R-1", active_agent="sdk")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    approval = approval_request_create(
        project=project, run_id=run.pk, tool="publish_chapter", arguments={"chapter": 3, "tags": ["draft"]},
        idempotency_key="pub-3", actor=Actor.for_agent("sdk"), executor="agent")
    login(page, "rita")
    page.goto(f"{live_server.url}/approvals/{approval.pk}/")
    expect(page.locator("#approval-status")).to_have_text("pending")
    expect(page.locator("#action-heading")).to_have_text("The pending action")
    expect(page.locator("li[data-step='capability']")).to_have_count(0)  # no adapter step for the agent's tool
    page.locator("summary", has_text="Edit the arguments").click()
    page.fill("#edit_arguments", json.dumps({"chapter": 4, "tags": ["draft", "final"]}))
    page.fill("#edit_reason", "chapter 4 is the one that is ready")
    page.click("#edit-approve")
    # Every part says the same, at once: the top badge, the heading, the decision box.
    expect(page.locator("#approval-status")).to_have_text("approved, waiting for the agent")
    expect(page.locator("#action-heading")).to_have_text("The approved action")
    expect(page.locator("#decision-summary")).to_contain_text("approved, waiting for the agent")
    expect(page.locator("#agent-outcome")).to_contain_text("has not reported running it yet")
    expect(page.locator("#approval-status")).to_have_count(1)
    diff = page.locator("#decision .arguments-diff")
    expect(diff.locator("tr[data-path='chapter'] .before")).to_have_text("3")
    expect(diff.locator("tr[data-path='chapter'] .after")).to_have_text("4")
    expect(diff.locator("tr[data-path='tags[1]']")).to_have_attribute("data-kind", "added")
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # no reload
    approval_report_outcome(project=project, approval_id=approval.pk, outcome="not_run",
                            reason="the SDK runs only the call the model made", actor=Actor.for_agent("sdk"))
    expect(page.locator("#approval-status")).to_have_text("approved, not run")
    expect(page.locator("#action-heading")).to_have_text("The approved action (not run)")
    expect(page.locator("#agent-outcome")).to_contain_text("the SDK runs only the call the model made")
    assert ApprovalRequest.objects.get(pk=approval.pk).outcome == "not_run"
