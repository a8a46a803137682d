"""mcp [--bind HOST:PORT]: serves the MCP server (harness.mcp) over streamable HTTP at /mcp, in one ASGI process.

bin/start runs it beside the console (PORT + 1), bin/serve as its `mcp` role (MCP_BIND); docs/agents/mcp.md says why
it is a process of its own rather than a part of the WSGI server.
"""

from typing import Any

import uvicorn
from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.mcp.server import mcp_app
from harness.ops.tracing import tracing_configure


class Command(BaseCommand):
    help = "Serve the MCP server (streamable HTTP at /mcp)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bind", default="127.0.0.1:8001", help="HOST:PORT to listen on (127.0.0.1:8001).")
        parser.add_argument("--console-url", default="",
                            help="The console's address, for an approval's console_url (default: HARNESS_CONSOLE_URL, "
                                 "else the origin each MCP request came to).")

    def handle(self, *args: Any, **options: Any) -> None:
        host, _, port = options["bind"].rpartition(":")
        if not host or not port.isdigit():
            raise CommandError("--bind is HOST:PORT.")
        tracing_configure()  # as config.wsgi does, before the handler builds its chains
        self.stdout.write(f"MCP: http://{host}:{port}/mcp")
        # One process, one event loop: the streams of every session wait on it, and each tool call runs Django
        # on one of harness.mcp.server's worker threads. uvicorn's own access log stays off: each tool call's
        # REST request has its line (harness.ops.observe), and the MCP server one per call (harness.mcp).
        uvicorn.run(mcp_app(console_url=options["console_url"]), host=host, port=int(port), log_level="warning",
                    access_log=False, timeout_graceful_shutdown=5)
