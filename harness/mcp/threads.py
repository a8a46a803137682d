"""The ASGI process's one bound on Django threads, shared by the MCP tools and the push's reads (harness.push).

Tool calls, token lookups and the push's re-reads run Django on worker threads, each with its own database
connection: this bounds them (and the connections) however many MCP sessions and waiters are open. It lives apart
from harness.mcp.server so that the push's routes, which that server mounts, can use it without importing it back.
"""

import functools

import anyio

THREADS = 8


@functools.cache
def limiter() -> anyio.CapacityLimiter:
    """Made on first use, inside the server's event loop (anyio asks for a running one)."""
    return anyio.CapacityLimiter(THREADS)
