"""A LangGraph thread copied (copy_thread, a fork) in a real browser: the copy's lineage page says where it came
from and links there; the source's lineage page lists the copy; both say the thread's time to live."""

import pytest
from playwright.sync_api import Page, expect

from harness.actors import Actor
from runs_app.models import Run
from runs_app.services import thread_checkpoint_put
from runs_app.services.thread_lifecycle import thread_copy, thread_ttl_set
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_copys_lineage_page_shows_the_branch_both_ways(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("acme")
    factories.make_user("rita", role="reviewer", projects=[project])
    parent = None
    for step, checkpoint_id in enumerate(("c1", "c2", "c3")):
        thread_checkpoint_put(project=project, thread_id="draft", checkpoint_ns="", checkpoint_id=checkpoint_id,
                              parent_checkpoint_id=parent, checkpoint={"v": 4}, channel_values={"step": step},
                              metadata={"source": "loop", "step": step})
        parent = checkpoint_id
    actor = Actor.of(factories.make_user("agent-owner", projects=[project]))
    copied = thread_copy(project=project, source_thread_id="draft", target_thread_id="draft-alt", actor=actor)
    thread_ttl_set(project=project, thread_id="draft-alt", ttl_days=14, actor=actor)
    source = Run.objects.get(project=project, ref="draft")
    login(page, "rita")

    page.goto(f"{live_server.url}/runs/{copied.run.pk}/lineage/")
    expect(page.locator("#thread-copied-from")).to_contain_text("Copied from thread draft")
    expect(page.locator("#thread-ttl")).to_contain_text("14 days since its last change (the thread's own)")
    expect(page.locator("#lineage a.node")).to_have_count(3)
    shot(page, "thread-copy-lineage")

    page.click("#thread-copied-from a")
    expect(page).to_have_url(f"{live_server.url}/runs/{source.pk}/lineage/")
    expect(page.locator("#thread-copies")).to_contain_text("Branches copied from this thread")
    expect(page.locator("#thread-branches")).to_contain_text("draft-alt")
    expect(page.locator("#thread-ttl")).to_contain_text("none: kept until deleted")
    shot(page, "thread-source-lineage")
