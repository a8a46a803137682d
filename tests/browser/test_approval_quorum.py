"""A two-reviewer quorum in Chromium (issue 33): the first approval shows "1 of 2 approvals" and the run stays
waiting; the second resumes it once, through the real worker (the tool's effect is attempted once)."""

import pytest
from playwright.sync_api import Page, expect

from demo.scenario import demo_scenario_create
from runs_app.models import (
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalStatus,
    EffectStatus,
    ExternalEffect,
    Run,
    RunStatus,
)
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.worker
def test_two_reviewers_are_needed_and_the_second_resumes_the_run_once(  # type: ignore[no-untyped-def]
        page: Page, live_server, login, shot, celery_worker) -> None:
    project = factories.make_project("novelforge")
    ApprovalPolicy.objects.create(project=project, tool="publish_chapter", version=1, required_approvals=2)
    run = demo_scenario_create(project=project)
    approval = ApprovalRequest.objects.get(run=run, status=ApprovalStatus.PENDING)
    assert approval.approvals_required == 2
    for name in ("ann", "bob"):
        factories.make_user(name, role="reviewer", projects=[project])

    login(page, "ann")
    page.goto(f"{live_server.url}/approvals/")
    expect(page.locator(f"tr[data-approval='{approval.pk}'] .quorum")).to_have_text("0 of 2 approvals")
    page.goto(f"{live_server.url}/approvals/{approval.pk}/")
    expect(page.locator("#quorum-count")).to_have_text("0 of 2 approvals")
    page.click("#approve")
    expect(page.locator("#quorum-count")).to_have_text("1 of 2 approvals")
    expect(page.locator("#quorum-mine")).to_be_visible()
    expect(page.locator("#approval-status")).to_have_text("pending")
    shot(page, "quorum-first-vote")
    assert Run.objects.get(pk=run.pk).status == RunStatus.WAITING_APPROVAL
    assert ApprovalRequest.objects.get(pk=approval.pk).status == ApprovalStatus.PENDING

    second = page.context.browser.new_context().new_page()
    login(second, "bob")
    second.goto(f"{live_server.url}/approvals/")
    expect(second.locator(f"tr[data-approval='{approval.pk}'] .quorum")).to_have_text("1 of 2 approvals")
    second.goto(f"{live_server.url}/approvals/{approval.pk}/")
    second.click("#approve")
    expect(second.locator("#decided-by")).to_have_text("bob")
    expect(second.locator("#run-status")).to_have_text("succeeded", timeout=45_000)
    shot(second, "quorum-second-vote")

    decided = ApprovalRequest.objects.get(pk=approval.pk)
    assert decided.status == ApprovalStatus.APPROVED
    effect = ExternalEffect.objects.get(project=project, approval=approval)
    assert effect.status == EffectStatus.CONSUMED and effect.attempts == 1
