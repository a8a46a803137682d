"""Retention in the admin, in a real browser: a superuser sets a project's policy, reads the dry run on the
policy's page and runs a pass, which removes what the dry run said and keeps what a keep rule keeps."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from harness.actors import Actor
from memory_app.services import memory_write
from sessions_app.models import SessionItem
from sessions_app.services import session_items_append
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_superuser_sets_retention_reads_the_dry_run_and_runs_a_pass(page: Page, live_server, shot) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("acme")
    session = factories.make_session(project)
    session_items_append(project=project, session_id=session.pk,
                         items=[{"role": "user", "content": "<script>alert(1)</script>"} for _ in range(4)])
    memory_write(project=project, actor=Actor.for_agent("a"), scope="project", content="kept for its source",
                 source_session_id=session.pk, source_item_seq=1)
    User.objects.create_superuser("root", "root@example.com", "pw-123456")
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw-123456")
    page.click("input[type=submit]")

    page.goto(f"{live_server.url}/admin/runs_app/retentionpolicy/add/")
    page.select_option("#id_project", label="acme")
    page.fill("#id_items_keep_last", "1")
    page.click("input[name=_continue]")
    expect(page.locator(".field-dry_run")).to_contain_text("items: would remove 2; kept: memory_provenance 1")
    shot(page, "retention-dry-run")

    page.goto(f"{live_server.url}/admin/runs_app/retentionpolicy/")
    page.locator("input[name=_selected_action]").first.check()
    page.select_option("select[name=action]", "run_pass")
    page.click("button[name=index]")
    expect(page.locator(".messagelist")).to_contain_text("removed")
    assert list(SessionItem.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)) == [1, 4]
