"""The audit log in a real browser (Debian's Chromium): filters as URLs, paging, an entry's hostile data
shown as text, and an operator's "verify now" before and after the owner tampers with an entry."""

import re

import pytest
from playwright.sync_api import Page, expect

from harness.actors import Actor
from harness.audit import audit_record
from tests import factories
from tests.harness.test_audit_chain import as_owner_without_triggers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PAYLOAD = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'


def test_the_audit_log_filters_pages_and_shows_the_chains_verification(page: Page, live_server, login, shot,
                                                                       monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from console import audit

    monkeypatch.setattr(audit, "AUDIT_PAGE_SIZE", 2)  # the live server runs in this process
    project = factories.make_project("acme")
    run = factories.make_run(project, ref="R-audited")
    audit_record(project=project, actor=Actor.for_agent("rita"), action="approval.approved", target=run,
                 data={"reason": PAYLOAD})
    for i in range(2):
        audit_record(project=project, actor=Actor.for_agent(PAYLOAD[:100]), action="memory.accepted",
                     target=project, data={"i": i})
    factories.make_user("otto", role="operator", projects=[project])

    login(page, "otto")
    page.click("nav >> text=Audit log")
    expect(page.locator("tr.audit-row")).to_have_count(2)
    assert page.evaluate("window.__xss === undefined") and page.locator("img[src=x]").count() == 0
    expect(page.locator("tr.audit-row").first).to_contain_text("window.__xss = 2")  # the actor, as text
    expect(page.locator("tr[data-project=acme] .chain-state")).to_contain_text("never verified (3 entries)")

    page.click("#audit-older")
    expect(page.locator("tr.audit-row")).to_have_count(1)
    expect(page.locator("tr.audit-row a.target-link")).to_have_text(f"run {run.pk}")
    assert page.evaluate("window.__xss === undefined")  # the data's payload, as text too
    page.click("#audit-newer")
    expect(page.locator("tr.audit-row")).to_have_count(2)

    # A filter changes the URL (htmx pushes it), so the filtered log is a link to share.
    page.fill("input[name=action]", "approval.approved")
    page.press("input[name=action]", "Enter")
    expect(page.locator("tr.audit-row")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"action=approval\.approved"))
    page.goto(page.url)
    expect(page.locator("tr.audit-row")).to_have_count(1)
    page.click("tr.audit-row a.target-link")
    expect(page).to_have_url(re.compile(rf"/runs/{run.pk}/$"))

    page.goto(f"{live_server.url}/audit/")
    page.click("tr[data-project=acme] button:has-text('Verify now')")
    expect(page.locator("tr[data-project=acme] .chain-state")).to_contain_text("verified up to entry 3")

    # The tables' owner alters entry 1 with the triggers off; a walk from the first entry finds it.
    as_owner_without_triggers("UPDATE harness_auditentry SET data = '{\"reason\": \"fine\"}' "
                              "WHERE project_id = %s AND seq = 1", [project.pk])
    page.check("tr[data-project=acme] input[name=from_start]")
    page.click("tr[data-project=acme] button:has-text('Verify now')")
    state = page.locator("tr[data-project=acme] .chain-state")
    expect(state).to_contain_text("broken at entry 1")
    expect(state).to_contain_text("the entry's mac does not verify")
    shot(page, "audit-log")
