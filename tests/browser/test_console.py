"""The console in a real browser: Debian's Chromium drives the pages a reviewer and an operator use."""

import json
import re

import pytest
from playwright.sync_api import Page, expect

from demo.scenario import demo_scenario_create
from harness.canonical import action_fingerprint
from memory_app.models import MemoryRecord, MemoryStatus
from runs_app.models import ApprovalRequest, ApprovalStatus, Checkpoint, EffectStatus, ExternalEffect, Run, RunStatus
from sessions_app.services import session_items_append
from tests import factories
from tests.console.scenario import build_scene

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.worker
def test_a_reviewer_approves_r101_and_watches_it_resume(page: Page, live_server, login, shot, celery_worker) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("novelforge")
    run = demo_scenario_create(project=project)
    session_items_append(project=project, session_id=run.session_id, items=[
        {"role": "user", "content": {"text": "Publish chapter 3 when it is ready"}, "run_id": run.pk},
    ])
    approval = ApprovalRequest.objects.get(run=run, status=ApprovalStatus.PENDING)
    factories.make_user("rita", role="reviewer", projects=[project])

    login(page, "rita")
    assert page.evaluate("htmx.version").startswith("2.")  # the vendored, pinned major
    shot(page, "dashboard")
    page.click("nav >> text=Approvals")
    expect(page.locator("#pending-count")).to_have_text("1")
    expect(page.locator(f"tr[data-approval='{approval.pk}']")).to_contain_text("publish_chapter")
    shot(page, "approvals-inbox")

    page.click(f"tr[data-approval='{approval.pk}'] >> text=Review")
    expect(page.locator("#fingerprint")).to_have_text(approval.action_fingerprint)
    expect(page.locator("#arguments")).to_contain_text('"title": "The Lighthouse"')
    expect(page.locator("ol.messages")).to_contain_text("Publish chapter 3 when it is ready")
    shot(page, "approval-detail")

    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/approve/")) as request:
        page.click("#approve")
    # The CSRF token travels as a header that htmx 2 inherits from <body hx-headers>.
    assert request.value.headers.get("x-csrftoken")
    assert request.value.headers.get("hx-request") == "true"
    expect(page.locator("#decided-by")).to_have_text("rita")
    expect(page.locator("#approval-status")).to_have_text("approved")  # swapped out of band

    # The real worker resumes R-101; the panel polls its trace until the run is done.
    expect(page.locator("#run-status")).to_have_text("succeeded", timeout=45_000)
    for step in ("load", "approval_preconditions", "bind_result", "checkpoint"):
        expect(page.locator(f"#resume-progress li[data-step={step}]")).to_have_attribute("data-state", "passed")
    expect(page.locator("#resume-trace ol.trace")).to_contain_text("resume.bind_result")
    expect(page.locator("#resume-trace")).to_have_attribute("data-polling", "no")
    expect(page.locator("#pending-count")).to_have_text("0", timeout=10_000)
    shot(page, "approval-resumed")

    assert Run.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED
    effect = ExternalEffect.objects.get(project=project, approval=approval)
    assert effect.status == EffectStatus.CONSUMED and effect.attempts == 1


def test_a_rejection_needs_and_records_a_reason(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    scene = build_scene(factories.make_project("acme"))
    factories.make_user("rita", role="reviewer", projects=[scene.project])
    login(page, "rita")
    page.goto(f"{live_server.url}/approvals/{scene.approval.pk}/")
    page.click("#reject")  # the browser refuses an empty required reason
    assert ApprovalRequest.objects.get(pk=scene.approval.pk).status == ApprovalStatus.PENDING
    page.fill("#reject_reason", "Never push to origin without the tests passing")
    page.click("#reject")
    expect(page.locator("#decision-reason")).to_have_text("Never push to origin without the tests passing")
    expect(page.locator("#decision-summary")).to_contain_text("rejected")
    shot(page, "approval-rejected")
    approval = ApprovalRequest.objects.get(pk=scene.approval.pk)
    assert approval.status == ApprovalStatus.REJECTED and approval.decided_by.username == "rita"


def test_edit_and_approve_records_the_new_fingerprint(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    scene = build_scene(factories.make_project("acme"))
    factories.make_user("rita", role="reviewer", projects=[scene.project])
    login(page, "rita")
    page.goto(f"{live_server.url}/approvals/{scene.approval.pk}/")
    edited = {"branch": "fix/login-reviewed", "force": False, "remote": "origin"}
    page.click("text=Edit the arguments and approve")
    page.fill("#edit_arguments", json.dumps(edited))
    page.fill("#edit_reason", "Push to a review branch")
    page.click("#edit-approve")
    expected = action_fingerprint("git.push", edited)
    expect(page.locator("#approved-fingerprint")).to_have_text(expected)
    expect(page.locator("#approved-arguments")).to_contain_text("fix/login-reviewed")
    shot(page, "approval-edited")
    approval = ApprovalRequest.objects.get(pk=scene.approval.pk)
    assert approval.approved_fingerprint == expected != approval.action_fingerprint
    assert approval.approved_arguments == edited


def test_an_operator_supersedes_and_deletes_memory(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    scene = build_scene(factories.make_project("acme"))
    factories.make_user("otto", role="operator", projects=[scene.project])
    old = scene.memory
    login(page, "otto")
    page.click("nav >> text=Memory")
    expect(page.locator(f"tr[data-record='{old.pk}']")).to_contain_text("The login bug lives in auth.py")
    expect(page.locator("#bulk-action")).to_have_value("")  # no bulk action until one is picked (issue 32)
    shot(page, "memory-list")

    page.click(f"tr[data-record='{old.pk}'] >> text={old.pk}")
    page.click("#edit-link")  # the edit form is swapped in place by htmx
    page.fill("#id_content", "The login bug is on line 42 of auth.py")
    # No reason: the browser will not send the form (the server refuses it too: tests/console/test_memory_pages.py).
    expect(page.locator("#id_reason")).to_have_attribute("required", "")
    page.click("#save-supersede")
    expect(page.locator("#record-status")).to_have_text("Active")
    page.fill("#id_reason", "The line moved.")
    page.click("#save-supersede")
    expect(page.locator(".notice")).to_contain_text(f"Record {old.pk} is now superseded")
    expect(page.locator("#record-provenance")).to_contain_text("edited by otto")
    expect(page.locator("#version-chain li")).to_have_count(2)
    new = MemoryRecord.objects.get(supersedes=old)
    expect(page).to_have_url(f"{live_server.url}/memory/{new.pk}/")
    shot(page, "memory-superseded")

    page.click("#delete-link")
    page.fill("#id_reason", "Fixed in release 3.")
    page.check("#id_confirm")
    page.click("#confirm-delete")
    expect(page.locator("#record-status")).to_have_text("Deleted")
    shot(page, "memory-deleted")
    page.click("nav >> text=Held for review")
    shot(page, "memory-held")
    old.refresh_from_db()
    new.refresh_from_db()
    assert old.status == MemoryStatus.SUPERSEDED and new.status == MemoryStatus.DELETED
    assert new.deleted_by == "user:otto"


def test_the_lineage_page_draws_the_tree_and_diffs_two_checkpoints(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    scene = build_scene(factories.make_project("acme"))
    factories.make_user("rita", role="reviewer", projects=[scene.project])
    root, located, fork, patched = scene.checkpoints
    login(page, "rita")

    page.goto(f"{live_server.url}/sessions/{scene.session.pk}/")
    expect(page.locator("#timeline")).to_contain_text("I need to push the patch")
    shot(page, "session-timeline")
    page.click("#timeline >> text=R-101")
    expect(page.locator("#run-status")).to_have_text("waiting_approval")
    shot(page, "run-inspector")

    page.click("text=checkpoint lineage")
    # The scene's four, and the one its approval request wrote as the run began to wait (issue 16).
    assert Checkpoint.objects.filter(run=scene.run).count() == 5
    expect(page.locator("svg#lineage circle")).to_have_count(5)
    expect(page.locator("svg#lineage path.edge")).to_have_count(4)
    expect(page.locator(f"svg#lineage a.fork[data-checkpoint='{root.pk}']")).to_have_count(1)
    page.select_option("select[name=a]", str(located.pk))
    page.select_option("select[name=b]", str(fork.pk))
    page.click("#diff-form button")
    # The state's changes only: state.files[1] (added) and state.root_cause (removed); the label and the
    # content hash are in the metadata table.
    expect(page.locator("#diff-count")).to_have_text("2")
    expect(page.locator("#diff")).to_contain_text("state.root_cause")
    expect(page.locator("#diff-metadata tr.diff-changed[data-field=label]")).to_contain_text("alt-branch")
    shot(page, "lineage-diff")
    # The diff's URL is in the address bar, and opened again it is the same diff, as a whole page.
    expect(page).to_have_url(re.compile(rf"/checkpoints/diff/\?a={located.pk}&b={fork.pk}$"))
    page.reload()
    expect(page.locator("h1")).to_have_text("Checkpoint diff")
    expect(page.locator("#diff-count")).to_have_text("2")
    page.goto(f"{live_server.url}/runs/{scene.run.pk}/lineage/")

    page.click(f"svg#lineage a[data-checkpoint='{fork.pk}']")
    expect(page.locator("#state")).to_contain_text("db.py")
    shot(page, "checkpoint-detail")
