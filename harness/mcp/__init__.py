"""The MCP server: each tool is one REST operation of /api/v1/, dispatched in-process through the same WSGI handler
and middleware as the REST call (harness.mcp.dispatch), with the tool's input schema read from the OpenAPI schema
(harness.mcp.tools). docs/agents/mcp.md has the table and the reasons."""
