"""The tool registry (issue 32): each project's tools' declared argument schemas, versioned.

`tool_schema_register` is the one write, for every door (API, admin, the client's adapters through the API, the
demo's loader). Registering the schema the tool already has is a no-op that answers the current version; another
schema is the next version, and earlier versions stay, since approvals name the one they were validated against.
"""

from typing import Any

from django.db import IntegrityError, transaction

from harness.actors import Actor
from harness.audit import audit_record
from harness.canonical import digest
from harness.http.errors import ConflictError, ValidationFailed
from harness.models import Project
from runs_app.models import ToolSchema
from runs_app.tool_schemas import SCHEMA_INVALID, schema_problem


def tool_schema_register(
    *, project: Project | int, tool: str, schema: dict[str, Any], actor: Actor
) -> tuple[ToolSchema, bool]:
    """Declare `schema` as `tool`'s argument schema in `project`: (the version, whether it is new).

    The schema must be a valid JSON Schema of an object (400 `schema_invalid` naming why). The same schema as
    the tool's current version (compared canonically: key order does not matter) is that version again,
    nothing written; another one is written as the next version and audited (`tool_schema.registered`). Two
    registrations of different schemas racing for the same version: one stands, the other is 409
    `version_conflict` (ask again). One transaction; two statements when nothing changes, four when it does.
    """
    tool = tool.strip()
    if not tool:
        raise ValidationFailed("A tool schema names its tool.", code="invalid", field="tool")
    problem = schema_problem(schema)
    if problem:
        raise ValidationFailed(problem, code=SCHEMA_INVALID, field="schema")
    project_id = project if isinstance(project, int) else project.pk
    schema_digest = digest(schema)
    with transaction.atomic():
        current = ToolSchema.objects.filter(project_id=project_id, tool=tool).order_by("-version").first()
        if current is not None and current.schema_digest == schema_digest:
            return current, False
        try:
            with transaction.atomic():
                registered = ToolSchema.objects.create(
                    project_id=project_id, tool=tool, version=(current.version + 1) if current else 1,
                    schema=schema, schema_digest=schema_digest, registered_by=actor.label)
        except IntegrityError:
            raise ConflictError(f"Another schema of {tool} was registered at the same time: ask again.",
                                code="version_conflict") from None
        audit_record(project=project_id, actor=actor, action="tool_schema.registered", target=registered,
                     data={"tool": tool, "version": registered.version, "digest": schema_digest})
        return registered, True
