"""An approval requested through MCP outlives the MCP session: a reviewer decides it in Chromium, and a new MCP
session (a client that reconnects later) reads the decision. The client that asked declared URL-mode elicitation,
so it was offered the console page."""

from typing import Any

import mcp_types as types
import pytest
from harness_client import HarnessClient
from playwright.sync_api import Page, expect

from tests.client.conftest import run_async
from tests.mcp import conftest as mcp_conftest
from tests.mcp.conftest import McpLive

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
mcp_live = mcp_conftest.mcp_live  # the MCP server fixture, here beside the browser fixtures


def test_an_approval_decided_in_chromium_is_read_by_a_new_mcp_session(page: Page, mcp_live: McpLive,
                                                                       login: Any) -> None:
    with HarnessClient(mcp_live.console, mcp_live.agent_token) as hc:
        session = hc.create_session(role="writer", memory_policy="session")
        run = hc.create_run(session=session.id)
        run = hc.claim_run(run.id, owner="mcp-agent", lease_seconds=300)
        hc.transition_run(run.id, "running", expected_version=run.version, lease_owner="mcp-agent")
    offered: list[types.ElicitRequestURLParams] = []

    async def elicitation(context: Any, params: Any) -> types.ElicitResult:
        offered.append(params)
        return types.ElicitResult(action="accept")

    async def ask() -> dict[str, Any]:
        async with mcp_live.client(elicitation=elicitation) as client:
            result = await client.call_tool("request_approval", {
                "run_id": run.id, "tool": "publish_chapter", "arguments": {"chapter": 3},
                "idempotency_key": "publish-3", "lease_owner": "mcp-agent", "reason": "chapter 3 is ready"})
            assert not result.is_error and result.structured_content is not None, result.content
            return result.structured_content

    asked = run_async(ask())  # the MCP session ends here
    url = asked["console_url"]
    assert asked["status"] == "pending" and asked["elicitation"] == "accept"
    assert [(o.mode, o.url) for o in offered] == [("url", url)]

    login(page, "mcp-reviewer")
    page.goto(url)
    expect(page.locator("#approval-status")).to_have_text("pending")
    page.click("#approve")
    expect(page.locator("#approval-status")).to_have_text("approved")

    async def read() -> dict[str, Any]:
        async with mcp_live.client() as client:  # a new MCP session, as after a reconnect
            result = await client.call_tool("approval_status", {"approval_id": asked["id"]})
            assert not result.is_error and result.structured_content is not None, result.content
            return result.structured_content

    decided = run_async(read())
    assert (decided["status"], decided["decided_by"], decided["console_url"]) == ("approved", "mcp-reviewer", url)
