"""Before the decision, the approval page shows whether the resume would pass (issue 30, part 5): the worker's own
checks, run as a dry run when the page opens and again at the decision, each line pass / fail / cannot know yet."""

import datetime as dt

import pytest
from django.test import override_settings
from django.utils import timezone
from playwright.sync_api import Page, expect

from demo.scenario import demo_scenario_create
from runs_app.models import ApprovalRequest, ApprovalStatus, Task
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _scene():  # type: ignore[no-untyped-def]
    project = factories.make_project("novelforge")
    run = demo_scenario_create(project=project)
    factories.make_user("rita", role="reviewer", projects=[project])
    return run, ApprovalRequest.objects.get(run=run, status=ApprovalStatus.PENDING)


def _line(page: Page, check: str):  # type: ignore[no-untyped-def]
    return page.locator(f"#dry-run li[data-check='{check}']")


def test_an_untouched_run_shows_every_line_passing_or_not_knowable_yet(page: Page, live_server, login) -> None:  # type: ignore[no-untyped-def]
    run, approval = _scene()
    login(page, "rita")
    page.goto(f"{live_server.url}/approvals/{approval.pk}/")
    expect(_line(page, "capability")).to_have_attribute("data-state", "pass")
    expect(_line(page, "decision_audit")).to_have_attribute("data-state", "unknown")
    expect(_line(page, "decision_audit")).to_contain_text("cannot know yet")
    expect(page.locator("#dry-run li[data-state='fail']")).to_have_count(0)
    expect(page.locator("#dry-run-warning")).to_have_count(0)


def test_a_removed_adapter_fails_its_line_and_warns_before_approving(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    run, approval = _scene()
    login(page, "rita")
    with override_settings(HARNESS_TOOL_ADAPTERS={}):  # the live server runs in this process: it sees it
        page.goto(f"{live_server.url}/approvals/{approval.pk}/")
        expect(_line(page, "capability")).to_have_attribute("data-state", "fail")
        expect(_line(page, "capability")).to_contain_text("no adapter is registered for the tool 'publish_chapter'")
        expect(_line(page, "capability")).to_contain_text("the resume blocks at capability")
        expect(page.locator("#dry-run-warning")).to_contain_text("no adapter is registered")
        shot(page, "approval-dry-run-adapter-removed")
        page.click("#approve")  # still allowed: the reviewer has seen it, the answer says it again
        expect(page.locator("#dry-run-at-decision")).to_contain_text("no adapter is registered")
    assert ApprovalRequest.objects.get(pk=approval.pk).status == ApprovalStatus.APPROVED


def test_a_changed_artifact_shows_a_failing_line_before_the_decision(page: Page, live_server, login) -> None:  # type: ignore[no-untyped-def]
    run, approval = _scene()
    task = Task.objects.get(pk=run.task_id)
    Task.objects.filter(pk=task.pk).update(artifact_refs={**task.artifact_refs, "draft": {"sha256": "0" * 64}})
    login(page, "rita")
    page.goto(f"{live_server.url}/approvals/{approval.pk}/")
    expect(_line(page, "artifact_fingerprints")).to_have_attribute("data-state", "fail")
    expect(_line(page, "artifact_fingerprints")).to_contain_text("artifacts changed since the checkpoint: draft")
    expect(page.locator("#dry-run-warning")).to_contain_text("draft")
    expect(_line(page, "capability")).to_have_attribute("data-state", "pass")


def test_an_expired_approval_shows_a_failing_line_before_the_decision(page: Page, live_server, login) -> None:  # type: ignore[no-untyped-def]
    run, approval = _scene()
    ApprovalRequest.objects.filter(pk=approval.pk).update(expires_at=timezone.now() - dt.timedelta(minutes=1))
    login(page, "rita")
    page.goto(f"{live_server.url}/approvals/{approval.pk}/")
    expect(_line(page, "approval_preconditions")).to_have_attribute("data-state", "fail")
    expect(_line(page, "approval_preconditions")).to_contain_text("the approval expired before a decision")
    expect(page.locator("#dry-run-warning")).to_contain_text("expired")
