"""'Fork from here' in a real browser: an operator edits a checkpoint's state, sees the diff, confirms, and
lands on the new run; the source checkpoint's page then lists the fork."""

import json

import pytest
from playwright.sync_api import Page, expect

from runs_app.models import Checkpoint
from runs_app.services import checkpoint_create
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_operator_forks_from_a_checkpoint_after_seeing_the_diff(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("acme")
    factories.make_user("otto", role="operator", projects=[project])
    run = factories.make_run(project, factories.make_session(project, ref="S-f"), ref="R-f")
    source = checkpoint_create(project=project, run_id=run.pk, label="drafted", state={"title": "A", "words": 900})
    login(page, "otto")

    page.goto(f"{live_server.url}/checkpoints/{source.pk}/")
    page.fill("#id_reason", "a better title")
    page.fill("#id_state", json.dumps({"title": "B", "words": 900}))
    page.click("#fork-preview")
    expect(page.locator("#fork-diff")).to_contain_text('~ title: "A" → "B"')
    assert not Checkpoint.objects.filter(parent=source).exists()
    shot(page, "fork-preview")

    page.click("#fork-confirm")
    fork = Checkpoint.objects.get(parent=source)
    expect(page).to_have_url(f"{live_server.url}/runs/{fork.run_id}/")
    assert fork.state == {"title": "B", "words": 900}
    page.goto(f"{live_server.url}/checkpoints/{source.pk}/")
    expect(page.locator("#children")).to_contain_text(f"#{fork.pk}")
    expect(page.locator("#children")).to_contain_text("fork")
    shot(page, "fork-branch")
