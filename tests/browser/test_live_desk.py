"""The live desk in a real browser (Debian's Chromium; issue 32, part 4), on one reviewer's session: the inbox
shows an approval asked after the page loaded without a reload and keeps the rows the reviewer ticked; select
all / none and the arguments of each selected row; the reviewer's own queue; the overview's count and a run's page
update themselves; then a review by keyboard only, from the inbox to the approval's approved status.

The poll interval is a setting (HARNESS_CONSOLE_POLL_SECONDS), one second here; every wait is for a condition.
"""

import pytest
from playwright.sync_api import Page, expect

from harness.actors import Actor
from harness.models import Project
from runs_app.models import ApprovalRequest, ApprovalStatus, RunStatus
from runs_app.services import approval_assign, approval_request_create, run_event_append, run_transition
from tests import factories
from tests.console.scenario import build_scene

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SOON = 10_000  # ms: a few poll intervals


def _ask(project: Project, ref: str, arguments: dict) -> int:
    run = factories.make_run(project, ref=ref, active_agent="mailer")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool="mail.send", arguments=arguments,
                                   idempotency_key=f"k-{ref}", actor=Actor.for_agent("mailer")).pk


def test_the_desk_updates_itself_and_a_review_needs_no_mouse(page: Page, login, live_server, settings, shot) -> None:  # type: ignore[no-untyped-def]
    settings.HARNESS_CONSOLE_POLL_SECONDS = 1
    scene = build_scene(factories.make_project("acme"))
    first = scene.approval.pk
    rita = factories.make_user("rita", role="reviewer", projects=[scene.project])
    login(page, "rita")
    inbox = f"{live_server.url}/approvals/"
    page.goto(inbox)
    expect(page.locator("tr.approval-row")).to_have_count(1)

    # An approval asked after the page loaded appears without a reload.
    second = _ask(scene.project, "R-300", {"to": "all@example.com", "subject": "Launch"})
    page.wait_for_selector(f"tr.approval-row[data-approval='{second}']", timeout=SOON)
    expect(page.locator("#inbox-count")).to_have_text("2 pending")
    expect(page.locator("#pending-count")).to_have_text("2", timeout=SOON)  # the badge agrees

    # Select all: each selected approval's arguments, not only its fingerprint.
    page.click("#bulk-all")
    expect(page.locator("#bulk-selected")).to_have_text("2 selected")
    preview = page.locator(f"#bulk-preview .bulk-preview-item[data-preview='{second}']")
    expect(preview).to_be_visible()
    expect(preview).to_contain_text('"to": "all@example.com"')
    expect(page.locator(f"#bulk-preview .bulk-preview-item[data-preview='{first}']")).to_contain_text(
        '"branch": "fix/login"')
    # The table redraws itself for a third approval and keeps what the reviewer ticked and wrote.
    page.fill("#bulk_reason", "checked the lists")
    page.locator("#bulk_reason").blur()
    third = _ask(scene.project, "R-301", {"to": "ops@example.com"})
    page.wait_for_selector(f"tr.approval-row[data-approval='{third}']", timeout=SOON)
    expect(page.locator("#bulk_reason")).to_have_value("checked the lists")
    expect(page.locator(f"tr[data-approval='{second}'] input[name=item]")).to_be_checked()
    expect(page.locator(f"tr[data-approval='{third}'] input[name=item]")).not_to_be_checked()
    expect(page.locator(f"#bulk-preview .bulk-preview-item[data-preview='{third}']")).to_be_hidden()
    page.click("#bulk-none")
    expect(page.locator("#bulk-selected")).to_have_text("0 selected")
    expect(preview).to_be_hidden()
    shot(page, "approvals-live")

    # The reviewer's own queue.
    approval_assign(project_ids=[scene.project.pk], approval_id=second, actor=Actor.of(rita), assignee="rita",
                    expected_version=None)
    page.click("#tab-mine")
    expect(page.locator("tr.approval-row")).to_have_count(1)
    expect(page.locator(f"tr.approval-row[data-approval='{second}']")).to_be_visible()

    # The overview's count follows too.
    page.goto(f"{live_server.url}/")
    expect(page.locator("#approvals-waiting")).to_have_text("3")
    _ask(scene.project, "R-302", {"to": "board@example.com"})
    expect(page.locator("#approvals-waiting")).to_have_text("4", timeout=SOON)

    # And a run's page.
    page.goto(f"{live_server.url}/runs/{scene.run.pk}/")
    run_event_append(project=scene.project, run_id=scene.run.pk, kind="note", data={"text": "moved on"})
    expect(page.locator("#events")).to_contain_text("moved on", timeout=SOON)

    # Keyboard only: ? lists the shortcuts, j/k move, Enter opens, r goes to the reason (typing fires nothing),
    # a goes to Approve and Enter presses it: the page's CSRF form, through the same view.
    page.goto(inbox)
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_have_attribute("open", "")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")
    expect(page.locator(f"tr.approval-row[data-approval='{first}']")).to_have_class("approval-row current")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/approvals/{first}/")
    page.keyboard.press("r")
    expect(page.locator("#reject_reason")).to_be_focused()
    page.keyboard.type("a reason")  # an "a" typed in the field is text, not the approve key
    expect(page.locator("#reject_reason")).to_have_value("a reason")
    expect(page.locator("#approve")).not_to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("a")
    expect(page.locator("#approve")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#approval-status")).to_have_text("approved", timeout=SOON)
    assert ApprovalRequest.objects.get(pk=first).status == ApprovalStatus.APPROVED
