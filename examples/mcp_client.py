"""An MCP client on Harness Console: lists the tools, searches memory and requests an approval. Runs offline.

It uses the `mcp` client library over streamable HTTP with a bearer token, as any MCP client (Claude Desktop, an
IDE, an agent framework) would; the run it asks for approval on is made through the REST client first, since an
approval belongs to a run. Run it against a local server:

    bin/start                                                   # in one terminal: console :8000, MCP :8001/mcp
    export HARNESS_URL=http://127.0.0.1:8000
    export HARNESS_TOKEN=$(DEBUG=1 .venv/bin/python manage.py create_agent_token --project novelforge \\
                           --name mcp-example | tail -1)
    .venv/bin/python examples/mcp_client.py

`HARNESS_MCP_URL` names the MCP endpoint; without it, HARNESS_URL's host on the next port, at /mcp (bin/start's
layout; behind bin/serve's proxy it is HARNESS_URL + /mcp). Approve the request at the printed console URL (log in
as `reviewer` / `reviewer-demo`), then `approval_status` in any later MCP session reads the decision.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any
from urllib.parse import urlsplit

import httpx2
from harness_client import HarnessClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def mcp_url(harness_url: str) -> str:
    explicit = os.environ.get("HARNESS_MCP_URL")
    if explicit:
        return explicit
    url = urlsplit(harness_url)
    return f"{url.scheme}://{url.hostname}:{(url.port or 80) + 1}/mcp"


def running_run(harness_url: str, token: str) -> int:
    """A session and a running run (claimed by this example) to ask the approval on, through the REST client."""
    with HarnessClient(harness_url, token) as hc:
        session = hc.create_session(role="writer", memory_policy="session")
        run = hc.create_run(session=session.id)
        run = hc.claim_run(run.id, owner="mcp-example", lease_seconds=300)
        run = hc.transition_run(run.id, "running", expected_version=run.version, lease_owner="mcp-example")
        return run.id


async def main(harness_url: str, token: str) -> dict[str, Any]:
    run_id = running_run(harness_url, token)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http, \
            Client(streamable_http_client(mcp_url(harness_url), http_client=http)) as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(tool.name for tool in tools.tools))

        found = await client.call_tool("memory_search", {"scope": "project", "q": "lighthouse keeper", "k": 3})
        records = (found.structured_content or {}).get("results", [])
        print(f"memory_search: {len(records)} record(s)", *[f"  #{r['id']} {r['content'][:60]}" for r in records],
              sep="\n")

        asked = await client.call_tool("request_approval", {
            "run_id": run_id, "tool": "publish_chapter", "arguments": {"chapter": 3, "title": "The Lighthouse"},
            "idempotency_key": f"publish-{uuid.uuid4()}", "reason": "Chapter 3 is ready to publish.",
            "lease_owner": "mcp-example",
        })
        approval = asked.structured_content or {}
        if asked.is_error:
            raise SystemExit(f"request_approval refused: {approval}")
        print(f"approval {approval['id']} is {approval['status']}: decide it at {approval['console_url']}")
        return approval


if __name__ == "__main__":
    asyncio.run(main(os.environ.get("HARNESS_URL", "http://127.0.0.1:8000"), os.environ["HARNESS_TOKEN"]))
