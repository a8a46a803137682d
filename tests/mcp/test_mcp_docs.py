"""docs/agents/mcp.md's table of tools is the server's: every tool, in order, with the REST endpoint and operation id
it is built from (harness.mcp.tools and the OpenAPI schema), so the page cannot tell of a mapping the code lost."""

import re

from harness.mcp.tools import TOOLS, openapi_schema, tools_of
from tests.subprocesses import ROOT

_ROW = re.compile(r"^\| `(\w+)` \| `(GET|POST) ([^`]+)` \| `(\w+)` \|$")


def test_the_pages_table_is_the_servers_mapping() -> None:
    page = (ROOT / "docs" / "agents" / "mcp.md").read_text()
    rows = [match.groups() for line in page.splitlines() if (match := _ROW.match(line))]
    tools = tools_of(openapi_schema())
    expected = []
    for spec in TOOLS:
        tool = tools[spec.name]
        path = tool.path
        for parameter, argument in spec.path_arguments.items():
            path = path.replace("{" + parameter + "}", "{" + argument + "}")
        expected.append((spec.name, tool.method, path, spec.operation_id))
    assert rows == expected
