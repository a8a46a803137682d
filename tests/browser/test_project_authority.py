"""Who may act, per project, in a real browser (Debian's Chromium): an admin freezes a project with the button on
the projects page and unfreezes it; a reviewer of one project is offered the decision there and not in the
project where they only read."""

import pytest
from playwright.sync_api import Page, expect

from harness.models import AuditEntry, Membership, Project
from runs_app.models import ApprovalRequest, ApprovalStatus
from tests import factories
from tests.console.scenario import build_scene

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_freezes_and_unfreezes_a_project_with_the_button(page: Page, login, shot) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("acme")
    factories.make_user("ada", role="admin", projects=[project])

    login(page, "ada")
    page.click("nav >> text=Projects")
    row = page.locator("tr[data-project='acme']")
    row.locator("input[name=reason]").fill("<img src=x onerror=alert(1)> incident")
    row.locator("button", has_text="Freeze").click()
    expect(row.locator("td.frozen")).to_contain_text("frozen")
    expect(row.locator("td.frozen")).to_contain_text("<img src=x onerror=alert(1)> incident")  # shown as text
    shot(page, "project-frozen")
    assert Project.objects.get(pk=project.pk).frozen_at is not None

    row.locator("button", has_text="Unfreeze").click()
    expect(row.locator("td.frozen")).to_have_text("no")
    assert Project.objects.get(pk=project.pk).frozen_at is None
    assert list(AuditEntry.objects.filter(target_type="project").order_by("seq").values_list("action", flat=True)
                ) == ["project.frozen", "project.unfrozen"]


def test_a_per_project_reviewer_decides_in_their_project_only(page: Page, login, shot) -> None:  # type: ignore[no-untyped-def]
    mine = build_scene(factories.make_project("acme"))
    theirs = build_scene(factories.make_project("globex"), suffix="-b")
    paula = factories.make_user("paula")
    Membership.objects.create(user=paula, project=mine.project, roles=["reviewer"])
    Membership.objects.create(user=paula, project=theirs.project, roles=[])

    login(page, "paula")
    page.goto(page.url + f"approvals/{theirs.approval.pk}/")
    expect(page.locator("h1")).to_be_visible()
    expect(page.locator("button", has_text="Approve")).to_have_count(0)  # only reads here
    page.goto(page.url.split("/approvals/")[0] + f"/approvals/{mine.approval.pk}/")
    page.locator("button", has_text="Approve").first.click()
    expect(page.locator("body")).to_contain_text("approved")
    shot(page, "per-project-reviewer")
    assert ApprovalRequest.objects.get(pk=mine.approval.pk).status == ApprovalStatus.APPROVED
    assert ApprovalRequest.objects.get(pk=theirs.approval.pk).status == ApprovalStatus.PENDING
