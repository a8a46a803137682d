"""Reads of the tool registry (issue 32): every version of the projects' tools' schemas, one version, and the
version an approval was validated against. Scoped to the caller's projects like every read (runs_app.selectors)."""

from collections.abc import Sequence

from django.db.models import QuerySet

from harness.http.errors import NotFoundError
from runs_app.models import ToolSchema


def tool_schema_list(*, project_ids: Sequence[int]) -> QuerySet[ToolSchema]:
    return ToolSchema.objects.for_projects(project_ids).select_related("project")


def tool_schema_get(*, project_ids: Sequence[int], schema_id: int) -> ToolSchema:
    found = tool_schema_list(project_ids=project_ids).filter(pk=schema_id).first()
    if found is None:
        raise NotFoundError(f"Tool schema {schema_id} does not exist.")
    return found
