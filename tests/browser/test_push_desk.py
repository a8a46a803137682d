"""The desk's push in a real browser (Debian's Chromium; issue 35): the inbox, open with a poll interval of two
minutes, shows a decision made elsewhere (and a new approval) within seconds: the push's stream (the ASGI process
beside /mcp, uvicorn on its own port, the session cookie sent along with CORS for the console's origin) made the
page poll at once. With the push unreachable the same page still updates, at its poll interval."""

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn
from playwright.sync_api import Page, expect

from harness.actors import Actor
from harness.mcp.server import mcp_app
from runs_app.services import approval_decide
from tests import factories
from tests.browser.test_live_desk import _ask

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_POLL = 120  # s: the page's own poll, far longer than any wait below
PUSHED = 15_000  # ms: well inside one poll interval


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _push_server(console: str) -> Iterator[str]:
    """The push on another port of the console's own host: the same site, so the session cookie goes along."""
    port = _free_port()
    host = urlsplit(console).hostname or "127.0.0.1"
    server = uvicorn.Server(uvicorn.Config(mcp_app(console_url=console), host="127.0.0.1", port=port,
                                           log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, name="push-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the push server did not start"
        time.sleep(0.05)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def test_a_decision_made_elsewhere_reaches_the_open_inbox_by_push(page: Page, login: Any, live_server: Any,
                                                                  settings: Any) -> None:
    settings.HARNESS_CONSOLE_POLL_SECONDS = LONG_POLL
    project = factories.make_project("pushco")
    first = _ask(project, "R-1", {"to": "a@example.com"})
    second = _ask(project, "R-2", {"to": "b@example.com"})
    factories.make_user("rita", role="reviewer", projects=[project])
    other = factories.make_user("omar", role="reviewer", projects=[project])
    with _push_server(live_server.url) as push:
        settings.HARNESS_PUSH_URL = push
        login(page, "rita")
        page.goto(f"{live_server.url}/approvals/")
        expect(page.locator("tr.approval-row")).to_have_count(2)
        expect(page.locator("body")).to_have_attribute("data-push", "open", timeout=PUSHED)

        # Another reviewer decides, elsewhere (not in this page): the row leaves the pending inbox.
        approval_decide(project=project, approval_id=first, actor=Actor.for_user(other), decision="approve",
                        reason="fine")
        expect(page.locator(f"tr.approval-row[data-approval='{first}']")).to_have_count(0, timeout=PUSHED)
        expect(page.locator(f"tr.approval-row[data-approval='{second}']")).to_be_visible()
        # And an approval asked now appears, with the badge.
        third = _ask(project, "R-3", {"to": "c@example.com"})
        expect(page.locator(f"tr.approval-row[data-approval='{third}']")).to_be_visible(timeout=PUSHED)
        expect(page.locator("#pending-count")).to_have_text("2", timeout=PUSHED)


def test_without_the_push_the_inbox_still_polls(page: Page, login: Any, live_server: Any, settings: Any) -> None:
    settings.HARNESS_CONSOLE_POLL_SECONDS = 1
    settings.HARNESS_PUSH_URL = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    project = factories.make_project("nopushco")
    first = _ask(project, "R-1", {"to": "a@example.com"})
    factories.make_user("rita", role="reviewer", projects=[project])
    other = factories.make_user("omar", role="reviewer", projects=[project])
    login(page, "rita")
    page.goto(f"{live_server.url}/approvals/")
    expect(page.locator("tr.approval-row")).to_have_count(1)
    approval_decide(project=project, approval_id=first, actor=Actor.for_user(other), decision="reject",
                    reason="no")
    expect(page.locator("tr.approval-row")).to_have_count(0, timeout=PUSHED)
    expect(page.locator("body")).not_to_have_attribute("data-push", "open")
