"""A reviewer makes a personal token on the profile page in a real browser, copies the secret shown once, and
decides an approval through the Python client with it; the page never shows the secret again."""

import pytest
from harness_client import HarnessClient
from playwright.sync_api import Page, expect

from harness.actors import Actor
from harness.models import ApiToken
from runs_app.models import ApprovalRequest
from runs_app.services import approval_request_create, run_transition
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reviewer_makes_a_token_in_the_browser_and_decides_an_approval_with_the_client(  # type: ignore[no-untyped-def]
    page: Page, live_server, login, shot,
) -> None:
    project = factories.make_project("acme")
    factories.make_user("rita", role="reviewer", projects=[project])
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to="running", expected_version=None)
    approval = approval_request_create(project=project, run_id=run.pk, tool="send_email", arguments={"to": "a@b.c"},
                                       idempotency_key="browser-token", actor=Actor.for_agent("writer"))
    login(page, "rita")

    page.click("#profile-link")
    page.fill("#id_name", "my laptop")
    page.select_option("#id_expires_in_days", "7")
    page.click("#token-create button[type=submit]")
    expect(page.locator("#new-secret")).to_be_visible()
    secret = page.locator("#secret-value").inner_text().strip()
    assert secret.startswith("hc_")
    expect(page.locator("#token-list tbody tr")).to_have_count(1)
    shot(page, "profile-token-created")

    with HarnessClient(live_server.url, token=secret) as client:
        decided = client.decide_approval(approval.pk, "approve", expected_version=approval.version)
    assert decided.status == "approved" and decided.decided_by == "rita"
    assert ApprovalRequest.objects.get(pk=approval.pk).status == "approved"

    page.reload()
    expect(page.locator("#token-list")).to_contain_text("my laptop")
    expect(page.locator("#new-secret")).to_have_count(0)
    assert secret not in page.content()
    token = ApiToken.objects.get(name="my laptop")
    expect(page.locator(f'#token-list tr[data-token="{token.pk}"] .token-status')).to_have_text("live")
    assert token.last_used_at is not None
    expect(page.locator(f'#token-list tr[data-token="{token.pk}"]')).not_to_contain_text("never")

    page.click(f'#token-list tr[data-token="{token.pk}"] button[name=revoke]')
    expect(page.locator(f'#token-list tr[data-token="{token.pk}"] .token-status')).to_have_text("revoked")
    assert secret not in page.content()
