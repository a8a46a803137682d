"""The MCP server over streamable HTTP (the `mcp` SDK's low-level Server): the token verifier, the tool list, and
each tool call handed to harness.mcp.dispatch.

1. Every HTTP request to /mcp passes the SDK's bearer middleware, which asks `HarnessTokenVerifier`: the same
   one-statement lookup as the API (harness.http.auth.token_lookup), so an unknown, revoked or expired token is 401
   before any MCP message is read, and a session stays bound to the token that opened it.
2. `tools/list` answers the tools of harness.mcp.tools, their input schemas read from the OpenAPI schema at start.
3. `tools/call` builds the REST request from the arguments and the MCP request's own Authorization header, runs it
   through the WSGI handler on a worker thread, and answers its JSON: a 2xx as the result, a 4xx or 5xx as a tool
   error (`isError`) whose structured content is the REST error body with its `status` and `code`.
4. `request_approval` adds the approval's console page (`console_url`) and, when the client declared URL-mode
   elicitation, asks it to open the page; the approval is already durable, whatever the client answers.
"""

import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from django.conf import settings
from django.db import close_old_connections
from django.urls import reverse
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.routing import Mount

from harness.http.auth import token_lookup
from harness.mcp import dispatch
from harness.mcp.threads import limiter
from harness.mcp.tools import Tool, openapi_schema, tools_of
from harness.models import ApiToken
from harness.ops import logs
from harness.ops.metrics import MCP_TOOL_CALLS
from harness.push.hub import PushHub
from harness.push.routes import push_routes

log = logging.getLogger("harness.mcp")

MCP_PATH = "/mcp"


def _lookup(secret: str) -> ApiToken | None:
    close_old_connections()  # as every request's start does (request_started)
    try:
        return token_lookup(ApiToken.hash_secret(secret))
    finally:
        close_old_connections()


class HarnessTokenVerifier:
    """The SDK's TokenVerifier over this service's API tokens (agent tokens and personal tokens)."""

    async def verify_token(self, token: str) -> AccessToken | None:
        found = await anyio.to_thread.run_sync(_lookup, token, limiter=limiter())
        if found is None:
            return None
        return AccessToken(token=token, client_id=f"harness-token:{found.pk}", scopes=[found.role or found.kind],
                           subject=found.project.slug if found.project is not None else None)


def console_base(configured: str, caller: dispatch.Caller) -> str:
    """Where the console is: the one configured (`manage.py mcp --console-url`, else HARNESS_CONSOLE_URL), else the
    origin the MCP request came to (behind the proxy that routes /mcp here, that is the console's own)."""
    return (configured or settings.HARNESS_CONSOLE_URL or f"{caller.scheme}://{caller.host}").rstrip("/")


def _caller(ctx: ServerRequestContext[Any, Any]) -> dispatch.Caller:
    request = ctx.request
    if request is None:
        raise MCPError(types.INVALID_REQUEST, "This server takes tool calls over streamable HTTP only.")
    return dispatch.Caller.of(request)


def derived_key(ctx: ServerRequestContext[Any, Any]) -> str:
    """A write's Idempotency-Key when the client gave none: its MCP session and request id, so a retry of the same
    MCP request (the same id in the same session) replays the first reply and any other call is new."""
    request = ctx.request
    session = request.headers.get("mcp-session-id") if request is not None else None
    if not session or ctx.request_id is None:
        return f"mcp:{uuid.uuid4().hex}"  # no session to tie a retry to: this call only
    return f"mcp:{session}:{ctx.request_id}"


def _result(reply: dispatch.Reply) -> types.CallToolResult:
    body = reply.body
    structured = body if isinstance(body, dict) else {"results": body}
    if reply.status >= 400:
        structured = {"status": reply.status, **structured}
        code = structured.get("code", "error")
        detail = structured.get("detail", "")
        text = f"HTTP {reply.status} {code}: {detail}"
    else:
        text = json.dumps(structured, default=str)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured,
                                is_error=reply.status >= 400)


def _refused(status: int, code: str, detail: str) -> types.CallToolResult:
    return _result(dispatch.Reply(status=status, body={"code": code, "detail": detail}, request_id="",
                                  replayed=False))


async def _offer_console(ctx: ServerRequestContext[Any, Any], approval_id: int, url: str) -> str:
    """Ask a client that declared URL-mode elicitation to open the approval's page; what it answered, or
    `unsupported`. The approval does not depend on it: it is decided in the console, whenever."""
    capabilities = ctx.session.client_capabilities
    if capabilities is None or capabilities.elicitation is None or capabilities.elicitation.url is None:
        return "unsupported"
    try:
        answer = await ctx.session.elicit_url(
            f"Approval {approval_id} waits for a reviewer's decision in the console.", url,
            f"approval-{approval_id}", related_request_id=ctx.request_id)
    except MCPError:
        return "unsupported"  # no back-channel on this connection
    return str(answer.action)


class HarnessMCP:
    def __init__(self, tools: dict[str, Tool], *, console_url: str = "") -> None:
        self.tools = tools
        self.console_url = console_url
        self.server: Server[Any] = Server(
            "harness-console", version="1", title="Harness Console",
            instructions="Durable state for agent work: memory, session items, approvals, checkpoints. Each tool "
                         "is one REST operation of /api/v1/ under your token's project.",
            on_list_tools=self.list_tools, on_call_tool=self.call_tool,
        )
        # Answer the 2026 protocol's discovery probe with "not here": clients fall back to the session-based
        # handshake, whose session id the derived Idempotency-Keys and the URL elicitation need.
        self.server.add_request_handler("server/discover", types.RequestParams, self._no_discover)

    async def _no_discover(self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> Any:
        raise MCPError(types.METHOD_NOT_FOUND, "server/discover: this server speaks the session handshake.")

    async def list_tools(self, ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=tool.spec.name, description=tool.spec.description, input_schema=tool.input_schema)
            for tool in self.tools.values()
        ])

    async def call_tool(self, ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = self.tools.get(params.name)
        if tool is None:
            return _refused(404, "unknown_tool", f"No tool {params.name}.")
        caller = _caller(ctx)
        arguments = dict(params.arguments or {})
        try:
            reply = await anyio.to_thread.run_sync(
                lambda: dispatch.call(tool, arguments, caller, derived_key=derived_key(ctx)), limiter=limiter())
        except dispatch.ArgumentRefused as refused:
            MCP_TOOL_CALLS.labels(tool=tool.spec.name, status="400").inc()
            return _refused(400, refused.code, refused.detail)
        MCP_TOOL_CALLS.labels(tool=tool.spec.name, status=str(reply.status)).inc()
        with logs.scope(request_id=reply.request_id):
            log.info("mcp %s %s %s %s", tool.spec.name, tool.method, tool.path, reply.status)
        if tool.spec.console_link and reply.status < 400 and isinstance(reply.body, dict) and "id" in reply.body:
            url = console_base(self.console_url, caller) + reverse("runs:approval_detail", args=[reply.body["id"]])
            reply.body["console_url"] = url
            if tool.spec.name == "request_approval":
                reply.body["elicitation"] = await _offer_console(ctx, reply.body["id"], url)
        return _result(reply)


def mcp_app(*, console_url: str = "") -> Starlette:
    """The ASGI app of this process: /mcp (and the protected-resource metadata the SDK adds for its bearer auth),
    and beside it the push's waits and the desk's stream (harness.push.routes), outside the SDK's bearer
    middleware: each wait's REST read authenticates the token itself, so it is looked up once, not twice."""
    base = (console_url or settings.HARNESS_CONSOLE_URL or "http://127.0.0.1:8000").rstrip("/")
    mcp = _mcp_only(console_url, base)
    hub = PushHub()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.router.lifespan_context(mcp):
            try:
                yield
            finally:
                await hub.stop()

    app = Starlette(routes=[*push_routes(frozenset({base})), Mount("", app=mcp)], lifespan=lifespan)
    app.state.push_hub = hub
    return app


def _mcp_only(console_url: str, base: str) -> Starlette:
    harness = HarnessMCP(tools_of(openapi_schema()), console_url=console_url)
    return harness.server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        auth=AuthSettings(issuer_url=AnyHttpUrl(base), resource_server_url=AnyHttpUrl(base + MCP_PATH),
                          validate_token_resource=False),
        token_verifier=HarnessTokenVerifier(),
        # The bearer token is the authority (a page a rebinding attack loads has none); the REST call each tool
        # makes checks the Host against ALLOWED_HOSTS as any API call does.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
