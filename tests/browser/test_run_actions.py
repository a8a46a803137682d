"""Acting on a run in a real browser: an operator opens a blocked run, previews a retry in the page's panel
(htmx), confirms it with a reason, then previews and confirms a cancel; each lands back on the run."""

import pytest
from playwright.sync_api import Page, expect

from runs_app.models import Run, RunEvent, RunStatus
from runs_app.services import run_transition
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_operator_previews_and_performs_a_retry_then_a_cancel(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("acme")
    factories.make_user("otto", role="operator", projects=[project])
    run = factories.make_run(project, factories.make_session(project, ref="S-a"), ref="R-a")
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    run_transition(project=project, run_id=run.pk, to=RunStatus.BLOCKED, expected_version=None,
                   blocked_step="agent_lease_expired", error={"reason": "the agent went away"})
    login(page, "otto")

    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.click("#act-retry")  # the preview comes into the panel; the page stays
    panel = page.locator("#action-panel")
    expect(panel).to_contain_text("The run goes blocked -> running.")
    expect(panel).to_contain_text("the run's agent continues it from its cursor")
    expect(page).to_have_url(f"{live_server.url}/runs/{run.pk}/")
    assert Run.objects.get(pk=run.pk).status == RunStatus.BLOCKED  # a preview does nothing
    shot(page, "run-retry-preview")
    panel.locator("textarea[name=reason]").fill("the agent is back")
    page.click("#confirm-retry")
    expect(page.locator("#run-status")).to_have_text("running")
    expect(page.locator(".messages")).to_contain_text("Retry from the blocked step: done.")

    expect(page.locator("#act-cancel")).to_have_text("Cancel the run")
    page.click("#act-cancel")
    expect(panel).to_contain_text("The run goes running -> cancelled.")
    panel.locator("textarea[name=reason]").fill("<b>superseded</b>")
    page.click("#confirm-cancel")
    expect(page.locator("#run-status")).to_have_text("cancelled")
    expect(page.locator("#run-actions")).to_have_count(0)  # nothing is left to do to a finished run
    shot(page, "run-cancelled")
    reasons = [e.data["reason"] for e in RunEvent.objects.filter(run=run, kind__startswith="operator.").order_by("seq")]
    assert reasons == ["the agent is back", "<b>superseded</b>"]
