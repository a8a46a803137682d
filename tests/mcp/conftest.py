"""The MCP server against a live console: pytest-django's live_server (the console, for Chromium and the REST
client) and the MCP server's own ASGI app under uvicorn in a thread, on the suite's PostgreSQL. Each test gets an
agent token of a fresh project, a second project with its own token, and a reviewer and an operator with personal
tokens. The tests talk to it with the `mcp` client library over streamable HTTP (asyncio.run on a thread of its own:
tests.client.conftest.run_async)."""

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client

from harness.mcp.server import mcp_app
from harness.models import Project
from tests import factories


@dataclass
class McpLive:
    console: str  # the live console's URL
    url: str  # the MCP endpoint
    project: Project
    agent_token: str
    other_project: Project
    other_token: str
    reviewer_token: str
    operator_token: str
    push_hub: Any = None  # the server's harness.push hub (tests look at its waiters and its connections)

    @asynccontextmanager
    async def client(self, token: str | None = None, *, elicitation: ElicitationFnT | None = None
                     ) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {token or self.agent_token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http, \
                Client(streamable_http_client(self.url, http_client=http), elicitation_callback=elicitation) as client:
            yield client


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def mcp_live(live_server: Any, transactional_db: Any, settings: Any) -> Iterator[McpLive]:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    project = factories.make_project("mcpco")
    _, agent_token = factories.make_agent_token(project, name="mcp-agent")
    other = factories.make_project("otherco")
    _, other_token = factories.make_agent_token(other, name="other-agent")
    reviewer = factories.make_user("mcp-reviewer", role="reviewer", projects=[project])
    _, reviewer_token = factories.make_personal_token(reviewer)
    operator = factories.make_user("mcp-operator", role="operator", projects=[project])
    _, operator_token = factories.make_personal_token(operator)

    port = _free_port()
    app = mcp_app(console_url=live_server.url)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, name="mcp-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the MCP server did not start"
        time.sleep(0.05)
    try:
        yield McpLive(console=live_server.url, url=f"http://127.0.0.1:{port}/mcp", project=project,
                      agent_token=agent_token, other_project=other, other_token=other_token,
                      reviewer_token=reviewer_token, operator_token=operator_token, push_hub=app.state.push_hub)
    finally:
        server.should_exit = True
        thread.join(timeout=15)
