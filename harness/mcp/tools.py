"""The MCP tools: each is one operation of the REST API, named by its OpenAPI operation id.

The table below is the whole mapping (docs/agents/mcp.md prints it); a tool's input schema is built from the
operation's OpenAPI description (drf-spectacular, generated from the same serializers that validate the REST call),
so the two cannot drift: a field added to a serializer is a tool argument on the next start.
"""

from dataclasses import dataclass, field
from typing import Any

# The header argument of every write tool; a body that already has a field of this name (an approval's
# `idempotency_key` is the action's own key) takes REQUEST_KEY_FALLBACK for the header instead.
REQUEST_KEY = "idempotency_key"
REQUEST_KEY_FALLBACK = "request_idempotency_key"
_REQUEST_KEY_HELP = ("The request's Idempotency-Key (1 to 200 characters): the same key and arguments replay the "
                     "first reply. Without one, the server derives one from the MCP session and request id, so "
                     "only a retry of the same MCP request replays.")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    operation_id: str
    description: str
    # The operation's path parameters by the tool's argument for each (the REST path's `{id}` is `run_id`).
    path_arguments: dict[str, str] = field(default_factory=dict)
    # The answer carries `console_url`, the approval's page in the console.
    console_link: bool = False


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("memory_search", "memory_retrieve",
             "Search long-term memory: the active, fresh records of one scope, best first; `q` is a full-text "
             "query (websearch syntax)."),
    ToolSpec("memory_add", "memory_records_write",
             "Propose a memory record; the project's write policy accepts, merges, holds it for review or rejects "
             "it (422, with the reason)."),
    ToolSpec("memory_supersede", "memory_records_supersede",
             "Replace a record you wrote with a new version (`content`), or let another live record stand "
             "(`replacement_id`); `expected_version` is the version you read.", {"id": "record_id"}),
    ToolSpec("memory_delete", "memory_records_delete",
             "Delete a memory record (operators' personal tokens; an agent token is refused 403 "
             "operator_required).", {"id": "record_id"}),
    ToolSpec("session_items_append", "session_items_append",
             "Append items to a session's conversation.", {"id": "session_id"}),
    ToolSpec("session_items_read", "session_items_list",
             "Read a session's items, oldest first, a page at a time (`cursor` from the previous page's `next`).",
             {"id": "session_id"}),
    ToolSpec("request_approval", "approvals_request",
             "Ask a person to approve an action of a run: a durable approval request (it outlives this MCP "
             "session); the answer has its id and `console_url`, where a reviewer decides.", {"id": "run_id"},
             console_link=True),
    ToolSpec("approval_status", "approvals_read",
             "Read an approval request: its status (pending, approved, rejected, expired, cancelled), who decided "
             "and why.", {"id": "approval_id"}, console_link=True),
    ToolSpec("checkpoint", "checkpoints_read", "Read a checkpoint: its state, cursor and fingerprints.",
             {"id": "checkpoint_id"}),
    ToolSpec("lineage", "checkpoints_lineage", "Read a checkpoint's lineage: its ancestors up to the root.",
             {"id": "checkpoint_id"}),
)
BY_NAME = {spec.name: spec for spec in TOOLS}


@dataclass(frozen=True)
class Tool:
    """A tool made from its operation: where the REST call goes and what the MCP client may send."""

    spec: ToolSpec
    method: str
    path: str  # the OpenAPI path, `{id}` included
    query: frozenset[str]
    body: frozenset[str]
    request_key: str | None  # the argument carrying the Idempotency-Key (writes only)
    input_schema: dict[str, Any]

    def rest_path(self, arguments: dict[str, Any]) -> str:
        path = self.path
        for parameter, argument in self.spec.path_arguments.items():
            path = path.replace("{" + parameter + "}", str(arguments[argument]))
        return path


class SchemaMismatch(Exception):
    """A tool names an operation the OpenAPI schema does not have, or a parameter it does not take."""


def _resolved(node: Any, components: dict[str, Any], depth: int = 0) -> Any:
    """The schema with every `$ref` to a component replaced by the component (tool clients want one object)."""
    if depth > 20:
        raise SchemaMismatch("The schema's references nest deeper than 20.")
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            return _resolved(components[ref.rsplit("/", 1)[1]], components, depth + 1)
        return {key: _resolved(value, components, depth + 1) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolved(value, components, depth + 1) for value in node]
    return node


def _operation(schema: dict[str, Any], operation_id: str) -> tuple[str, str, dict[str, Any]]:
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                return path, method.upper(), operation
    raise SchemaMismatch(f"No operation {operation_id} in the OpenAPI schema.")


def tool_of(spec: ToolSpec, schema: dict[str, Any]) -> Tool:
    """The tool for one spec from the OpenAPI schema: its path parameters (renamed), its query parameters and its
    JSON body's fields as the arguments, plus the Idempotency-Key argument of a write."""
    components = schema.get("components", {}).get("schemas", {})
    path, method, operation = _operation(schema, spec.operation_id)
    properties: dict[str, Any] = {}
    required: list[str] = []
    query: set[str] = set()
    for parameter in operation.get("parameters", []):
        name, where = parameter["name"], parameter["in"]
        if where == "path":
            if name not in spec.path_arguments:
                raise SchemaMismatch(f"{spec.name}: the path parameter {name} has no argument.")
            argument = spec.path_arguments[name]
            properties[argument] = {**_resolved(parameter.get("schema", {}), components),
                                    "description": parameter.get("description") or f"The {argument[:-3]}'s id."}
            required.append(argument)
        elif where == "query":
            properties[name] = {**_resolved(parameter.get("schema", {}), components),
                                **({"description": parameter["description"]} if parameter.get("description") else {})}
            query.add(name)
            if parameter.get("required"):
                required.append(name)
    missing = set(spec.path_arguments) - {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
    if missing:
        raise SchemaMismatch(f"{spec.name}: {spec.operation_id} has no path parameter {sorted(missing)}.")
    body: set[str] = set()
    content = operation.get("requestBody", {}).get("content", {})
    if content:
        body_schema = _resolved(content["application/json"]["schema"], components)
        for name, prop in body_schema.get("properties", {}).items():
            if name in properties:
                raise SchemaMismatch(f"{spec.name}: {name} is both a parameter and a body field.")
            properties[name] = prop
            body.add(name)
        required.extend(body_schema.get("required", []))
    request_key = None
    if method == "POST":
        request_key = REQUEST_KEY_FALLBACK if REQUEST_KEY in properties else REQUEST_KEY
        properties[request_key] = {"type": "string", "minLength": 1, "maxLength": 200,
                                   "description": _REQUEST_KEY_HELP}
    input_schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return Tool(spec=spec, method=method, path=path, query=frozenset(query), body=frozenset(body),
                request_key=request_key, input_schema=input_schema)


def tools_of(schema: dict[str, Any]) -> dict[str, Tool]:
    return {spec.name: tool_of(spec, schema) for spec in TOOLS}


def openapi_schema() -> dict[str, Any]:
    """The API's OpenAPI schema, as /api/schema/ serves it (generated from the serializers)."""
    from drf_spectacular.generators import SchemaGenerator

    # drf-spectacular leaves its generator unannotated.
    generator = SchemaGenerator()  # type: ignore[no-untyped-call]
    schema: dict[str, Any] = generator.get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    return schema
