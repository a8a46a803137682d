"""The inbox's bulk form in a real browser (Debian's Chromium): two rows checked, one of them decided by
another reviewer after the page loaded; the stale one is refused and reported, the other approved."""

import pytest
from playwright.sync_api import Page, expect

from harness.actors import Actor
from runs_app.models import ApprovalRequest, ApprovalStatus, RunStatus
from runs_app.services import approval_decide, approval_request_create, run_transition
from tests import factories
from tests.console.scenario import build_scene

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_bulk_approve_refuses_the_row_that_changed_since_the_page_loaded(page: Page, login, shot) -> None:  # type: ignore[no-untyped-def]
    scene = build_scene(factories.make_project("acme"))
    run = factories.make_run(scene.project, scene.session, ref="R-200", active_agent="mailer")
    run_transition(project=scene.project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    second = approval_request_create(project=scene.project, run_id=run.pk, tool="mail.send",
                                     arguments={"to": "all@example.com"}, idempotency_key="mail-1",
                                     actor=Actor.for_agent("mailer"))
    factories.make_user("rita", role="reviewer", projects=[scene.project])
    ruth = factories.make_user("ruth", role="reviewer", projects=[scene.project])

    login(page, "rita")
    page.goto(page.url + "approvals/")
    expect(page.locator("tr.approval-row")).to_have_count(2)
    expect(page.locator(f"tr[data-approval='{second.pk}'] code.fingerprint")).to_have_attribute(
        "title", second.action_fingerprint)
    page.check(f"tr[data-approval='{scene.approval.pk}'] input[name=item]")
    page.check(f"tr[data-approval='{second.pk}'] input[name=item]")
    # Another reviewer rejects the second one while rita's page is open.
    approval_decide(project=scene.project, approval_id=second.pk, actor=Actor.of(ruth), decision="reject",
                    reason="wrong list")
    page.click("#bulk-approve")

    expect(page.locator("#bulk-results tr.bulk-result")).to_have_count(2)
    expect(page.locator(f"#bulk-results tr[data-approval='{scene.approval.pk}']")).to_contain_text("approved")
    refused = page.locator(f"#bulk-results tr[data-approval='{second.pk}']")
    expect(refused).to_contain_text("refused: already_decided")
    expect(refused).to_contain_text("Already rejected by ruth")
    expect(page.locator("tr.approval-row")).to_have_count(0)  # nothing left pending
    shot(page, "approvals-bulk")
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.APPROVED
    stale = ApprovalRequest.objects.get(pk=second.pk)
    assert stale.status == ApprovalStatus.REJECTED and stale.decided_by == ruth
