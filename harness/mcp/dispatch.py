"""A tool call as the REST call it is: a WSGI request built from the tool's arguments and handed to the same
handler gunicorn calls (harness.http.handlers.HarnessWSGIHandler), in this process.

So the call takes every step a REST call takes, from the same functions: the body limits, the Idempotency-Key's
replay and reservation, the token's lookup and may-call rules, the throttle, tenancy, the serializer's validation,
the service, the error shape, the metrics and the access line (its request id starts `mcp-`). Nothing of an
operation is written twice: this module only translates arguments into a request and the reply into a result.
"""

import functools
import io
import json
import sys
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from harness.http.handlers import HarnessWSGIHandler
from harness.mcp.tools import Tool

# The proxy's headers a Caller passes on (below).
FORWARDED = ("x-forwarded-proto", "x-real-ip", "x-forwarded-for")


@dataclass(frozen=True)
class Caller:
    """What the MCP request that carried the tool call says about its sender, passed on to the REST request."""

    authorization: str  # the MCP request's own Authorization header: the inner call authenticates it afresh
    host: str
    scheme: str
    remote_addr: str
    # The proxy's headers (X-Forwarded-Proto, X-Real-IP, X-Forwarded-For) as it sent them to the MCP server, passed
    # on as it passes them to the web server: SECURE_PROXY_SSL_HEADER and HARNESS_CLIENT_IP_HEADER read them there.
    forwarded: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, request: Any) -> "Caller":
        """The sender of an ASGI (Starlette) request: the MCP server's tool calls and the push's waits alike."""
        client = request.client
        return cls(
            authorization=request.headers.get("authorization", ""), host=request.headers.get("host", "localhost"),
            scheme=request.url.scheme, remote_addr=client.host if client is not None else "127.0.0.1",
            forwarded=tuple((name, request.headers[name]) for name in FORWARDED if name in request.headers),
        )


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any
    request_id: str
    replayed: bool


class ArgumentRefused(Exception):
    """An argument the tool does not take, or a path id that is not one (answered 400, like the REST call)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


@functools.cache
def handler() -> HarnessWSGIHandler:
    """The process's one handler, built on first use (after django.setup), as a WSGI server builds its own."""
    return HarnessWSGIHandler()


def request_parts(tool: Tool, arguments: dict[str, Any]) -> tuple[str, str, bytes, str | None]:
    """The REST call's path, query string, JSON body and Idempotency-Key for these arguments."""
    known = set(tool.input_schema["properties"])
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise ArgumentRefused("unknown_field", f"{tool.spec.name} takes no argument {', '.join(unknown)}.")
    for argument in tool.spec.path_arguments.values():
        value = arguments.get(argument)
        # An id goes into the path, so it must be a plain number: a string could add path segments.
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ArgumentRefused("invalid", f"{argument} is a positive integer.")
    query = {name: _query_value(arguments[name]) for name in sorted(tool.query) if arguments.get(name) is not None}
    body = {name: arguments[name] for name in tool.body if name in arguments}
    content = json.dumps(body).encode() if tool.method == "POST" else b""
    key = arguments.get(tool.request_key) if tool.request_key else None
    return tool.rest_path(arguments), urlencode(query), content, key


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def call(tool: Tool, arguments: dict[str, Any], caller: Caller, *, derived_key: str | None) -> Reply:
    """Run the tool's REST call through the handler (blocking: the caller runs it on a worker thread)."""
    path, query, body, key = request_parts(tool, arguments)
    if tool.method == "POST" and key is None:
        key = derived_key
    return request(tool.method, path, query, body, key, caller)


def request(method: str, path: str, query: str, body: bytes, key: str | None, caller: Caller, *,
            prefix: str = "mcp") -> Reply:
    """One REST request through the handler, as the caller (its Authorization); `prefix` starts its request id."""
    request_id = f"{prefix}-{uuid.uuid4().hex[:24]}"
    host, _, port = caller.host.partition(":")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": host or "localhost",
        "SERVER_PORT": port or ("443" if caller.scheme == "https" else "80"),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": caller.remote_addr,
        "HTTP_HOST": caller.host,
        "HTTP_AUTHORIZATION": caller.authorization,
        "HTTP_ACCEPT": "application/json",
        "HTTP_USER_AGENT": f"harness-{prefix}",
        "HTTP_X_REQUEST_ID": request_id,
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": caller.scheme,
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if body:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(body))
    if key is not None:
        environ["HTTP_IDEMPOTENCY_KEY"] = key
    for name, value in caller.forwarded:
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    started: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        started["status"], started["headers"] = int(status.split(" ", 1)[0]), headers
        return lambda data: None

    chunks = handler()(environ, start_response)
    try:
        content = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    headers = {name.lower(): value for name, value in started["headers"]}
    try:
        parsed = json.loads(content) if content else {}
    except ValueError:
        parsed = {"detail": content.decode(errors="replace")}
    return Reply(status=started["status"], body=parsed, request_id=headers.get("x-request-id", request_id),
                 replayed=headers.get("idempotent-replayed") == "true")
