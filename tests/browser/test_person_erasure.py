"""'Erase a person' in a real browser: an admin previews what goes (counts per store), gives a reason, ticks the
box and erases; the item the person wrote is a tombstone afterwards and the agent's reply is kept."""

import pytest
from playwright.sync_api import Page, expect

from sessions_app.models import SessionItem
from sessions_app.services import session_items_append
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_previews_and_erases_a_person(page: Page, live_server, login, shot) -> None:  # type: ignore[no-untyped-def]
    project = factories.make_project("acme")
    factories.make_user("ada", role="admin", projects=[project])
    session = factories.make_session(project, metadata={"user": "alice"})
    mine, agents = session_items_append(project=project, session_id=session.pk, items=[
        {"role": "user", "content": {"text": "alice's secret LILAC-12"}}, {"role": "assistant", "content": "ok"}])
    login(page, "ada")

    page.click("text=Erase a person")
    page.select_option("#id_project", label="acme")
    page.fill("#id_subject", "alice")
    page.click("#erase-preview-form button[type=submit]")
    cells = page.locator('#erase-report tr[data-store="session_items"] td')
    expect(cells.nth(1)).to_have_text("1")  # would erase: alice's item
    expect(cells.nth(2)).to_have_text("1")  # kept: the assistant's
    assert SessionItem.objects.get(pk=mine.pk).content == {"text": "alice's secret LILAC-12"}
    shot(page, "erase-person-preview")

    page.fill("#id_reason", "erasure request 7")
    page.check("#id_confirm")
    page.click("#confirm-erase")
    expect(page.locator("h2")).to_have_text("Erased")
    assert SessionItem.objects.get(pk=mine.pk).content["erased"] is True
    assert SessionItem.objects.get(pk=agents.pk).content == "ok"
    shot(page, "erase-person-done")
